#include "detect/detect_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace scalana {

using namespace detect_internal;

namespace {

// A computation cause stands out of its peers when it costs this many times
// the median of the next kPeers computation candidates by cost (root and
// minor causes; growth alike on every rank aside, being growth, not a
// rank's excess). Their costs are what one run's noise gives the vertices
// nearest it over their medians across ranks and threads: Poisson noise,
// and the scheduling of ranks and threads that share cores, which no
// sample count shows. Measured on public code on 2 cores (runs of 1.3-23 s
// at the largest scale; docs/detect.md §5.3): clean, HPCCG, LULESH, miniFE,
// NPB CG, PENNANT and Zeus-MP, the largest at 1.1-2.2x its next five;
// a loop injected in one rank at about 5% of its CPU time, 1.1-9.4x when
// it was first, from 5 to 70 samples of evidence.
constexpr double kStandOut = 2.5;
constexpr size_t kPeers = 5;
// Fewer candidates than this give no spread to judge by.
constexpr size_t kMinPeers = 2;

bool Computation(const RootCause &c) { return !c.communication && !c.io; }

// The median cost of the kPeers costliest computation candidates of RES
// other than BEST; *N how many there were.
double PeersMedian(const DetectResult &res, const RootCause *best, size_t *n) {
  std::vector<double> costs;
  for (const auto *list : {&res.root_causes, &res.minor_causes})
    for (const RootCause &c : *list)
      if (&c != best && Computation(c) && !c.alike_on_shared_cores)
        costs.push_back(c.cost_seconds);
  std::sort(costs.begin(), costs.end(), std::greater<>());
  if (costs.size() > kPeers)
    costs.resize(kPeers);
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
  char text[640];
  if (!res.root_causes.empty() && res.root_causes.front().alike_on_shared_cores) {
    const RootCause &c = res.root_causes.front();
    std::snprintf(text, sizeof text,
                  "inconclusive: the largest cause (%.3f s on rank %d) grows alike on every rank "
                  "while the ranks share cores, and no cause of one rank stands above it: growth "
                  "of the code's own cannot be told here from the machine's (caches, memory "
                  "bandwidth, cores shared). A run at one rank per core would tell",
                  c.cost_seconds, c.culprit_rank);
    return text;
  }
  for (const RootCause &c : res.root_causes) {
    if (c.communication && !c.io)
      return {};
    // Growth alike on every rank on shared cores is not an answer alone.
    if (c.alike_on_shared_cores)
      continue;
    if (Settled(c) && !solid)
      solid = &c;
    if (!Settled(c) && (!best || c.evidence_samples > best->evidence_samples))
      best = &c;
  }
  if (solid) {
    size_t peers = 0;
    const double median = PeersMedian(res, solid, &peers);
    if (peers < kMinPeers || solid->cost_seconds >= kStandOut * median)
      return {};
    // Sampling noise falls as the square root of the run's length; the
    // scheduling of shared cores may not fall at all, hence "about".
    const double longer =
        std::min(100.0, std::ceil(std::pow(kStandOut * median / solid->cost_seconds, 2)));
    std::snprintf(
        text, sizeof text,
        "inconclusive: the largest computation cause (%.3f s on rank %d) is within what "
        "the vertices nearest it show in this run (median %.3f s over the next %zu "
        "candidates; to stand out it needs %.1fx that): noise of sampling and of ranks and threads "
        "sharing cores. A run about %.0fx longer (about %.0f s at %d ranks), or at one "
        "rank per core, would tell",
        solid->cost_seconds, solid->culprit_rank, median, peers, kStandOut, longer,
        longer * std::max(big.meta.wall_time, 0.0), big.world_size);
    return text;
  }
  if (!best)
    return {};
  const double longer =
      std::min(100.0, std::max(best->run_longer,
                               std::ceil(kMinEvidence / std::max(best->evidence_samples, 1.0))));
  std::snprintf(text, sizeof text,
                "inconclusive: no computation cause stands out of the sampling noise; the "
                "strongest rests on %.0f samples over its median on rank %d (%.1f standard "
                "deviations; %.0f and %.0f samples needed). A run about %.0fx longer (about %.0f "
                "s at %d ranks), or sampling %.0fx faster where the machine allows (--hz), would "
                "tell",
                best->evidence_samples, best->culprit_rank, best->signal_to_noise, kSettledSigma,
                kMinEvidence, longer, longer * std::max(big.meta.wall_time, 0.0), big.world_size,
                longer);
  return text;
}

} // namespace scalana
