#include "detect/detect_stages.h"

#include <algorithm>

namespace scalana {

void RankCauses(const DetectOptions &opts, DetectResult &res) {
  std::vector<RootCause> &causes = res.root_causes;
  // Computation that explains waiting comes first; communication that
  // nothing explains after it (on an oversubscribed machine every wait grows
  // a little, and a found cause is the better answer). Thin evidence is not
  // ranked down: injected causes of bench-accuracy at 4.3-4.7 standard
  // deviations would then lose to waits, while noise winners reach 5; one
  // run's test cannot tell them apart (the series' can: not done yet).
  // An I/O call is the rank's own work, not a wait for others: it ranks
  // with the computation, by cost.
  auto waits = [](const RootCause &c) { return c.communication && !c.io; };
  std::stable_sort(causes.begin(), causes.end(), [&](const RootCause &a, const RootCause &b) {
    if (waits(a) != waits(b))
      return waits(b);
    return a.cost_seconds > b.cost_seconds;
  });
  // Only what is reported is cut to --top: every non-scalable vertex was a
  // start and a problematic step (cut before backtracking, --top 3 and 50
  // named Kripke's causes in different orders).
  if (causes.size() > opts.top)
    causes.resize(opts.top);
  if (res.non_scalable.size() > opts.top)
    res.non_scalable.resize(opts.top);
}

} // namespace scalana
