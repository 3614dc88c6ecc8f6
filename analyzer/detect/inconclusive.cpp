#include "detect/detect_stages.h"

#include <algorithm>
#include <cstdio>

namespace scalana {

using namespace detect_internal;

// With computation causes but none of them clear of sampling noise, the
// answer is that the data cannot tell, and what run would: never the
// noisiest vertex as the cause.
std::string Inconclusive(const std::vector<RootCause> &causes, const Run &big) {
  const RootCause *best = nullptr;
  for (const RootCause &c : causes) {
    if (!c.communication && !c.thin_data)
      return {};
    if (c.thin_data && (!best || c.signal_to_noise > best->signal_to_noise))
      best = &c;
  }
  if (!best)
    return {};
  char text[512];
  std::snprintf(text, sizeof text,
                "inconclusive: no computation cause stands out of the sampling noise; the "
                "strongest rests on %.0f samples over its median on rank %d (%.1f standard "
                "deviations, %.0f needed). A run about %.0fx longer (about %.0f s at %d ranks), or "
                "sampling %.0fx faster where the machine allows (--hz), would tell",
                best->evidence_samples, best->culprit_rank, best->signal_to_noise, kSettledSigma,
                best->run_longer, best->run_longer * std::max(big.meta.wall_time, 0.0),
                big.world_size, best->run_longer);
  return text;
}

} // namespace scalana
