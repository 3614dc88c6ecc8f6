// Problematic-vertex detection and backtracking root-cause detection (paper
// Section IV; docs/detect.md says which choices are ours).
#pragma once

#include "detect/async.h"
#include "detect/predict.h"
#include "ppg/ppg.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace scalana {

enum class MergeStrategy { Max, Mean, Median, Cluster };
enum class ScalingMode { Strong, Weak, Auto };

struct DetectOptions {
  double abnorm_thd = 1.3;
  // Sampled (computation) time is abnormal only when it exceeds the median by
  // this many standard deviations of the median's sample count (sqrt of the
  // count), and non-scalable only when it grows beyond the expected scaling by
  // as many standard deviations of the expected count.
  double noise_sigma = 3;
  MergeStrategy merge = MergeStrategy::Mean;
  ScalingMode scaling = ScalingMode::Auto;
  size_t top = 10;
  // A vertex is reported non-scalable only above this share of the total time.
  double min_share = 0.01;
  // ... and when its slope exceeds the expected one by this much.
  double min_slope_excess = 0.2;
  // Times below this are noise (abnormal detection, log fits). < 0: two samples'
  // worth at the run's sampling rate (0.01 s when the rate is unknown).
  double min_time = -1;
  // A dependence edge counts as "waiting" (kept by backtracking) above this.
  double min_wait = 1e-3;
  size_t max_path_steps = 100000;
  size_t max_abnormal_starts = 1000;
  // --predict: the rank count to model every vertex and root cause at (0: none).
  int predict = 0;
  // --comm-layer: glob patterns naming code the program communicates through
  // (a function, a source file or path, a shared object), such as bale's
  // conveyors over SHMEM. Its time is waiting, as an MPI call's is: never a
  // computation cause; backtracking goes through it to what made it wait.
  std::vector<std::string> comm_layers;
  // --minor-share: a cause whose fix saves less than this share of the wall
  // time (and costs less than it of its rank's CPU time) is listed as minor,
  // after the causes that matter (rank_causes.cpp).
  double minor_share = 0.01;
};

// --- Statistics, exposed for tests.
struct LogLogFit {
  double a = 0, b = 0; // log(y) = a + b log(p)
  bool ok = false;
};
// Least-squares fit of log(y) on log(p); points with equal p are averaged
// first; needs >= 2 distinct p > 0. y values are clamped to FLOOR (> 0).
LogLogFit FitLogLog(const std::vector<std::pair<double, double>> &points, double floor);
// Merges per-rank values into one number.
double MergeValues(std::vector<double> values, MergeStrategy how);
double Median(std::vector<double> values);
// 1-D k-means (k = 2 or 3, chosen by the drop in squared error) over VALUES;
// returns the mean of the slowest cluster.
double SlowestClusterMean(std::vector<double> values);

// --- Inferring the kind of experiment (--scaling auto).
// Computation vertices (every kind but MPI; CPU time only, so the wall-clock
// waiting that oversubscription inflates does not count) are fitted one by
// one: log(mean CPU seconds per rank) over log(ranks). Their slopes are
// combined by a weighted median, each vertex weighing its share of the
// computation at the smallest scale: vertices that grow with the rank count
// (the very problems we look for) are small there, so one growing vertex
// cannot move the median; in strong scaling the parts that shrink are the
// large ones there. The nearer of the ideal models wins: weak (0) when the
// median slope is above -0.5, else strong (-1), provided all computation per
// rank falls too (total slope below -0.25); when the two disagree, weak.
struct ScalingInference {
  // Computation at the smallest scale must reach this many noise floors
  // (each two samples' worth) before its slope is trusted.
  static constexpr double kMinFloors = 10;
  bool ok = false;                        // a model was inferred; false: weak is assumed
  bool enough = false;                    // enough computation time to trust the slope
  ScalingMode chosen = ScalingMode::Weak; // Weak or Strong
  double median_slope = 0;                // the weighted median of the vertex slopes
  double total_slope = 0;                 // slope of all computation per rank (busiest ranks)
  bool disagree = false;                  // the median says strong, the total is flat: weak kept
  double small_seconds = 0;               // computation at the smallest scale (busiest ranks)
  size_t vertices = 0;                    // computation vertices fitted
};
ScalingInference InferScaling(const Psg &psg, const std::vector<Run> &runs, double floor);

// --- Results.
struct NonScalableVertex {
  VertexId vertex = kNoVertex;
  double slope = 0, intercept = 0, expected = 0;
  double share = 0; // of total time in the largest run
  // Its share at kShareAhead times the largest run's ranks, its slope and
  // the program's kept: what --min-share also accepts, so a serial section
  // that grows with the ranks is found while it is still small.
  double share_ahead = 0;
  static constexpr int kShareAhead = 4;
  double score = 0;                           // (slope - expected) * share
  std::vector<std::pair<int, double>> merged; // (ranks, merged seconds) per run
  // How many calling contexts of one line the figures sum: 1 for a vertex
  // judged alone; more for a line none of whose contexts is non-scalable
  // alone, VERTEX being the context that costs the most.
  size_t contexts = 1;
  // The normal-form model of MERGED (three or more scales), shown beside
  // the slope, which decides.
  ScalingModel model;
};

struct AbnormalVertex {
  size_t run = 0;
  VertexId vertex = kNoVertex;
  std::vector<int> ranks; // world ranks above the threshold
  int worst_rank = -1;
  double worst_time = 0, median = 0;
  double excess = 0; // sum over ranks of (time - median)
};

struct PathStep {
  VertexId vertex = kNoVertex;
  int rank = -1;
  double time = 0; // exclusive time on that rank
  double wait = 0; // for crossings: the wait of the edge taken
  std::string via; // start | prev | parent | control | p2p | collective | rma | barrier
  bool problematic = false;
  int thread = -1; // barrier: the OpenMP thread the others waited for
};

struct CounterEvidence {
  std::string counter;
  double culprit = 0, median = 0; // on the culprit rank, median over ranks
};

// One quantity of a communication vertex, per rank (mean over the ranks) in
// the smallest and the largest run: what grew with the rank count.
struct CommGrowth {
  std::string what; // time | calls | messages | bytes | peers
  double small = 0, big = 0;
};

struct RootCause {
  VertexId vertex = kNoVertex;
  int culprit_rank = -1;
  std::vector<int> ranks; // ranks where it is problematic
  double cost_seconds = 0, score = 0;
  // The cost is its growth beyond the expected scaling (largest run against
  // the smallest, scaled), which exceeded its time over the median.
  bool cost_is_growth = false;
  bool abnormal = false, non_scalable = false;
  std::vector<PathStep> path; // the first path that reached it, start first
  std::vector<CounterEvidence> evidence;
  double culprit_time = 0, median_time = 0;
  // Of culprit_time, the seconds blocked off the CPU (the off-CPU source).
  double culprit_off_cpu = 0;
  // The most time any rank spends at the cause (summed over a line's
  // contexts): what waiting at a communication cause can add up to.
  double most_time_here = 0;
  // Figures that went past what the run supports and were held to it
  // (cause_bounds.cpp), one sentence each: what was bounded, by what.
  std::vector<std::string> bounds;
  // Sampled computation only: the cost in samples, its ratio to the noise of
  // the median's sample count, whether that is too thin to be repeatable
  // (under 5 standard deviations) and how many times longer (or at how many
  // times the rate) a run would make it so.
  double evidence_samples = 0, signal_to_noise = 0, run_longer = 1;
  bool thin_data = false;
  // Calling contexts of its line summed into this cause (MergeLineContexts):
  // 1 for a vertex alone; VERTEX is then the context that costs the most.
  size_t contexts = 1;
  // What the cost is a share of, and what fixing it would give back (largest
  // run). RANK_TIME: the culprit rank's measured time (sampled CPU time plus
  // MPI time; less than wall time when ranks share cores). WALL_TIME: the
  // run's wall time. WAITS_CAUSED: waiting on other ranks that backtracking
  // traced to it (the wait at each path's first crossing, the largest per
  // waiting rank, summed over WAITING_RANKS ranks). SAVED_SECONDS: the wall
  // time a fix would save: its cost when other ranks wait for it or its rank
  // is the slowest, else 0 (it is off the critical path).
  double rank_time = 0, wall_time = 0, waits_caused = 0, saved_seconds = 0;
  double rank_cpu = 0; // the culprit rank's CPU time (all threads, MPI polling included)
  // A communication cause in code declared a communication layer: the
  // --comm-layer pattern it matched ("" otherwise).
  std::string comm_layer;
  int waiting_ranks = 0;
  // A communication vertex that no computation explains (its backtracking
  // path reached no problematic computation): GROWTH says what grew with the
  // rank count, EXPLANATION in one sentence.
  bool communication = false;
  // The cause is an I/O call (MPI-IO): its time is I/O, not communication.
  bool io = false;
  int small_ranks = 0, big_ranks = 0;
  std::vector<CommGrowth> growth;
  std::string explanation;
  // OpenMP (threads.cpp; docs/detect.md, "Threads"): the thread of the
  // culprit rank whose time here is over its team's median by the abnormal
  // threshold (-1: none), the barrier waits of the team's other threads in
  // the region traced to it, and on how many threads. THREAD_IMBALANCE: the
  // cause is that imbalance within a rank alone (no rank-level path found it).
  int culprit_thread = -1;
  double thread_waits_caused = 0;
  int waiting_threads = 0;
  bool thread_imbalance = false;
  // Code outside every OpenMP construct of a program that runs teams of
  // threads, whose time grows beyond the expected scaling: the serial
  // fraction, which no thread count shortens (Amdahl).
  bool serial_fraction = false;
  // Computation that grows alike on every rank (non-scalable, abnormal
  // nowhere) while the ranks share cores, with too few other computation
  // vertices to tell its growth from the machine's: listed after every
  // rank-specific cause, never "found" alone (contention.cpp).
  bool alike_on_shared_cores = false;
  // Machine contention (contention.cpp): why its growth is the machine's
  // (ranks sharing cores, caches and memory bandwidth), not this code's; set
  // only on DetectResult::contention, which holds no savings or waits.
  std::string contention;
};

struct DetectResult {
  size_t backtrack_run = 0; // index of the run backtracking walked (the largest)
  double program_slope = 0, expected_slope = 0;
  bool program_slope_ok = false;
  // The model the expected slope comes from: Weak or Strong (what auto chose).
  ScalingMode scaling_used = ScalingMode::Weak;
  ScalingInference inference; // filled for --scaling auto
  std::string scaling_reason; // one sentence: which model and why
  std::vector<NonScalableVertex> non_scalable;
  std::vector<AbnormalVertex> abnormal; // all runs, largest excess first
  // Largest saving first (rank_causes.cpp); causes under opts.minor_share in
  // MINOR_CAUSES, in the same order; growth that is the machine's, not a
  // line's, in CONTENTION (largest first).
  std::vector<RootCause> root_causes, minor_causes, contention;
  // How many minor causes and contention entries there were before --top.
  size_t minor_count = 0, contention_count = 0;
  // The wall-time savings of the causes listed, summed, when that exceeds
  // the largest run's wall time (0 otherwise): they overlap, one fix's
  // saving partly another's (the same waits, one critical path).
  double savings_sum = 0, savings_wall = 0;
  // Set when computation causes were found but none clear of sampling
  // noise: one sentence saying so and what run length or rate would tell.
  std::string inconclusive;
  std::vector<std::vector<PathStep>> paths; // every backtracking path
  std::vector<std::string> warnings;
  // Suggestions for a better analysis (a --comm-layer to declare).
  std::vector<std::string> hints;
  // Per --comm-layer pattern, how many PSG vertices it made communication.
  std::vector<std::pair<std::string, size_t>> comm_layer_vertices;
  std::vector<HotSpot> hot_spots; // of the largest run, most operations drawn first
  Prediction prediction;          // --predict P; ranks 0 when not asked
};

// RUNS must share PSG (their vertex ids come from it). Throws Error when RUNS
// is empty.
DetectResult Detect(const Psg &psg, const std::vector<Run> &runs, const DetectOptions &opts);

// The backtracking walk alone (Algorithm 1), from (START, RANK) in RUN.
// IS_PROBLEMATIC(vertex, rank) marks steps; exposed for tests.
std::vector<PathStep> Backtrack(const Psg &psg, const Run &run, VertexId start, int rank,
                                const DetectOptions &opts,
                                const std::function<bool(VertexId, int)> &is_problematic);

// Per-rank means of V's time, calls, messages, bytes and peers in SMALL and
// BIG, and one sentence on what grew beyond the scaling model.
std::vector<CommGrowth> CommunicationGrowth(const Psg &psg, const Run &small, const Run &big,
                                            VertexId v);
std::string ExplainGrowth(const std::vector<CommGrowth> &growth, ScalingMode scaling);

// Models the vertices of RUNS and ranks them and RES's root causes at RANKS.
Prediction PredictAt(const Psg &psg, const std::vector<Run> &runs, const DetectResult &res,
                     int ranks);

const char *ToString(MergeStrategy m);
const char *ToString(ScalingMode m);

} // namespace scalana
