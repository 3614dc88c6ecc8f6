// Contention is not a cause (docs/detect.md §5.3). When ranks
// share cores, every rank's waits grow by the time the ranks it waits for
// spent runnable but not running, and every loop's CPU time grows with the
// caches and memory bandwidth it shares: no line of the program would
// change either. Where a cause's growth is no more than that, it is the
// machine's, listed apart without savings or waits; where it is more, only
// the part above the machine's growth is its cost.
#include "detect/detect_stages.h"
#include "report/report_common.h"

#include <algorithm>
#include <cmath>

namespace scalana {

using namespace detect_internal;
using report_common::Fmt;

namespace {

// The median over RUN's ranks of the main thread's run delay, in seconds.
double MedianRunDelay(const Run &run) {
  std::vector<double> d;
  for (const RankTime &t : run.rank_time)
    if (t.kernel_measured())
      d.push_back(t.run_delay);
  return d.empty() ? 0 : Median(std::move(d));
}

// Mean time per rank of S over the ranks that run it (0 if none).
double PerRank(const Psg &psg, const Run &run, const VertexSeries &s) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < run.nslots(); ++i)
    if (double t = ExclusiveTime(psg, s, i); t > 0)
      sum += t, ++n;
  return n ? sum / n : 0;
}

// How much the machine alone makes computation grow from SMALL to BIG
// beyond the expected scaling (EXPECTED, the ratio the model expects), as
// seen by every computation vertex but OWN: the median of their growth
// ratios, each weighing its time at the smallest scale, over the vertices
// with at least kMinSamples there. Weighted so, vertices that grow for
// reasons of their own (the causes we look for, small at the smallest
// scale) cannot move it; the large ones, which every loop's slowdown shows
// in, do. Without OWN, so a cause never explains itself away (an Amdahl
// section that is most of a small program's computation). NaN with fewer
// than kMinVertices such vertices: no machine to tell from the program.
constexpr double kMinSamples = 20;
constexpr size_t kMinVertices = 3;

double MachineGrowth(const Psg &psg, const Run &small, const Run &big, double expected,
                     const CommLayer &layer, VertexId own) {
  std::vector<std::pair<double, double>> ratio_weight;
  double total = 0;
  const double floor = small.sample_rate > 0 ? kMinSamples / small.sample_rate : 0.02;
  for (const VertexSeries &s : small.series) {
    const Vertex &x = psg.vertex(s.vertex);
    if (s.vertex == own || !s.own_data || x.kind == VertexKind::Mpi || layer.Contains(s.vertex))
      continue;
    const VertexSeries *b = big.Find(s.vertex);
    const double t_small = PerRank(psg, small, s);
    if (!b || t_small < floor)
      continue;
    ratio_weight.push_back({PerRank(psg, big, *b) / (t_small * expected), t_small});
    total += t_small;
  }
  if (ratio_weight.size() < kMinVertices)
    return NAN;
  std::sort(ratio_weight.begin(), ratio_weight.end());
  double acc = 0;
  for (auto [ratio, weight] : ratio_weight)
    if ((acc += weight) >= total / 2)
      return ratio;
  return ratio_weight.back().first;
}

const NonScalableVertex *FindNonScalableOf(const DetectResult &res, VertexId v) {
  for (const NonScalableVertex &ns : res.non_scalable)
    if (ns.vertex == v)
      return &ns;
  return nullptr;
}

} // namespace

void SeparateContention(const Psg &psg, const std::vector<Run> &runs, size_t smallest,
                        size_t largest, bool shared_cores, const DetectOptions &opts,
                        const CommLayer &layer, DetectResult &res) {
  const Run &small = runs[smallest], &big = runs[largest];
  if (small.world_size == big.world_size || !shared_cores)
    return;
  const double expected = std::pow(double(big.world_size) / small.world_size, res.expected_slope);
  // What a rank's wait can be made of while the ranks it waits for are
  // runnable but not running: up to their run delay. (Not its growth: at
  // one rank there is nothing to wait for, whatever the delay.)
  const double delay = MedianRunDelay(big);
  const double hz = big.sample_rate;
  const std::string sharing = "(runnable but not running " + Fmt("%.3f", delay) +
                              " s per rank at " + std::to_string(big.world_size) + " ranks, " +
                              Fmt("%.3f", MedianRunDelay(small)) + " s at " +
                              std::to_string(small.world_size) + ")";

  std::vector<RootCause> kept;
  for (RootCause &rc : res.root_causes) {
    // What of the cost the machine explains: MACHINE_PART seconds, for the
    // reason WHY; when it is all, LEAD says what grew no more than that.
    double machine_part = 0;
    std::string why, lead;
    if (rc.communication && !rc.io && delay > 0 &&
        !TrafficExplains(rc.growth, res.scaling_used, rc.cost_seconds)) {
      // A rank waits at a call for the ranks it needs; while those wait for
      // a core, its wait grows by as much, up to their run delay. (Where the
      // traffic per rank grows enough to matter, the program sends more:
      // its own loss, whatever the cores add.)
      machine_part = std::min(rc.cost_seconds, delay);
      lead = "its wait grows by " + Fmt("%.3f", rc.cost_seconds) + " s per rank, no more than ";
      why = "the time the ranks it waits for spent waiting for a core while they shared cores " +
            sharing + " (" + rc.explanation + ")";
    } else if (const NonScalableVertex *ns = FindNonScalableOf(res, rc.vertex);
               ns && ns->merged.size() == runs.size() && !rc.communication &&
               !rc.thread_imbalance && rc.non_scalable && !rc.abnormal) {
      // Grows alike on every rank (not abnormal anywhere): held against what
      // the median other computation vertex grows by on the same machine.
      const double machine = MachineGrowth(psg, small, big, expected, layer, rc.vertex);
      // Too few other vertices to tell the machine's growth from the
      // code's (HPCCG's sparse mat-vec, most of its computation): kept, but
      // after every cause of one rank and never "found" alone.
      rc.alike_on_shared_cores = !std::isfinite(machine);
      const double t_small = ns->merged[smallest].second, t_big = ns->merged[largest].second;
      const double machine_big = t_small * expected * (std::isfinite(machine) ? machine : 1);
      const double own = std::max(0.0, t_big - machine_big);
      const double noise =
          hz > 0 ? opts.noise_sigma * std::sqrt(machine_big * hz) / hz : NoiseFloor(big, opts);
      machine_part = own <= noise ? rc.cost_seconds : std::max(0.0, rc.cost_seconds - own);
      lead = "its time per rank grows x" + Fmt("%.2f", t_small > 0 ? t_big / t_small : 0) +
             " on every rank alike, no more than ";
      why = "the program's computation as a whole (x" +
            Fmt("%.2f", (std::isfinite(machine) ? machine : 1) * expected) +
            ", the median other computation vertex) while the ranks shared cores " + sharing +
            ": caches, memory bandwidth and cores shared, not this code";
    }
    // Below what the report prints, or a twentieth of the cost, the
    // machine's part is not worth a sentence.
    if (machine_part < std::max(1e-3, 0.05 * rc.cost_seconds))
      machine_part = 0;
    const double left = rc.cost_seconds - machine_part;
    const bool machine_only =
        machine_part > 0 && left <= std::max(opts.min_wait, opts.minor_share * rc.wall_time);
    if (machine_only) {
      rc.contention = lead + why;
      rc.saved_seconds = 0;
      rc.waits_caused = 0;
      rc.waiting_ranks = 0;
      res.contention.push_back(std::move(rc));
      continue;
    }
    if (machine_part > 0) {
      rc.bounds.push_back("cost held to " + Fmt("%.3f s", left) + ": " +
                          Fmt("%.3f s", machine_part) + " of its growth is the machine's: " + why);
      rc.cost_seconds = left;
      rc.saved_seconds = std::min(rc.saved_seconds, left);
      rc.waits_caused = std::min(rc.waits_caused, left * std::max(rc.waiting_ranks, 1));
      if (hz > 0 && !rc.communication)
        SetSampleEvidence(rc, left, rc.median_time, hz);
    }
    kept.push_back(std::move(rc));
  }
  res.root_causes = std::move(kept);
  std::stable_sort(
      res.contention.begin(), res.contention.end(),
      [](const RootCause &a, const RootCause &b) { return a.cost_seconds > b.cost_seconds; });
}

} // namespace scalana
