// The stages of Detect (detect.cpp), each a function over the PPG in a file
// of its own, and the helpers they share. Internal to analyzer/detect.
#pragma once

#include "detect/detect.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace scalana {
namespace detect_internal {

// V's exclusive time on every rank slot of RUN.
std::vector<double> TimesOverRanks(const Psg &psg, const Run &run, const VertexSeries &s);
// Times below this are noise: opts.min_time, or two samples' worth.
double NoiseFloor(const Run &run, const DetectOptions &opts);
// The smallest of RUNS' noise floors (at least 1e-9): the floor of fits
// across the scales.
double NoiseFloor(const std::vector<Run> &runs, const DetectOptions &opts);
// MPI_Init, MPI_Finalize and their SHMEM twins: never non-scalable or abnormal.
bool IsStartupOrTeardown(const Psg &psg, VertexId v);
bool IsCollective(const Psg &psg, VertexId v);
// Key of a (vertex, rank) step; UP tells the two directions of a walk apart.
uint64_t StepKey(VertexId v, int rank, bool up);
std::string SlopeText(double x); // "%.2f"

// A source line of one function, the unit whose calling contexts are summed
// (non_scalable.cpp, line_causes.cpp): a template's line instantiated for
// unrelated kernels (RAJA's forall loop, forall.hpp:98, in ten of Kripke's)
// is a line of several functions, not one cause. line_causes.cpp.
using LineKey = std::tuple<std::string, uint32_t, VertexKind, std::string>;
LineKey LineOf(const Psg &psg, VertexId v);

// The vertices of the code named by --comm-layer patterns (comm_layer.cpp):
// their time is waiting, like an MPI call's, not computation.
class CommLayer {
public:
  CommLayer(const Psg &psg, const std::vector<std::string> &patterns);
  bool Contains(VertexId v) const;
  // The pattern V matched, the first of them given; "" outside the layer.
  const std::string &PatternOf(VertexId v) const;
  // Each pattern with the number of vertices it made communication.
  std::vector<std::pair<std::string, size_t>> Counts() const;

private:
  std::vector<std::string> patterns_;
  std::vector<size_t> counts_;
  std::vector<int32_t> pattern_of_; // per vertex: index into patterns_, -1 none
};

// Whether a rank slot of BIG is (within 5%) the slowest: by its measured
// time (CPU plus MPI wall time), or, where ranks share cores (SHARED_CORES,
// TimeSummary's), by its CPU time, since there every rank's MPI waits hold
// the others' wait for a core and the late rank reads no slower than any
// (HPCCG at 8 ranks on 2 cores: an injected loop read "no wall time
// saved"). Built once a run: the maxima over its ranks.
class SlowestRank {
public:
  SlowestRank(const Run &big, bool shared_cores);
  bool Is(int slot) const;

private:
  const Run &big_;
  float slowest_ = 0, busiest_ = 0; // measured time, CPU time (0: not used)
};

// How many samples a computation cause rests on: its COST in samples against
// the Poisson noise of its MEDIAN's count (at least one sample). Below
// kSettledSigma standard deviations a repetition may not find it again;
// samples grow with run length (or rate), noise with its square root, so
// RUN_LONGER says how much longer would settle it.
inline constexpr double kSettledSigma = 5;
void SetSampleEvidence(RootCause &rc, double cost, double median, double hz);
// Samples over the median below this never settle a cause, whatever their
// standard deviations: near a median of one sample the normal tail is far
// too thin (a Poisson count of 1 reaches 7 once in 10^4 tries, and a run
// tries as many vertices times ranks; clean HPCCG at 8 ranks was "found"
// on 6 samples at 6.3 standard deviations). A count of 1 reaches 11 once
// in 10^8.
inline constexpr double kMinEvidence = 10;
// Clear of sampling noise: not thin data and, where sampled, on at least
// kMinEvidence samples (a measured wait always is).
inline bool Settled(const RootCause &c) {
  return !c.thin_data && (c.evidence_samples <= 0 || c.evidence_samples >= kMinEvidence);
}

// Whether a vertex is problematic on a rank of the largest run, and what it
// costs there: backtracking marks its steps by the one, chooses each path's
// root cause and scores it by the other. cause_cost.cpp.
class CauseCosts {
public:
  // ABNORMAL: the (vertex, rank) keys abnormal in RUNS[LARGEST] (FindAbnormal);
  // NON_SCALABLE and NS: the non-scalable vertices as a set and in full
  // (FindNonScalable). All of them must outlive the object.
  CauseCosts(const Psg &psg, const std::vector<Run> &runs, size_t smallest, size_t largest,
             const std::unordered_set<uint64_t> &abnormal,
             const std::unordered_set<VertexId> &non_scalable,
             const std::vector<NonScalableVertex> &ns, const CommLayer &layer);

  const Run &big() const { return big_; }
  // An MPI vertex or one of the declared communication layer: its time is
  // waiting, and it is never a computation cause.
  bool Communication(VertexId v) const;
  const CommLayer &layer() const { return layer_; }
  bool Abnormal(VertexId v, int rank) const;
  bool NonScalable(VertexId v) const;
  // V's median time over the largest run's ranks (S: its series there).
  double MedianOf(VertexId v, const VertexSeries &s);
  bool Problematic(VertexId v, int rank);
  // GROWTH, when given, says whether the growth term won.
  double Cost(VertexId v, int rank, bool *growth = nullptr);
  // For a call, the vertex of the called code that costs the most on RANK.
  VertexId CostliestInside(VertexId v, int rank);

private:
  const Psg &psg_;
  const std::vector<Run> &runs_;
  const size_t smallest_, largest_;
  const Run &big_;
  const std::unordered_set<uint64_t> &abnormal_;
  const std::unordered_set<VertexId> &non_scalable_;
  const std::vector<NonScalableVertex> &ns_;
  const CommLayer &layer_;
  // Median over the largest run's ranks, computed once per vertex: paths ask
  // for the same vertices again and again, and a run can have 10^5 ranks.
  std::unordered_map<VertexId, double> medians_;
};

} // namespace detect_internal

// Abnormal vertices of every run into RES.abnormal (largest excess first);
// returns the (vertex, rank) keys (StepKey, up false) abnormal in the
// largest run, RUNS[LARGEST]. abnormal.cpp.
std::unordered_set<uint64_t> FindAbnormal(const Psg &psg, const std::vector<Run> &runs,
                                          size_t largest, const DetectOptions &opts,
                                          DetectResult &res);

// The scaling model (RES.scaling_used, expected_slope, scaling_reason) and
// the non-scalable vertices across the runs into RES.non_scalable, best
// first; returns their vertex set. A line reached from several contexts, none
// of them non-scalable alone, is judged with its contexts summed as well.
// non_scalable.cpp.
std::unordered_set<VertexId> FindNonScalable(const Psg &psg, const std::vector<Run> &runs,
                                             size_t smallest, size_t largest,
                                             const DetectOptions &opts, DetectResult &res);

// A computation cause's line reached in several calling contexts (a loop in
// a routine called from two places) is one cause on its culprit rank: the
// context that costs the most stands for it; the costs of the causes at the
// line are summed, and the line costs at least the time of all its contexts
// over their medians (RootCause::contexts). line_causes.cpp.
void MergeLineContexts(const Psg &psg, const Run &big, std::vector<RootCause> &causes);

// Where backtracking starts in the largest run, BIG = RUNS[LARGEST]: every
// non-scalable vertex (at its latest arrival for a collective, else on the
// rank where it takes longest), then the abnormal vertices of BIG at their
// worst ranks, at most opts.max_abnormal_starts of them. backtrack.cpp.
struct BacktrackStarts {
  std::vector<std::pair<VertexId, int>> at; // (vertex, rank), non-scalable ones first
  size_t non_scalable = 0;                  // how many of AT come from RES.non_scalable
};
BacktrackStarts FindStarts(const Psg &psg, const Run &big, size_t largest, const DetectResult &res,
                           const DetectOptions &opts);

// What backtracking found besides RES.root_causes and RES.paths, for the
// stages after it.
struct TracedCauses {
  std::unordered_map<VertexId, size_t> index; // a cause's vertex: its RES.root_causes index
  // Causes moved from a call into its callee: the call's own cost on that
  // rank is the callee's work too, and counts in the cause's cost.
  std::unordered_map<VertexId, std::pair<int, double>> call_site_cost;
  // Largest wait traced to each root cause, per waiting rank.
  std::vector<std::map<int, double>> waits;
  // Non-scalable MPI vertices whose paths reached no computation cause, or
  // one that explains less than a share of their loss (kExplainsShare in
  // trace_causes.cpp): (vertex, rank).
  std::vector<std::pair<VertexId, int>> unexplained;
};

// Walks back from every start on the largest run into RES.paths, and names
// each path's root cause into RES.root_causes (culprit rank, ranks, first
// path), with the waits it caused. trace_causes.cpp.
TracedCauses TraceCauses(const Psg &psg, const BacktrackStarts &starts, const DetectOptions &opts,
                         detect_internal::CauseCosts &costs, DetectResult &res);

// Communication losses no computation explains (TRACED.unexplained): the MPI
// vertex itself becomes a root cause, with what grew between SMALL and BIG.
// comm_growth.cpp.
void AddCommunicationCauses(const Psg &psg, const Run &small, const Run &big,
                            const detect_internal::CommLayer &layer, TracedCauses &traced,
                            DetectResult &res);

// Whether G's bytes, messages or peers per rank grow beyond the scaling
// model, by enough to account for a tenth of COST at a slow network's
// rates, and the time no more than twice as fast: the program sends more,
// which no machine explains. comm_growth.cpp.
bool TrafficExplains(const std::vector<CommGrowth> &g, ScalingMode scaling, double cost);

// When no --comm-layer covers it and the first computation cause of CAUSES
// looks like a polling layer (non-scalable, not abnormal on one rank, in a
// file that makes MPI or SHMEM calls), a hint naming the pattern that would
// declare it; "" otherwise. comm_layer.cpp.
std::string CommLayerHint(const Psg &psg, const std::vector<RootCause> &causes);

// Cost, score, waits caused and evidence of each of RES.root_causes in the
// largest run. score_causes.cpp.
void ScoreCauses(const Psg &psg, const TracedCauses &traced, const DetectOptions &opts,
                 const detect_internal::SlowestRank &slowest, detect_internal::CauseCosts &costs,
                 DetectResult &res);

// Where the largest run's ranks share cores (SHARED_CORES), causes whose
// growth is the machine's (a wait no more than the ranks' run delay,
// computation no more than the other vertices grow) moved from
// RES.root_causes to RES.contention; the part of a cause's cost that is the
// machine's taken off it, and said. contention.cpp.
void SeparateContention(const Psg &psg, const std::vector<Run> &runs, size_t smallest,
                        size_t largest, bool shared_cores, const DetectOptions &opts,
                        const detect_internal::CommLayer &layer, DetectResult &res);

// RES.root_causes in the order they are reported; it and RES.non_scalable
// cut to opts.top. rank_causes.cpp.
void RankCauses(const DetectOptions &opts, DetectResult &res);

// Every cause's figures held to what the run supports (cause_bounds.cpp):
// cost within the time it was measured from, waits within the waits that
// exist, savings within the wall time; each figure bounded is said.
void BoundCauseFigures(const Psg &psg, const Run &big, std::vector<RootCause> &causes);
// A communication cause no path explained (comm_growth.cpp) may still be
// waiting for another rank's computation cause: its cost, and saving, held
// to the growth that the costliest such cause cannot account for; dropped
// when that leaves it no more than opts.min_wait.
void HoldWaitsToTheUnexplained(const Psg &psg, const DetectOptions &opts,
                               std::vector<RootCause> &causes);
// The savings of the causes listed against the wall time: set when they
// sum past it (DetectResult::savings_sum).
void SumSavings(DetectResult &res);

// With computation causes but none of them clear of sampling noise, or the
// clearest within the spread of the other candidates' costs: one sentence
// saying so and what run would tell; else empty. inconclusive.cpp.
std::string Inconclusive(const DetectResult &res, const Run &big);

} // namespace scalana
