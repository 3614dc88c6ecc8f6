#include "detect/detect_stages.h"

#include <algorithm>

namespace scalana {

void RankCauses(const DetectOptions &opts, std::vector<RootCause> &causes) {
  // Computation that explains waiting comes first; communication that
  // nothing explains after it (on an oversubscribed machine every wait grows
  // a little, and a found cause is the better answer). Thin evidence is not
  // ranked down: injected causes of bench-accuracy at 4.3-4.7 standard
  // deviations would then lose to waits, while noise winners reach 5; one
  // run's test cannot tell them apart (the series' can: not done yet).
  std::stable_sort(causes.begin(), causes.end(), [](const RootCause &a, const RootCause &b) {
    if (a.communication != b.communication)
      return b.communication;
    return a.cost_seconds > b.cost_seconds;
  });
  if (causes.size() > opts.top)
    causes.resize(opts.top);
}

} // namespace scalana
