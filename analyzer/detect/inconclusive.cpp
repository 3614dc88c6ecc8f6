#include "detect/detect_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace scalana {

using namespace detect_internal;

namespace {

// A computation cause stands out of its peers when it costs this many times
// the median of the other computation candidates (root and minor causes).
// Their costs are what one run's noise gives every vertex over its median
// across the ranks and threads: Poisson noise, and the scheduling of ranks
// and threads that share cores, which no sample count shows. PENNANT, 1, 2
// and 4 ranks x 2 threads on 2 cores, --sampler perf, 2.6 s at 4 ranks:
// clean, the largest at 1.4x and 2.2x the others' median; a loop injected
// in one thread of the last rank (7% of its CPU time), 9.3-12.5x.
constexpr double kStandOut = 3;
// Fewer candidates than this give no spread to judge by.
constexpr size_t kMinPeers = 3;

bool Computation(const RootCause &c) { return !c.communication && !c.io; }

// The median cost of the computation candidates of RES other than BEST.
double PeersMedian(const DetectResult &res, const RootCause *best, size_t *n) {
  std::vector<double> costs;
  for (const auto *list : {&res.root_causes, &res.minor_causes})
    for (const RootCause &c : *list)
      if (&c != best && Computation(c))
        costs.push_back(c.cost_seconds);
  *n = costs.size();
  return costs.empty() ? 0 : Median(std::move(costs));
}

} // namespace

// With computation causes but none of them clear of sampling noise, or the
// clearest no larger than what every vertex shows, the answer is that the
// data cannot tell, and what run would: never the noisiest vertex as the
// cause. A communication cause is measured, not sampled: it is an answer.
std::string Inconclusive(const DetectResult &res, const Run &big) {
  const RootCause *best = nullptr, *solid = nullptr;
  for (const RootCause &c : res.root_causes) {
    if (c.communication && !c.io)
      return {};
    if (!c.thin_data && !solid)
      solid = &c;
    if (c.thin_data && (!best || c.signal_to_noise > best->signal_to_noise))
      best = &c;
  }
  char text[640];
  if (solid) {
    size_t peers = 0;
    const double median = PeersMedian(res, solid, &peers);
    if (peers < kMinPeers || solid->cost_seconds >= kStandOut * median)
      return {};
    // Sampling noise falls as the square root of the run's length; the
    // scheduling of shared cores may not fall at all, hence "about".
    const double longer =
        std::min(100.0, std::ceil(std::pow(kStandOut * median / solid->cost_seconds, 2)));
    std::snprintf(text, sizeof text,
                  "inconclusive: the largest computation cause (%.3f s on rank %d) is within what "
                  "every vertex shows in this run (median %.3f s over its %zu other candidates; "
                  "to stand out it needs %.0fx that): noise of sampling and of ranks and threads "
                  "sharing cores. A run about %.0fx longer (about %.0f s at %d ranks), or at one "
                  "rank per core, would tell",
                  solid->cost_seconds, solid->culprit_rank, median, peers, kStandOut, longer,
                  longer * std::max(big.meta.wall_time, 0.0), big.world_size);
    return text;
  }
  if (!best)
    return {};
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
