// Detect (paper Section IV) as the sequence of its stages (detect_stages.h),
// and the helpers the stages share.
#include "detect/detect.h"
#include "detect/detect_stages.h"
#include "detect/threads.h"
#include "ppg/rank_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace scalana {

using namespace detect_internal;

const char *ToString(MergeStrategy m) {
  switch (m) {
  case MergeStrategy::Max:
    return "max";
  case MergeStrategy::Mean:
    return "mean";
  case MergeStrategy::Median:
    return "median";
  case MergeStrategy::Cluster:
    return "cluster";
  }
  return "?";
}

const char *ToString(ScalingMode m) {
  switch (m) {
  case ScalingMode::Strong:
    return "strong";
  case ScalingMode::Weak:
    return "weak";
  case ScalingMode::Auto:
    return "auto";
  }
  return "?";
}

// ---------------------------------------------------------------- helpers

namespace detect_internal {

std::vector<double> TimesOverRanks(const Psg &psg, const Run &run, const VertexSeries &s) {
  std::vector<double> t(run.nslots());
  for (int i = 0; i < run.nslots(); ++i)
    t[i] = ExclusiveTime(psg, s, i);
  return t;
}

double NoiseFloor(const Run &run, const DetectOptions &opts) {
  if (opts.min_time >= 0)
    return opts.min_time;
  return run.sample_rate > 0 ? 2.0 / run.sample_rate : 0.01;
}

double NoiseFloor(const std::vector<Run> &runs, const DetectOptions &opts) {
  double floor = 1e300;
  for (const Run &r : runs)
    floor = std::min(floor, NoiseFloor(r, opts));
  return std::max(floor, 1e-9);
}

// MPI_Init and MPI_Finalize cost what the launcher and the MPI library's
// start-up and tear-down cost (more with oversubscription): no line of the
// program would change it, so they are never non-scalable or abnormal. Their
// time still counts in the rank totals.
bool IsStartupOrTeardown(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  return x.kind == VertexKind::Mpi &&
         (x.label == "MPI_Init" || x.label == "MPI_Init_thread" || x.label == "MPI_Finalize" ||
          x.label == "shmem_init" || x.label == "shmem_init_thread" || x.label == "start_pes" ||
          x.label == "shmem_finalize");
}

uint64_t StepKey(VertexId v, int rank, bool up) {
  return (uint64_t(uint32_t(v)) << 32) ^ (uint64_t(uint32_t(rank)) << 1) ^ uint64_t(up);
}

std::string SlopeText(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

void SetSampleEvidence(RootCause &rc, double cost, double median, double hz) {
  rc.evidence_samples = cost * hz;
  rc.signal_to_noise = rc.evidence_samples / std::sqrt(std::max(1.0, median * hz));
  rc.thin_data = rc.signal_to_noise < kSettledSigma;
  rc.run_longer =
      rc.thin_data
          ? std::min(100.0,
                     std::ceil(std::pow(kSettledSigma / std::max(rc.signal_to_noise, 0.5), 2)))
          : 1;
}

SlowestRank::SlowestRank(const Run &big, bool shared_cores) : big_(big) {
  if (!big.rank_total.empty())
    slowest_ = *std::max_element(big.rank_total.begin(), big.rank_total.end());
  if (shared_cores && big.rank_cpu.size() == big.rank_total.size() && !big.rank_cpu.empty())
    busiest_ = *std::max_element(big.rank_cpu.begin(), big.rank_cpu.end());
}

bool SlowestRank::Is(int slot) const {
  if (slot < 0 || size_t(slot) >= big_.rank_total.size())
    return false;
  return big_.rank_total[size_t(slot)] >= 0.95f * slowest_ ||
         (busiest_ > 0 && big_.rank_cpu[size_t(slot)] >= 0.95f * busiest_);
}

bool IsCollective(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  return x.kind == VertexKind::Mpi && x.mpi_class == MpiClass::Collective;
}

} // namespace detect_internal

// ---------------------------------------------------------------- detection

DetectResult Detect(const Psg &psg, const std::vector<Run> &runs, const DetectOptions &opts) {
  if (runs.empty())
    throw Error("scalana detect: no runs to analyse; give one or more run directories");
  DetectResult res;
  for (const Run &r : runs)
    for (const std::string &w : r.warnings)
      res.warnings.push_back(w);

  size_t largest = 0, smallest = 0;
  for (size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].world_size > runs[largest].world_size)
      largest = i;
    if (runs[i].world_size < runs[smallest].world_size)
      smallest = i;
  }
  res.backtrack_run = largest;
  const Run &big = runs[largest];

  // --- Abnormal vertices, per run (abnormal.cpp).
  std::unordered_set<uint64_t> abnormal_big = FindAbnormal(psg, runs, largest, opts, res);

  // --- Non-scalable vertices, across runs (non_scalable.cpp).
  std::unordered_set<VertexId> non_scalable_set =
      FindNonScalable(psg, runs, smallest, largest, opts, res);

  // --- Backtracking on the largest run (backtrack.cpp), each path's root
  // cause the problematic vertex that costs the most (cause_cost.cpp,
  // trace_causes.cpp).
  const CommLayer layer(psg, opts.comm_layers);
  res.comm_layer_vertices = layer.Counts();
  for (const auto &[pattern, n] : res.comm_layer_vertices)
    if (n == 0)
      res.warnings.push_back("--comm-layer " + pattern +
                             " names no function, source file or shared object of the program");
  CauseCosts costs(psg, runs, smallest, largest, abnormal_big, non_scalable_set, res.non_scalable,
                   layer);
  BacktrackStarts starts = FindStarts(psg, big, largest, res, opts);
  TracedCauses traced = TraceCauses(psg, starts, opts, costs, res);

  // --- Communication losses no computation explains (comm_growth.cpp).
  AddCommunicationCauses(psg, runs[smallest], big, layer, traced, res);

  // --- Cost, score and evidence of each root cause in the largest run
  // (score_causes.cpp).
  // Which ranks share cores, read once: the costs, the critical path and
  // contention depend on it.
  const TimeSummary time = SummariseTime(big);
  const SlowestRank slowest(big, time.shared_cores);
  ScoreCauses(psg, traced, opts, slowest, costs, res);
  // --- OpenMP threads: the culprit thread, the team's waits for it, and
  // imbalance within ranks that no rank-level path explains (threads.cpp).
  AttachThreads(psg, big, opts, NoiseFloor(big, opts), slowest, res.root_causes);
  MarkGrowingImbalance(psg, runs, smallest, largest, res.expected_slope, opts, non_scalable_set,
                       res.root_causes);
  MarkSerialFraction(psg, big, res.root_causes);
  // --- One line's contexts named once, their costs summed (line_causes.cpp).
  MergeLineContexts(psg, big, res.root_causes);
  for (RootCause &rc : res.root_causes)
    rc.io = IsIoVertex(psg, big, rc.vertex);

  // --- Waits no path explained, less what other ranks' causes explain;
  // growth that is the machine's, not a line's (contention.cpp).
  HoldWaitsToTheUnexplained(psg, opts, res.root_causes);
  SeparateContention(psg, runs, smallest, largest, time.shared_cores, opts, layer, res);

  // --- No figure past what the run supports (cause_bounds.cpp).
  BoundCauseFigures(psg, big, res.root_causes);
  BoundCauseFigures(psg, big, res.contention);

  // --- The order of the causes (rank_causes.cpp), and whether the data can
  // tell (inconclusive.cpp).
  RankCauses(opts, res);
  SumSavings(res);
  if (std::string hint = CommLayerHint(psg, res.root_causes); !hint.empty())
    res.hints.push_back(std::move(hint));
  if (std::string hint = OffCpuHint(big, time); !hint.empty())
    res.hints.push_back(std::move(hint));
  res.inconclusive = Inconclusive(res, big);
  res.hot_spots = FindHotSpots(psg, runs, res.backtrack_run);
  if (opts.predict > 0)
    res.prediction = PredictAt(psg, runs, res, opts.predict);
  return res;
}

} // namespace scalana
