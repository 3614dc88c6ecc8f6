// Detection algorithms on hand-built PSGs and profiles with known answers.
#include "detect/detect.h"
#include "detect/threads.h"
#include "ppg/load.h"
#include "report/html_parts.h"
#include "report/report.h"
#include "report/report_common.h"
#include "scalana/ids.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace scalana {
namespace {

// --- Building blocks -------------------------------------------------------

struct FnBuilder {
  LocalPsg fn;
  explicit FnBuilder(const std::string &name, uint32_t line = 1) {
    fn.key = fn.name = name;
    fn.linkage = "external";
    fn.loc = {"app.c", line, line + 99, 0};
    LocalVertex v;
    v.kind = VertexKind::Function;
    v.loc = fn.loc;
    fn.vertices.push_back(v);
  }
  uint32_t Add(uint32_t parent, VertexKind kind, uint32_t line, const std::string &what = "",
               MpiClass cls = MpiClass::None) {
    LocalVertex v;
    v.local = uint32_t(fn.vertices.size());
    v.kind = kind;
    v.parent = int32_t(parent);
    v.loc = {"app.c", line, line, 0};
    if (kind == VertexKind::Mpi)
      v.mpi_op = what, v.mpi_class = cls;
    if (kind == VertexKind::Call)
      v.callee = what;
    if (kind == VertexKind::Loop)
      v.loop_depth = 1;
    fn.vertices.push_back(v);
    fn.vertices[parent].children.push_back(v.local);
    return v.local;
  }
  uint64_t Id(uint32_t local) const {
    return scalana_vertex_id(scalana_function_hash(fn.key.data(), fn.key.size()), local);
  }
};

// main: Loop(10){ Loop(11) relax; Irecv(20); Isend(21); Waitall(22); Loop(30); Allreduce(40) }
struct HaloProgram {
  FnBuilder main{"main"};
  uint32_t outer, relax, irecv, isend, waitall, tail, allreduce;
  Psg psg;
  HaloProgram() {
    outer = main.Add(0, VertexKind::Loop, 10);
    relax = main.Add(outer, VertexKind::Loop, 11);
    irecv = main.Add(outer, VertexKind::Mpi, 20, "MPI_Irecv", MpiClass::P2PNonBlocking);
    isend = main.Add(outer, VertexKind::Mpi, 21, "MPI_Isend", MpiClass::P2PNonBlocking);
    waitall = main.Add(outer, VertexKind::Mpi, 22, "MPI_Waitall", MpiClass::Completion);
    tail = main.Add(outer, VertexKind::Loop, 30);
    allreduce = main.Add(outer, VertexKind::Mpi, 40, "MPI_Allreduce", MpiClass::Collective);
    psg = Psg::Build({main.fn});
  }
  VertexId V(uint32_t local) { return psg.Resolve({main.Id(local)}); }
};

// Profile builder: contexts are single raw ids of main's vertices.
struct ProfileBuilder {
  Profile p;
  std::map<uint64_t, uint32_t> ctx;
  explicit ProfileBuilder(int world, double hz = 100) {
    p.meta.world_size = world;
    p.meta.psg_id = "0xabc";
    p.meta.sampling.hz = hz;
    p.comms.push_back({});
    for (int r = 0; r < world; ++r) {
      p.comms[0].push_back(r);
      RankData rd;
      rd.rank = r;
      p.ranks.push_back(rd);
    }
  }
  uint32_t Ctx(uint64_t id) {
    auto [it, fresh] = ctx.emplace(id, uint32_t(p.contexts.size()));
    if (fresh)
      p.contexts.push_back({id});
    return it->second;
  }
  void Cpu(int rank, uint64_t id, double seconds) {
    VertexRow row;
    row.ctx = Ctx(id);
    row.samples = uint64_t(std::llround(seconds * p.meta.sampling.hz));
    row.cpu_seconds = seconds;
    p.ranks[rank].vertices.push_back(row);
  }
  void Mpi(int rank, uint64_t id, double seconds, uint64_t calls = 1) {
    p.ranks[rank].mpi.push_back({Ctx(id), calls, seconds, 0});
  }
  void Dep(int rank, uint64_t id, DepKind kind, int peer, double wait, int tag = 0) {
    DepRow d;
    d.ctx = Ctx(id);
    d.kind = kind;
    d.peer = peer;
    d.tag = tag;
    d.comm = 0;
    d.count = 1;
    d.wait_seconds = wait;
    p.ranks[rank].deps.push_back(d);
  }
};

// A 1-D ring halo exchange where SLOW computes RELAX_SLOW seconds instead of
// 1 s; its two neighbours wait for its messages in Waitall.
Profile HaloProfile(HaloProgram &h, int world, int slow, double relax_slow,
                    double allreduce_base = 0.05) {
  ProfileBuilder b(world);
  auto &m = h.main;
  for (int r = 0; r < world; ++r) {
    int left = (r + world - 1) % world, right = (r + 1) % world;
    b.Cpu(r, m.Id(0), 0.1);
    b.Cpu(r, m.Id(h.relax), r == slow ? relax_slow : 1.0);
    b.Cpu(r, m.Id(h.tail), 0.5);
    b.Mpi(r, m.Id(h.irecv), 0.001, 2);
    b.Mpi(r, m.Id(h.isend), 0.001, 2);
    for (int peer : {left, right}) {
      b.Dep(r, m.Id(h.irecv), DepKind::Recv, peer, 0);
      b.Dep(r, m.Id(h.isend), DepKind::Send, peer, 0);
      b.Dep(r, m.Id(h.waitall), DepKind::Send, peer, 0);
      double wait = peer == slow ? relax_slow - 1.0 : 0;
      b.Dep(r, m.Id(h.waitall), DepKind::Recv, peer, wait);
    }
    double waited = (left == slow || right == slow) ? relax_slow - 1.0 : 0;
    b.Mpi(r, m.Id(h.waitall), 0.002 + waited, 1);
    // Everyone but the slow rank (and its neighbours, who already waited)
    // waits at the allreduce.
    // (its neighbours arrive a little before it: it still has its own Waitall.)
    double coll_wait = r == slow ? 0.0 : waited > 0 ? 0.01 : relax_slow - 1.0;
    b.Mpi(r, m.Id(h.allreduce), allreduce_base + coll_wait, 1);
    b.Dep(r, m.Id(h.allreduce), DepKind::Coll, -1, coll_wait);
  }
  return b.p;
}

const RootCause *FindCause(const DetectResult &r, VertexId v) {
  for (const RootCause &rc : r.root_causes)
    if (rc.vertex == v)
      return &rc;
  return nullptr;
}

// --- Statistics ------------------------------------------------------------

// Samples a full context table dropped are said with their share and the
// worst rank, in the run's warnings (and so in every report).
TEST(DetectRun, DroppedSamplesAreSaid) {
  HaloProgram h;
  Profile p = HaloProfile(h, 4, 3, 1.5);
  for (RankData &rd : p.ranks)
    rd.samples = 1000;
  p.ranks[1].samples_dropped = 50;
  p.ranks[2].samples_dropped = 173;
  scalana::Run run = BuildRun(h.psg, p, "np4");
  EXPECT_EQ(run.samples_taken, 4000u);
  EXPECT_EQ(run.samples_dropped, 223u);
  bool said = false;
  for (const std::string &w : run.warnings)
    said = said || w.find("np4: 223 of 4000 samples (5.6%) dropped on 2 ranks (most: rank 2, "
                          "17.3% of its samples)") == 0;
  EXPECT_TRUE(said) << ::testing::PrintToString(run.warnings);
  // None dropped: nothing said.
  Profile clean = HaloProfile(h, 4, 3, 1.5);
  scalana::Run quiet = BuildRun(h.psg, clean, "np4");
  for (const std::string &w : quiet.warnings)
    EXPECT_EQ(w.find("dropped"), std::string::npos) << w;
}

TEST(DetectStats, LogLogFitRecoversExactSlopes) {
  for (double b : {-1.0, 0.0, 0.5, 1.0, 2.0}) {
    std::vector<std::pair<double, double>> pts;
    for (double p : {4.0, 8.0, 16.0, 64.0})
      pts.push_back({p, 3.0 * std::pow(p, b)});
    LogLogFit f = FitLogLog(pts, 1e-9);
    ASSERT_TRUE(f.ok);
    EXPECT_NEAR(f.b, b, 1e-9);
    EXPECT_NEAR(std::exp(f.a), 3.0, 1e-9);
  }
  EXPECT_FALSE(FitLogLog({{4, 1}, {4, 2}}, 1e-9).ok) << "one scale cannot be fitted";
  // Repetitions at one scale are averaged before fitting.
  LogLogFit f = FitLogLog({{2, 1}, {2, 3}, {4, 4}}, 1e-9);
  EXPECT_NEAR(f.b, 1.0, 1e-9);
}

TEST(DetectStats, MergeStrategies) {
  std::vector<double> v{1, 1, 1, 1, 1, 1, 1, 1, 1, 5};
  EXPECT_DOUBLE_EQ(MergeValues(v, MergeStrategy::Max), 5);
  EXPECT_DOUBLE_EQ(MergeValues(v, MergeStrategy::Mean), 1.4);
  EXPECT_DOUBLE_EQ(MergeValues(v, MergeStrategy::Median), 1);
  EXPECT_DOUBLE_EQ(MergeValues(v, MergeStrategy::Cluster), 5)
      << "a lone outlier is its own cluster";
  EXPECT_DOUBLE_EQ(Median({3, 1, 2, 4}), 2.5);
  // Two groups: the slow group's mean.
  std::vector<double> two{1, 1.1, 0.9, 1, 3, 3.2, 2.8, 3};
  EXPECT_NEAR(MergeValues(two, MergeStrategy::Cluster), 3.0, 1e-9);
  // Three well separated groups: k = 3, slowest is 10.
  std::vector<double> three{1, 1, 1, 5, 5, 5, 10, 10, 10};
  EXPECT_NEAR(SlowestClusterMean(three), 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(SlowestClusterMean({2, 2, 2}), 2);
}

// --- Abnormal thresholds ----------------------------------------------------

TEST(DetectAbnormal, ThresholdIsStrict) {
  HaloProgram h;
  for (auto [factor, expect] : {std::pair{1.29, false}, std::pair{1.31, true}}) {
    ProfileBuilder b(8);
    for (int r = 0; r < 8; ++r)
      b.Cpu(r, h.main.Id(h.relax), r == 5 ? factor : 1.0);
    scalana::Run run = BuildRun(h.psg, b.p, "run");
    DetectOptions o;
    DetectResult res = Detect(h.psg, {run}, o);
    bool found = false;
    for (const AbnormalVertex &a : res.abnormal)
      if (a.vertex == h.V(h.relax)) {
        found = true;
        EXPECT_EQ(a.ranks, std::vector<int>{5});
        EXPECT_EQ(a.worst_rank, 5);
      }
    EXPECT_EQ(found, expect) << "factor " << factor;
  }
}

// main: a parallel region (its body a loop) and an MPI_Allreduce; two ranks
// of two threads. Contexts: IN_LOOP the body's loop, AT_FORK the region's
// own call vertex.
struct OmpRegionProgram {
  FnBuilder m{"main"}, body{"main.omp_outlined", 10};
  uint32_t fork, allreduce, loop;
  Psg psg;
  ProfileBuilder b;
  static constexpr uint32_t in_loop = 0, at_fork = 1;
  explicit OmpRegionProgram(double hz, int ranks = 2, int team = 2) : b(ranks, hz) {
    fork = m.Add(0, VertexKind::Call, 10, "main.omp_outlined");
    m.fn.vertices[fork].region = OmpRegion::Parallel;
    allreduce = m.Add(0, VertexKind::Mpi, 20, "MPI_Allreduce", MpiClass::Collective);
    body.fn.outlined = OmpRegion::Parallel;
    loop = body.Add(0, VertexKind::Loop, 12);
    psg = Psg::Build({m.fn, body.fn});
    b.p.contexts.push_back({m.Id(fork), body.Id(loop)});
    b.p.contexts.push_back({m.Id(fork)});
    for (RankData &rd : b.p.ranks)
      for (int t = 0; t < team; ++t)
        rd.thread_info.push_back({uint32_t(t), uint32_t(t)});
  }
};

// OpenMP threads (docs/detect.md, "Threads"): main forks a parallel region
// whose body runs a loop; on rank 1, thread 0 spends 1.6 s there against
// thread 1's 0.4 s, and thread 1 waits 1.2 s at the region's barrier. The
// main thread's time is the rank's less the other thread's (contexts only it
// sampled have no thread rows); rank 0 is balanced.
TEST(DetectThreads, TheSlowThreadIsNamedWithTheWaitsOfTheOthers) {
  OmpRegionProgram prog(100);
  Psg &psg = prog.psg;
  for (int r = 0; r < 2; ++r) {
    RankData &rd = prog.b.p.ranks[size_t(r)];
    rd.vertices.push_back({prog.in_loop, uint64_t(r ? 200 : 80), r ? 2.0 : 0.8, {}});
    rd.thread_vertices.push_back({prog.in_loop, 1, 40, 0.4});
    rd.omp.push_back({prog.at_fork, 1, "barrier", 10, r ? 1.2 : 0.01, 0, 0, 0});
    prog.b.Mpi(r, prog.m.Id(prog.allreduce), r ? 0.01 : 1.2);
  }
  scalana::Run run = BuildRun(psg, prog.b.p, "run");
  DetectOptions o;
  std::vector<AbnormalThread> found = FindAbnormalThreads(psg, run, o, 0.02);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rank, 1);
  EXPECT_EQ(found[0].thread, 0);
  EXPECT_NEAR(found[0].time, 1.6, 1e-5);
  EXPECT_NEAR(found[0].excess, 1.2, 1e-5);
  EXPECT_NEAR(found[0].waits, 1.2, 1e-5);
  EXPECT_EQ(found[0].waiting, 1);
  DetectResult res = Detect(psg, {run}, o);
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, found[0].vertex);
  EXPECT_EQ(report_common::Culprit(rc), "rank 1 thread 0");
  EXPECT_NEAR(rc.thread_waits_caused, 1.2, 1e-5);
  EXPECT_EQ(rc.path.back().via, "barrier");
}

// What a slow thread's fix gives back is what its excess made the others
// wait: thread 1 waits 3.0 s at the barrier (its core shared), but thread 0
// is only 1.2 s over it, so 1.2 s of that wait is traced to thread 0.
TEST(DetectThreads, WaitsTracedToAThreadAreAtMostItsExcess) {
  OmpRegionProgram prog(100);
  for (int r = 0; r < 2; ++r) {
    RankData &rd = prog.b.p.ranks[size_t(r)];
    rd.vertices.push_back({prog.in_loop, uint64_t(r ? 200 : 80), r ? 2.0 : 0.8, {}});
    rd.thread_vertices.push_back({prog.in_loop, 1, 40, 0.4});
    rd.omp.push_back({prog.at_fork, 1, "barrier", 10, r ? 3.0 : 0.01, 0, 0, 0});
    prog.b.Mpi(prog.b.p.ranks[size_t(r)].rank, prog.m.Id(prog.allreduce), r ? 0.01 : 1.2);
  }
  scalana::Run run = BuildRun(prog.psg, prog.b.p, "run");
  DetectOptions o;
  std::vector<AbnormalThread> found = FindAbnormalThreads(prog.psg, run, o, 0.02);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(found[0].excess, 1.2, 1e-5);
  EXPECT_NEAR(found[0].waits, 1.2, 1e-5) << "the 3.0 s wait held to the 1.2 s excess";
  EXPECT_EQ(found[0].waiting, 1);
}

// Both ranks alike: thread 0 spends 1.6 s in the region's loop against
// thread 1's 0.4 s, and the master alone forks and joins the region (0.5 s
// at the region's own call vertex against a worker's 0.05 s there). The
// loop is a cause of its own, with its samples' evidence; the fork is none.
TEST(DetectThreads, TheRegionsOwnCallIsNoThreadImbalance) {
  OmpRegionProgram prog(1000);
  Psg &psg = prog.psg;
  for (RankData &rd : prog.b.p.ranks) {
    rd.vertices.push_back({prog.in_loop, 2000, 2.0, {}});
    rd.thread_vertices.push_back({prog.in_loop, 1, 400, 0.4});
    rd.vertices.push_back({prog.at_fork, 550, 0.55, {}});
    rd.thread_vertices.push_back({prog.at_fork, 1, 50, 0.05});
  }
  scalana::Run run = BuildRun(psg, prog.b.p, "run");
  DetectOptions o;
  std::vector<AbnormalThread> found = FindAbnormalThreads(psg, run, o, 0.02);
  for (const AbnormalThread &a : found)
    EXPECT_NE(a.vertex, psg.Resolve({prog.m.Id(prog.fork)}))
        << "the fork and join named thread " << a.thread << "'s imbalance";
  DetectResult res = Detect(psg, {run}, o);
  ASSERT_EQ(res.root_causes.size(), 1u);
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, psg.Resolve({prog.m.Id(prog.fork), prog.body.Id(prog.loop)}));
  EXPECT_TRUE(rc.thread_imbalance);
  EXPECT_EQ(rc.culprit_thread, 0);
  // 1.2 s over a median of 0.4 s at 1000 Hz: 1200 samples, far over noise.
  EXPECT_NEAR(rc.evidence_samples, 1200, 1);
  EXPECT_GT(rc.signal_to_noise, 5);
}

// Growth first for threads (docs/detect.md, "Threads"): every rank alike,
// thread 0 over its team at the region's loop by an excess that grows with
// the ranks. RANKS ranks of a TEAM: thread 0 spends BASE + EXCESS, the
// others BASE each. Every run is built on PSG (Resolve adds the vertices
// the runs' contexts reach), an OmpRegionProgram's.
std::vector<scalana::Run> GrowingImbalance(Psg &psg, int team, double base,
                                           const std::vector<std::pair<int, double>> &scales) {
  std::vector<scalana::Run> runs;
  for (auto [ranks, excess] : scales) {
    OmpRegionProgram prog(1000, ranks, team);
    for (RankData &rd : prog.b.p.ranks) {
      const double total = base * team + excess;
      rd.vertices.push_back({prog.in_loop, uint64_t(std::llround(total * 1000)), total, {}});
      for (int t = 1; t < team; ++t)
        rd.thread_vertices.push_back(
            {prog.in_loop, uint32_t(t), uint64_t(std::llround(base * 1000)), base});
    }
    runs.push_back(BuildRun(psg, prog.b.p, "np" + std::to_string(ranks)));
  }
  return runs;
}

// Two threads: the loop's time per rank grows with the excess (1.2 s to
// 2.4 s), so the vertex is non-scalable: a cause as such, whose culprit
// thread is named.
TEST(DetectThreads, AnImbalanceAtANonScalableVertexIsNonScalable) {
  OmpRegionProgram prog(1000);
  std::vector<scalana::Run> runs = GrowingImbalance(prog.psg, 2, 0.4, {{2, 0.4}, {8, 1.6}});
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(prog.psg, runs, o);
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, prog.psg.Resolve({prog.m.Id(prog.fork), prog.body.Id(prog.loop)}));
  EXPECT_EQ(rc.culprit_thread, 0);
  EXPECT_TRUE(rc.non_scalable) << "an imbalance whose vertex grows with the ranks";
}

// Four threads: thread 0's excess doubles with the ranks (0.4, 0.8, 1.6 s
// over 1.0 s each), but the loop's time per rank grows by less than the
// slope threshold (4.4 s to 5.6 s over 4x the ranks: slope 0.17). The
// imbalance is non-scalable by its own growth, which the cause gives.
TEST(DetectThreads, AnImbalanceThatGrowsWithTheRanksIsNonScalable) {
  OmpRegionProgram prog(1000);
  std::vector<scalana::Run> runs =
      GrowingImbalance(prog.psg, 4, 1.0, {{2, 0.4}, {4, 0.8}, {8, 1.6}});
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(prog.psg, runs, o);
  const VertexId loop = prog.psg.Resolve({prog.m.Id(prog.fork), prog.body.Id(prog.loop)});
  for (const NonScalableVertex &ns : res.non_scalable)
    EXPECT_NE(ns.vertex, loop) << "the loop itself grows by less than the threshold";
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, loop);
  EXPECT_TRUE(rc.thread_imbalance);
  EXPECT_EQ(rc.culprit_thread, 0);
  EXPECT_TRUE(rc.non_scalable);
  ASSERT_EQ(rc.growth.size(), 1u);
  EXPECT_EQ(rc.growth[0].what, "thread excess");
  EXPECT_NEAR(rc.growth[0].small, 0.4, 1e-3);
  EXPECT_NEAR(rc.growth[0].big, 1.6, 1e-3);
  EXPECT_EQ(rc.small_ranks, 2);
  EXPECT_EQ(rc.big_ranks, 8);
  EXPECT_NE(report_common::ThreadGrowthText(rc).find("0.400 s at 2 ranks -> 1.600 s at 8 ranks"),
            std::string::npos)
      << report_common::ThreadGrowthText(rc);
}

// The same team with a constant excess: abnormal, not non-scalable.
TEST(DetectThreads, AConstantImbalanceIsNotNonScalable) {
  OmpRegionProgram prog(1000);
  std::vector<scalana::Run> runs =
      GrowingImbalance(prog.psg, 4, 1.0, {{2, 0.8}, {4, 0.8}, {8, 0.8}});
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(prog.psg, runs, o);
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_TRUE(rc.thread_imbalance);
  EXPECT_FALSE(rc.non_scalable);
  EXPECT_TRUE(rc.growth.empty());
}

TEST(DetectAbnormal, SamplingNoiseOnFewSamplesIsNotAbnormal) {
  // 100 Hz: rank 5 has 5 samples of tail against 3 elsewhere (1.7x, two
  // samples above the floor) - noise; rank 2 has 40 samples of relax against 0.
  HaloProgram h;
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.tail), r == 5 ? 0.05 : 0.03);
    if (r == 2)
      b.Cpu(r, h.main.Id(h.relax), 0.4);
  }
  scalana::Run run = BuildRun(h.psg, b.p, "run");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  bool tail = false, relax = false;
  for (const AbnormalVertex &a : res.abnormal) {
    tail |= a.vertex == h.V(h.tail);
    relax |= a.vertex == h.V(h.relax) && a.ranks == std::vector<int>{2};
  }
  EXPECT_FALSE(tail);
  EXPECT_TRUE(relax);
  // Without the sampling test the ratio alone would flag the tail.
  DetectOptions ratio_only;
  ratio_only.noise_sigma = 0;
  res = Detect(h.psg, {run}, ratio_only);
  tail = false;
  for (const AbnormalVertex &a : res.abnormal)
    tail |= a.vertex == h.V(h.tail);
  EXPECT_TRUE(tail);
}

TEST(DetectAbnormal, NoiseFloorSilencesTinyVertices) {
  HaloProgram h;
  ProfileBuilder b(4, 100); // 2 samples = 0.02 s
  for (int r = 0; r < 4; ++r)
    b.Cpu(r, h.main.Id(h.tail), r == 1 ? 0.01 : 0.001);
  scalana::Run run = BuildRun(h.psg, b.p, "run");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  EXPECT_TRUE(res.abnormal.empty());
}

// --- PPG -------------------------------------------------------------------

TEST(DetectPpg, ArraysEdgesAndInclusiveTime) {
  HaloProgram h;
  scalana::Run run = BuildRun(h.psg, HaloProfile(h, 6, 3, 2.0), "run6");
  const VertexSeries *relax = run.Find(h.V(h.relax));
  ASSERT_NE(relax, nullptr);
  EXPECT_FLOAT_EQ(relax->cpu[3], 2.0f);
  EXPECT_FLOAT_EQ(relax->cpu[0], 1.0f);
  const VertexSeries *outer = run.Find(h.V(h.outer));
  ASSERT_NE(outer, nullptr);
  EXPECT_FALSE(outer->own_data);
  // Inclusive of the loop on rank 0: relax 1 + tail 0.5 + MPI.
  EXPECT_NEAR(outer->incl[0], 1.0 + 0.5 + 0.001 + 0.001 + 0.002 + 0.05 + 1.0, 1e-5);
  EXPECT_NEAR(run.rank_total[0], outer->incl[0] + 0.1, 1e-5);
  // The receive on rank 2 from rank 3 is matched to rank 3's Isend (the
  // initiating call is preferred over the Waitall that also carries a row).
  const VertexSeries *wa = run.Find(h.V(h.waitall));
  ASSERT_NE(wa, nullptr);
  bool seen = false;
  for (const DepEdge &e : wa->edges)
    if (e.rank == 2 && e.kind == DepKind::Recv && e.peer_rank == 3) {
      EXPECT_EQ(e.peer_vertex, h.V(h.isend));
      EXPECT_FLOAT_EQ(e.wait, 1.0f);
      seen = true;
    }
  EXPECT_TRUE(seen);
  EXPECT_EQ(run.unmatched_p2p, 0u);
  EXPECT_EQ(run.unresolved_contexts, 0u);
}

// HPCCG's shape: a setup phase and the solver exchange both use tag 99
// between the same ranks. The setup Send (line 5) sorts first and used to
// take every receive; message numbers say the solver's Wait received the
// exchange's Isend (line 21).
TEST(DetectPpg, ReusedTagsArePairedByMessageNumbers) {
  FnBuilder m{"main"};
  uint32_t setup = m.Add(0, VertexKind::Mpi, 5, "MPI_Send", MpiClass::P2PBlocking);
  uint32_t setup_recv = m.Add(0, VertexKind::Mpi, 6, "MPI_Recv", MpiClass::P2PBlocking);
  uint32_t loop = m.Add(0, VertexKind::Loop, 10);
  uint32_t isend = m.Add(loop, VertexKind::Mpi, 21, "MPI_Isend", MpiClass::P2PNonBlocking);
  uint32_t wait = m.Add(loop, VertexKind::Mpi, 22, "MPI_Wait", MpiClass::Completion);
  Psg psg = Psg::Build({m.fn});
  ProfileBuilder b(2);
  auto dep = [&](int rank, uint32_t v, DepKind kind, std::vector<SeqRange> seqs, double w) {
    b.Dep(rank, m.Id(v), kind, 1 - rank, w, 99);
    b.p.ranks[rank].deps.back().seqs = std::move(seqs);
  };
  for (int r = 0; r < 2; ++r) {
    dep(r, setup, DepKind::Send, {{1, 1}}, 0);
    dep(r, setup_recv, DepKind::Recv, {{1, 1}}, 0);
    dep(r, isend, DepKind::Send, {{2, 41}}, 0);
    dep(r, wait, DepKind::Recv, {{2, 41}}, 0.5);
  }
  scalana::Run run = BuildRun(psg, b.p, "run2");
  VertexId want = psg.Resolve({m.Id(isend)});
  const VertexSeries *ws = run.Find(psg.Resolve({m.Id(wait)}));
  ASSERT_NE(ws, nullptr);
  ASSERT_EQ(ws->edges.size(), 2u);
  for (const DepEdge &e : ws->edges)
    EXPECT_EQ(e.peer_vertex, want) << "rank " << e.rank;
  // The setup receive still pairs with the setup send.
  const VertexSeries *rs = run.Find(psg.Resolve({m.Id(setup_recv)}));
  ASSERT_NE(rs, nullptr);
  for (const DepEdge &e : rs->edges)
    EXPECT_EQ(e.peer_vertex, psg.Resolve({m.Id(setup)}));
  EXPECT_EQ(run.unmatched_p2p, 0u);
  // Without numbers (older profiles) the initiating call wins: the setup Send
  // sorts first among the two initiators, which is the defect numbers fix.
  for (RankData &rd : b.p.ranks)
    for (DepRow &d : rd.deps)
      d.seqs.clear();
  scalana::Run old = BuildRun(psg, b.p, "run2");
  EXPECT_EQ(old.Find(psg.Resolve({m.Id(wait)}))->edges[0].peer_vertex, psg.Resolve({m.Id(setup)}));
}

TEST(DetectPpg, MissingRanksAreNamedAndSkipped) {
  HaloProgram h;
  Profile p = HaloProfile(h, 4, 1, 2.0);
  p.ranks.erase(p.ranks.begin() + 2); // rank 2 never wrote its data
  scalana::Run run = BuildRun(h.psg, p, "run4");
  EXPECT_EQ(run.missing_ranks, std::vector<int>{2});
  EXPECT_EQ(run.nslots(), 3);
  EXPECT_EQ(run.SlotOf(3), 2);
  ASSERT_FALSE(run.warnings.empty());
  EXPECT_NE(run.warnings[0].find("missing"), std::string::npos);
  EXPECT_NE(run.warnings[0].find("(2)"), std::string::npos);
  // Detection still runs on what is there.
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  EXPECT_FALSE(res.abnormal.empty());
}

TEST(DetectPpg, UnresolvedContextsAreCounted) {
  HaloProgram h;
  ProfileBuilder b(2);
  b.Cpu(0, 0x8000000000000001ull /* no such function */, 1.0);
  b.Cpu(1, h.main.Id(h.relax), 1.0);
  scalana::Run run = BuildRun(h.psg, b.p, "run2");
  EXPECT_EQ(run.unresolved_contexts, 1u);
  EXPECT_EQ(run.unresolved_rows, 1u);
  EXPECT_NEAR(run.unresolved_seconds, 1.0, 1e-9);
}

TEST(DetectPpg, ContextsThatFitInPartAreKeptAndCounted) {
  HaloProgram h;
  ProfileBuilder b(2);
  // relax's loop, then a frame of no function the PSG has: the time stays
  // on relax's loop, where the unknown call was made.
  b.p.contexts.push_back({h.main.Id(h.relax), 0x8000000000000001ull});
  VertexRow row;
  row.ctx = uint32_t(b.p.contexts.size() - 1);
  row.samples = 100;
  row.cpu_seconds = 1.0;
  b.p.ranks[1].vertices.push_back(row);
  scalana::Run run = BuildRun(h.psg, b.p, "run2");
  EXPECT_EQ(run.unresolved_contexts, 0u);
  EXPECT_EQ(run.unresolved_rows, 0u);
  EXPECT_EQ(run.approximated_contexts, 1u);
  EXPECT_EQ(run.approximated_rows, 1u);
  EXPECT_NEAR(run.approximated_seconds, 1.0, 1e-9);
  const scalana::VertexSeries *s = run.Find(h.V(h.relax));
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(s->cpu[1], 1.0, 1e-6);
  bool warned = false;
  for (const std::string &w : run.warnings)
    warned |= w.find("fit the PSG only in part") != std::string::npos;
  EXPECT_TRUE(warned);
}

// --- Backtracking ------------------------------------------------------------

TEST(DetectBacktrack, NonBlockingP2PLeadsToTheSlowSender) {
  HaloProgram h;
  scalana::Run run = BuildRun(h.psg, HaloProfile(h, 8, 3, 2.0), "run8");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &top = res.root_causes[0];
  EXPECT_EQ(top.vertex, h.V(h.relax));
  EXPECT_EQ(top.culprit_rank, 3);
  EXPECT_EQ(top.ranks, std::vector<int>{3});
  EXPECT_TRUE(top.abnormal);
  EXPECT_NEAR(top.cost_seconds, 1.0, 1e-5);
  // The path crosses from a neighbour's Waitall to rank 3's Isend.
  bool crossed = false;
  for (size_t i = 0; i < top.path.size(); ++i)
    if (top.path[i].via == "p2p") {
      EXPECT_EQ(top.path[i].vertex, h.V(h.isend));
      EXPECT_EQ(top.path[i].rank, 3);
      ASSERT_GT(i, 0u);
      EXPECT_EQ(top.path[i - 1].vertex, h.V(h.waitall));
      EXPECT_TRUE(top.path[i - 1].rank == 2 || top.path[i - 1].rank == 4);
      crossed = true;
    }
  EXPECT_TRUE(crossed);
}

TEST(DetectBacktrack, CollectiveGoesToTheLatestArrival) {
  HaloProgram h;
  scalana::Run run = BuildRun(h.psg, HaloProfile(h, 8, 6, 3.0), "run8");
  auto never = [](VertexId, int) { return false; };
  // Start at the allreduce on rank 0, which waited 2 s.
  std::vector<PathStep> path = Backtrack(h.psg, run, h.V(h.allreduce), 0, DetectOptions{}, never);
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[1].via, "collective");
  EXPECT_EQ(path[1].rank, 6) << "rank 6 waited least: it arrived last";
  // and then it steps back through rank 6's code: tail loop, waitall ...
  EXPECT_EQ(path[2].vertex, h.V(h.tail));
  EXPECT_EQ(path[2].rank, 6);
  // It stops at the root, never at another collective.
  for (size_t i = 2; i < path.size(); ++i)
    EXPECT_NE(path[i].vertex, h.V(h.allreduce));
}

TEST(DetectBacktrack, EdgesWithoutWaitingArePruned) {
  HaloProgram h;
  Profile p = HaloProfile(h, 8, 3, 1.0); // nobody is slow: no waiting anywhere
  scalana::Run run = BuildRun(h.psg, p, "run8");
  std::vector<PathStep> path = Backtrack(h.psg, run, h.V(h.waitall), 2, DetectOptions{},
                                         [](VertexId, int) { return false; });
  for (const PathStep &s : path) {
    EXPECT_EQ(s.rank, 2) << "no edge has waiting: the walk never leaves rank 2";
    EXPECT_NE(s.via, "p2p");
  }
  // In execution order: Waitall, Isend, Irecv, relax.
  ASSERT_GE(path.size(), 4u);
  EXPECT_EQ(path[1].vertex, h.V(h.isend));
  EXPECT_EQ(path[2].vertex, h.V(h.irecv));
  EXPECT_EQ(path[3].vertex, h.V(h.relax));
}

TEST(DetectBacktrack, PickTheEdgeThatWaitedMost) {
  HaloProgram h;
  Profile p = HaloProfile(h, 8, 3, 2.0);
  // Rank 2 also waited a little for rank 1: the walk must go to rank 3.
  for (DepRow &d : p.ranks[2].deps)
    if (d.kind == DepKind::Recv && d.peer == 1 && d.wait_seconds == 0)
      d.wait_seconds = 0.2;
  scalana::Run run = BuildRun(h.psg, p, "run8");
  auto path = Backtrack(h.psg, run, h.V(h.waitall), 2, DetectOptions{},
                        [](VertexId, int) { return false; });
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[1].rank, 3);
  EXPECT_NEAR(path[1].wait, 1.0, 1e-6);
}

TEST(DetectBacktrack, ReceivesBeforeSendsAtACompletion) {
  // A Waitall reports its one wait on every row, sends included: the walk
  // must follow the late data (receive from rank 3), not a send.
  HaloProgram h;
  Profile p = HaloProfile(h, 8, 3, 2.0);
  for (DepRow &d : p.ranks[2].deps)
    if (d.kind == DepKind::Send && d.ctx == p.ranks[2].deps[2].ctx)
      d.wait_seconds = 1.0;
  scalana::Run run = BuildRun(h.psg, p, "run8");
  auto path = Backtrack(h.psg, run, h.V(h.waitall), 2, DetectOptions{},
                        [](VertexId, int) { return false; });
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[1].vertex, h.V(h.isend));
  EXPECT_EQ(path[1].rank, 3);
}

TEST(DetectBacktrack, OneSidedGoesToTheTargetAndArmsStaySeparate) {
  // main: Loop(5); Branch(6){ arm 0: Loop(7); arm 1: Loop(8) }; MPI_Put(9)
  FnBuilder main("main");
  uint32_t before = main.Add(0, VertexKind::Loop, 5);
  uint32_t br = main.Add(0, VertexKind::Branch, 6);
  uint32_t arm0 = main.Add(br, VertexKind::Loop, 7);
  main.fn.vertices[arm0].arm = 0;
  uint32_t arm1 = main.Add(br, VertexKind::Loop, 8);
  main.fn.vertices[arm1].arm = 1;
  uint32_t put = main.Add(0, VertexKind::Mpi, 9, "MPI_Put", MpiClass::OneSided);
  Psg psg = Psg::Build({main.fn});
  ProfileBuilder b(2);
  for (int r = 0; r < 2; ++r) {
    b.Cpu(r, main.Id(before), 1.0);
    b.Cpu(r, main.Id(r == 0 ? arm0 : arm1), 1.0); // rank 1 took arm 1
    b.Mpi(r, main.Id(put), 0.5);
  }
  b.Dep(0, main.Id(put), DepKind::Rma, 1, 0.5);
  scalana::Run run = BuildRun(psg, b.p, "rma");
  auto V = [&](uint32_t l) { return psg.Resolve({main.Id(l)}); };
  auto path = Backtrack(psg, run, V(put), 0, DetectOptions{}, [](VertexId, int) { return false; });
  ASSERT_GE(path.size(), 4u);
  EXPECT_EQ(path[1].via, "rma");
  EXPECT_EQ(path[1].vertex, V(put));
  EXPECT_EQ(path[1].rank, 1);
  // On rank 1 the branch is entered at the arm that ran, and arm 0 (which
  // did not run before it) is never stepped into; then the loop before it.
  std::vector<VertexId> after;
  for (size_t i = 2; i < path.size(); ++i)
    after.push_back(path[i].vertex);
  EXPECT_EQ(after, (std::vector<VertexId>{V(br), V(arm1), V(before)}));
}

TEST(DetectBacktrack, RingOfBlockingReceivesTerminates) {
  FnBuilder main("main");
  uint32_t loop = main.Add(0, VertexKind::Loop, 5);
  uint32_t recv = main.Add(loop, VertexKind::Mpi, 6, "MPI_Recv", MpiClass::P2PBlocking);
  uint32_t send = main.Add(loop, VertexKind::Mpi, 7, "MPI_Send", MpiClass::P2PBlocking);
  Psg psg = Psg::Build({main.fn});
  const int n = 5;
  ProfileBuilder b(n);
  for (int r = 0; r < n; ++r) {
    b.Mpi(r, main.Id(recv), 1.0);
    b.Mpi(r, main.Id(send), 0.01);
    b.Dep(r, main.Id(recv), DepKind::Recv, (r + n - 1) % n, 1.0);
    b.Dep(r, main.Id(send), DepKind::Send, (r + 1) % n, 0);
  }
  scalana::Run run = BuildRun(psg, b.p, "ring");
  VertexId vrecv = psg.Resolve({main.Id(recv)}), vsend = psg.Resolve({main.Id(send)});
  // The walk goes recv(0) -> send(4) -> recv(4) -> send(3) ... -> send(0) -> recv(0): a cycle.
  auto path = Backtrack(psg, run, vrecv, 0, DetectOptions{}, [](VertexId, int) { return false; });
  std::set<int> ranks;
  for (const PathStep &s : path)
    ranks.insert(s.rank);
  EXPECT_EQ(ranks.size(), size_t(n));
  EXPECT_LE(path.size(), size_t(2 * n + 1));
  EXPECT_EQ(path[1].vertex, vsend);
  EXPECT_EQ(path[1].rank, n - 1);
}

TEST(DetectBacktrack, RecursionTerminatesAndReachesTheCaller) {
  // main: Call walk(3); MPI_Barrier(4).  walk: Loop(21){ Call walk(22) }; MPI_Send(23)
  FnBuilder walk("walk", 20);
  uint32_t wloop = walk.Add(0, VertexKind::Loop, 21);
  uint32_t wcall = walk.Add(wloop, VertexKind::Call, 22, "walk");
  uint32_t wsend = walk.Add(0, VertexKind::Mpi, 23, "MPI_Send", MpiClass::P2PBlocking);
  FnBuilder main("main");
  uint32_t call = main.Add(0, VertexKind::Call, 3, "walk");
  main.Add(0, VertexKind::Mpi, 4, "MPI_Barrier", MpiClass::Collective);
  Psg psg = Psg::Build({main.fn, walk.fn});
  VertexId vsend = psg.Resolve({main.Id(call), walk.Id(wsend)});
  VertexId vloop = psg.Resolve({main.Id(call), walk.Id(wloop)});
  VertexId deep = psg.Resolve({main.Id(call), walk.Id(wcall), walk.Id(wloop)});
  ASSERT_NE(vsend, kNoVertex);
  ASSERT_NE(deep, kNoVertex);
  ProfileBuilder b(2);
  for (int r = 0; r < 2; ++r) {
    b.p.contexts.push_back({main.Id(call), walk.Id(wloop)});
    b.p.ranks[r].vertices.push_back({uint32_t(b.p.contexts.size() - 1), 100, 1.0, {}});
    b.p.contexts.push_back({main.Id(call), walk.Id(wcall), walk.Id(wloop)});
    b.p.ranks[r].vertices.push_back({uint32_t(b.p.contexts.size() - 1), 100, 1.0, {}});
    b.p.contexts.push_back({main.Id(call), walk.Id(wsend)});
    b.p.ranks[r].mpi.push_back({uint32_t(b.p.contexts.size() - 1), 1, 0.5, 0});
  }
  scalana::Run run = BuildRun(psg, b.p, "rec");
  EXPECT_EQ(run.unresolved_contexts, 0u);
  auto path = Backtrack(psg, run, vsend, 0, DetectOptions{}, [](VertexId, int) { return false; });
  ASSERT_FALSE(path.empty());
  bool loop_seen = false;
  for (const PathStep &s : path)
    loop_seen |= s.vertex == vloop;
  EXPECT_TRUE(loop_seen) << "control dependence: the loop before the send is entered";
  EXPECT_LT(path.size(), 20u);
}

// --- Non-scalable vertices and ranking -----------------------------------------

// Runs of HaloProgram at each P: RELAX(p, rank) and TAIL(p, rank) CPU seconds;
// each rank waits WAIT(p, rank) at the allreduce, whose time is MPI_BASE
// more.
template <typename RelaxFn, typename TailFn, typename WaitFn>
std::vector<scalana::Run> ScalingRuns(HaloProgram &h, std::vector<int> scales, RelaxFn relax,
                                      TailFn tail, WaitFn wait, double mpi_base) {
  std::vector<scalana::Run> runs;
  for (int p : scales) {
    ProfileBuilder b(p);
    for (int r = 0; r < p; ++r) {
      b.Cpu(r, h.main.Id(h.relax), relax(p, r));
      b.Cpu(r, h.main.Id(h.tail), tail(p, r));
      b.Mpi(r, h.main.Id(h.allreduce), mpi_base + wait(p, r));
      b.Dep(r, h.main.Id(h.allreduce), DepKind::Coll, -1, wait(p, r));
    }
    runs.push_back(BuildRun(h.psg, b.p, "np" + std::to_string(p)));
  }
  return runs;
}

TEST(DetectNonScalable, WeakScalingFindsTheGrowingVertexAndItsCause) {
  HaloProgram h;
  // The tail loop on the last rank grows with p (e.g. a loop over ranks):
  // everyone else waits for it at the allreduce.
  auto runs = ScalingRuns(
      h, {4, 8, 16}, [](int, int) { return 1.0; },
      [](int p, int r) { return r == p - 1 ? 0.5 + 0.1 * p : 0.5; },
      [](int p, int r) { return r == p - 1 ? 0.0 : 0.1 * p; }, 0.01);
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(h.psg, runs, o);
  EXPECT_EQ(res.backtrack_run, 2u);
  EXPECT_DOUBLE_EQ(res.expected_slope, 0);
  ASSERT_FALSE(res.non_scalable.empty());
  EXPECT_EQ(res.non_scalable[0].vertex, h.V(h.allreduce)) << "largest (slope x share)";
  bool relax_flagged = false;
  for (const auto &ns : res.non_scalable)
    relax_flagged |= ns.vertex == h.V(h.relax);
  EXPECT_FALSE(relax_flagged) << "constant under weak scaling";
  // Backtracking from the allreduce starts at the latest arrival (rank 15)
  // and finds its tail loop.
  const RootCause *rc = FindCause(res, h.V(h.tail));
  ASSERT_NE(rc, nullptr);
  EXPECT_EQ(rc->culprit_rank, 15);
  EXPECT_EQ(rc->path.front().vertex, h.V(h.allreduce));
  EXPECT_EQ(rc->path.front().rank, 15);
  // The path starts at the latest arrival itself: every other member's wait
  // there is the cause's (1.6 s each at 16 ranks).
  EXPECT_EQ(rc->waiting_ranks, 15);
  EXPECT_NEAR(rc->waits_caused, 15 * 1.6, 1e-4);
  EXPECT_GT(rc->score, 0.3);
  EXPECT_LE(rc->score, 1.0);

  // Strong scaling expectation: relax (constant) now scales worse than -1.
  o.scaling = ScalingMode::Strong;
  DetectResult strong = Detect(h.psg, runs, o);
  EXPECT_DOUBLE_EQ(strong.expected_slope, -1);
  bool relax_strong = false;
  for (const auto &ns : strong.non_scalable)
    relax_strong |= ns.vertex == h.V(h.relax);
  EXPECT_TRUE(relax_strong);
}

TEST(DetectNonScalable, WhatIsFoundDoesNotDependOnHowManyAreShown) {
  // Weak scaling: the allreduce's waits grow most (the first non-scalable
  // vertex), the tail loop grows on every rank (as Kripke's fill did on 2
  // cores; the costliest computation cause, by its growth), the relax loop is a little
  // slower on the last rank. --top says how many are reported, not which
  // vertices the backtracking may start from or call problematic: cut to
  // one non-scalable vertex before backtracking, the tail was no cause.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {4, 8, 16}, [](int p, int r) { return r == p - 1 ? 1.0 + 0.02 * p : 1.0; },
      [](int p, int r) { return 0.5 + 0.06 * p + (r % 3) * 0.01; },
      [](int p, int r) { return r == p - 1 ? 0.0 : 0.3 * p; }, 0.01);
  DetectOptions all, one;
  all.scaling = one.scaling = ScalingMode::Weak;
  one.top = 1;
  DetectResult a = Detect(h.psg, runs, all), b = Detect(h.psg, runs, one);
  ASSERT_GE(a.non_scalable.size(), 2u) << "the premise: more non-scalable vertices than shown";
  EXPECT_EQ(a.non_scalable[0].vertex, h.V(h.allreduce));
  // By what a fix saves: the allreduce's own growth (0.3 s a rank per
  // rank, which no rank's lateness explains), then the tail.
  ASSERT_GE(a.root_causes.size(), 2u);
  EXPECT_EQ(a.root_causes[0].vertex, h.V(h.allreduce));
  EXPECT_TRUE(a.root_causes[0].communication);
  EXPECT_EQ(a.root_causes[1].vertex, h.V(h.tail));
  ASSERT_EQ(b.root_causes.size(), 1u);
  EXPECT_EQ(b.root_causes[0].vertex, a.root_causes[0].vertex);
  EXPECT_DOUBLE_EQ(b.root_causes[0].cost_seconds, a.root_causes[0].cost_seconds);
  // Two shown: the tail is still found, from the same backtracking.
  one.top = 2;
  DetectResult two = Detect(h.psg, runs, one);
  ASSERT_EQ(two.root_causes.size(), 2u);
  EXPECT_EQ(two.root_causes[1].vertex, h.V(h.tail));
  EXPECT_DOUBLE_EQ(two.root_causes[1].cost_seconds, a.root_causes[1].cost_seconds);
  ASSERT_EQ(b.non_scalable.size(), 1u);
  EXPECT_EQ(b.non_scalable[0].vertex, a.non_scalable[0].vertex);
}

// --- --scaling auto: which experiment was it? --------------------------------------

// Runs of HaloProgram at each P: RELAX(p, rank) and TAIL(p, rank) CPU seconds;
// the allreduce's wall time grows with p as on an oversubscribed machine, so
// the program's total time always rises with the rank count.
template <typename RelaxFn, typename TailFn>
std::vector<scalana::Run> ScalingRuns(HaloProgram &h, std::vector<int> scales, RelaxFn relax,
                                      TailFn tail) {
  // inflated waiting, the same with either experiment
  return ScalingRuns(
      h, scales, relax, tail, [](int p, int) { return 0.4 * p; }, 0.0);
}

TEST(DetectAutoScaling, ConstantComputationPerRankIsWeak) {
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8, 16}, [](int, int) { return 2.0; }, [](int, int) { return 1.0; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  ASSERT_TRUE(inf.ok);
  EXPECT_EQ(inf.chosen, ScalingMode::Weak);
  EXPECT_NEAR(inf.median_slope, 0, 1e-6);
  EXPECT_EQ(inf.vertices, 2u);

  DetectResult res = Detect(h.psg, runs, DetectOptions{}); // auto is the default
  EXPECT_GT(res.program_slope, 0.3) << "the wall-clock total rises: it must not set the slope";
  EXPECT_EQ(res.scaling_used, ScalingMode::Weak);
  EXPECT_DOUBLE_EQ(res.expected_slope, 0);
  EXPECT_NE(res.scaling_reason.find("auto chose weak"), std::string::npos) << res.scaling_reason;
  for (const auto &ns : res.non_scalable)
    EXPECT_NE(ns.vertex, h.V(h.relax)) << "constant under weak scaling";
}

TEST(DetectAutoScaling, ComputationFallingAsOneOverPIsStrong) {
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8, 16}, [](int p, int) { return 16.0 / p; }, [](int p, int) { return 4.0 / p; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  ASSERT_TRUE(inf.ok);
  EXPECT_EQ(inf.chosen, ScalingMode::Strong);
  EXPECT_NEAR(inf.median_slope, -1, 1e-6);
  DetectResult res = Detect(h.psg, runs, DetectOptions{});
  EXPECT_EQ(res.scaling_used, ScalingMode::Strong);
  EXPECT_DOUBLE_EQ(res.expected_slope, -1);
  EXPECT_NE(res.scaling_reason.find("auto chose strong"), std::string::npos) << res.scaling_reason;
  // A serial part that stays constant (Amdahl) is what the strong model flags.
  auto amdahl = ScalingRuns(
      h, {2, 4, 8, 16}, [](int p, int) { return 16.0 / p; }, [](int, int) { return 3.0; });
  DetectResult res2 = Detect(h.psg, amdahl, DetectOptions{});
  EXPECT_EQ(res2.scaling_used, ScalingMode::Strong)
      << "the parallel part dominates at the smallest scale: " << res2.scaling_reason;
  ASSERT_FALSE(res2.non_scalable.empty());
  bool tail_flagged = false;
  for (const auto &ns : res2.non_scalable)
    tail_flagged |= ns.vertex == h.V(h.tail);
  EXPECT_TRUE(tail_flagged);
}

TEST(DetectAutoScaling, OneGrowingVertexDoesNotTurnWeakIntoSomethingElse) {
  // Weak scaling with one vertex growing linearly in p (a scan over all
  // ranks): by 32 ranks it is most of the computation, yet the experiment is
  // still weak and the growing vertex is the one flagged.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8, 16, 32}, [](int, int) { return 1.0; }, [](int p, int) { return 0.1 * p; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  ASSERT_TRUE(inf.ok);
  EXPECT_GT(inf.total_slope, 0.3) << "all computation together grows";
  EXPECT_EQ(inf.chosen, ScalingMode::Weak);
  EXPECT_NEAR(inf.median_slope, 0, 1e-6);
  DetectResult res = Detect(h.psg, runs, DetectOptions{});
  EXPECT_EQ(res.scaling_used, ScalingMode::Weak);
  bool tail_flagged = false;
  for (const auto &ns : res.non_scalable) {
    tail_flagged |= ns.vertex == h.V(h.tail);
    EXPECT_NE(ns.vertex, h.V(h.relax));
  }
  EXPECT_TRUE(tail_flagged);
}

TEST(DetectAutoScaling, WorkInjectedOnOneRankIsStillWeak) {
  // Rank 0 does 3 s more at every scale: its mean over ranks falls as 1/p,
  // its busiest rank does not.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {1, 2, 4, 8}, [](int, int r) { return r == 0 ? 4.0 : 1.0; }, [](int, int) { return 0.5; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  ASSERT_TRUE(inf.ok);
  EXPECT_EQ(inf.chosen, ScalingMode::Weak);
}

TEST(DetectAutoScaling, AFallingVertexAloneDoesNotMakeItStrong) {
  // The larger vertex at the smallest scale falls as 1/p on its busiest
  // rank, the other grows as much: all computation per rank stays 4 s.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8}, [](int p, int) { return 6.0 / p; }, [](int p, int) { return 4.0 - 6.0 / p; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  ASSERT_TRUE(inf.ok);
  EXPECT_LT(inf.median_slope, -0.5);
  EXPECT_NEAR(inf.total_slope, 0, 1e-6);
  EXPECT_TRUE(inf.disagree);
  EXPECT_EQ(inf.chosen, ScalingMode::Weak);
  DetectResult res = Detect(h.psg, runs, DetectOptions{});
  EXPECT_NE(res.scaling_reason.find("flat as in weak scaling"), std::string::npos)
      << res.scaling_reason;
}

TEST(DetectAutoScaling, TooLittleComputationAssumesWeakAndSaysSo) {
  // A few samples (10 ms each) of computation that halve with p: one
  // sample more or less would change the slope, so weak is kept.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8}, [](int p, int) { return 0.08 / (p / 2); }, [](int, int) { return 0.0; });
  ScalingInference inf = InferScaling(h.psg, runs, 0.02);
  EXPECT_FALSE(inf.ok);
  EXPECT_FALSE(inf.enough);
  EXPECT_LT(inf.median_slope, -0.5) << "the measured slope is still reported";
  DetectResult res = Detect(h.psg, runs, DetectOptions{});
  EXPECT_EQ(res.scaling_used, ScalingMode::Weak);
  EXPECT_NE(res.scaling_reason.find("too little"), std::string::npos) << res.scaling_reason;
  // Explicit modes are taken as given, with no inference.
  DetectOptions strong;
  strong.scaling = ScalingMode::Strong;
  DetectResult s = Detect(h.psg, runs, strong);
  EXPECT_EQ(s.scaling_used, ScalingMode::Strong);
  EXPECT_TRUE(s.scaling_reason.empty());
}

TEST(DetectNonScalable, CodeOnlySomeRanksRunIsMergedOverThoseRanks) {
  // Master/worker under weak scaling: rank 0 never runs relax, every worker
  // runs it 1 s. Averaged over all ranks it would grow from 0.5 s (1 of 2
  // ranks) to 0.94 s (15 of 16); per rank that runs it, it is constant.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {2, 4, 8, 16}, [](int, int r) { return r == 0 ? 0.0 : 1.0; },
      [](int, int) { return 0.5; });
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(h.psg, runs, o);
  for (const auto &ns : res.non_scalable) {
    EXPECT_NE(ns.vertex, h.V(h.relax)) << "slope " << ns.slope;
    if (ns.vertex == h.V(h.relax))
      for (auto [p, t] : ns.merged)
        EXPECT_NEAR(t, 1.0, 1e-6) << p << " ranks";
  }
}

TEST(DetectNonScalable, GrowthOfAFewSamplesIsNoise) {
  // 100 Hz, weak scaling: tail goes 1 -> 4 samples per rank (slope 0.67),
  // relax 100 -> 300 samples; only relax is non-scalable.
  HaloProgram h;
  auto runs = ScalingRuns(
      h, {1, 2, 4, 8}, [](int p, int) { return p == 8 ? 3.0 : 1.0 * (1 + p / 4.0); },
      [](int p, int) { return p == 8 ? 0.04 : 0.01; });
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  o.min_share = 0;
  DetectResult res = Detect(h.psg, runs, o);
  bool relax = false;
  for (const auto &ns : res.non_scalable) {
    EXPECT_NE(ns.vertex, h.V(h.tail)) << "slope " << ns.slope;
    relax |= ns.vertex == h.V(h.relax);
  }
  EXPECT_TRUE(relax);
}

TEST(DetectRanking, RootCausesOrderedByCost) {
  // Two independent slow spots: rank 1's relax (+0.5 s) and rank 6's tail (+2 s).
  HaloProgram h;
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.relax), r == 1 ? 1.5 : 1.0);
    b.Cpu(r, h.main.Id(h.tail), r == 6 ? 2.5 : 0.5);
  }
  scalana::Run run = BuildRun(h.psg, b.p, "run8");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  ASSERT_EQ(res.root_causes.size(), 2u);
  EXPECT_EQ(res.root_causes[0].vertex, h.V(h.tail));
  EXPECT_EQ(res.root_causes[0].culprit_rank, 6);
  EXPECT_NEAR(res.root_causes[0].cost_seconds, 2.0, 1e-5);
  EXPECT_EQ(res.root_causes[1].vertex, h.V(h.relax));
  EXPECT_NEAR(res.root_causes[1].cost_seconds, 0.5, 1e-5);
  EXPECT_GT(res.root_causes[0].score, res.root_causes[1].score);
}

// 8 ranks of HaloProgram where rank 3's relax and tail loops take RELAX and
// TAIL seconds (1 and 0.5 elsewhere); the others wait the difference at the
// allreduce.
scalana::Run Rank3Late(HaloProgram &h, double relax, double tail) {
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.relax), r == 3 ? relax : 1.0);
    b.Cpu(r, h.main.Id(h.tail), r == 3 ? tail : 0.5);
    double wait = r == 3 ? 0.0 : relax - 1.0 + tail - 0.5;
    b.Mpi(r, h.main.Id(h.allreduce), 0.01 + wait);
    b.Dep(r, h.main.Id(h.allreduce), DepKind::Coll, -1, wait);
  }
  return BuildRun(h.psg, b.p, "run8");
}

// RES names V a root cause on rank 3 costing COST.
void ExpectRank3Cause(const DetectResult &res, VertexId v, double cost, const char *why) {
  const RootCause *rc = FindCause(res, v);
  ASSERT_NE(rc, nullptr) << why;
  EXPECT_EQ(rc->culprit_rank, 3);
  EXPECT_NEAR(rc->cost_seconds, cost, 1e-5);
}

TEST(DetectRanking, ThePathsCostliestProblematicVertexIsTheCause) {
  // Rank 3's tail loop takes 1 s more than elsewhere; farther back on its
  // path, its relax loop is abnormal by a noise-level 0.35 s. The cause is
  // the costly one, not the one farthest back.
  HaloProgram h;
  DetectResult res = Detect(h.psg, {Rank3Late(h, 1.35, 1.5)}, DetectOptions{});
  ASSERT_FALSE(res.root_causes.empty());
  EXPECT_EQ(res.root_causes[0].vertex, h.V(h.tail));
  EXPECT_EQ(res.root_causes[0].culprit_rank, 3);
  EXPECT_NEAR(res.root_causes[0].cost_seconds, 1.0, 1e-5);
  // Both were on one path, and the relax loop was problematic on it.
  bool relax_on_path = false;
  for (const PathStep &ps : res.root_causes[0].path)
    relax_on_path |= ps.vertex == h.V(h.relax) && ps.rank == 3 && ps.problematic;
  EXPECT_TRUE(relax_on_path);
  // The relax loop, on the path that names the tail, is walked from all the
  // same and named after it (Quicksilver's injected loop lay so on the path
  // of a loop grown under load, and was lost).
  ExpectRank3Cause(res, h.V(h.relax), 0.35, "the abnormal relax loop is no root cause");
}

TEST(DetectRanking, AnAbnormalLoopIsTheCauseOfItsOwnExcess) {
  // Rank 3's relax loop takes 1 s more, and its tail loop, after it, 0.3 s
  // more. The walk from the tail passes the costlier relax; the tail is a
  // cause of its own all the same.
  HaloProgram h;
  DetectResult res = Detect(h.psg, {Rank3Late(h, 2.0, 0.8)}, DetectOptions{});
  ASSERT_GE(res.root_causes.size(), 2u);
  EXPECT_EQ(res.root_causes[0].vertex, h.V(h.relax));
  ExpectRank3Cause(res, h.V(h.tail), 0.3,
                   "the abnormal tail loop gave way to the relax loop behind it");
}

TEST(DetectRanking, NoRankWaitsForACauseLongerThanItsCost) {
  // Rank 3's neighbours wait 1 s each for it, but its relax loop is only
  // 0.5 s late: the rest of the lateness is not the loop's. The waits
  // traced to the loop are at most its cost per waiting rank.
  HaloProgram h;
  Profile p = HaloProfile(h, 8, 3, 2.0);
  for (VertexRow &row : p.ranks[3].vertices)
    if (row.cpu_seconds == 2.0) { // the slow relax loop, the only 2 s row
      row.cpu_seconds = 1.5;
      row.samples = uint64_t(std::llround(1.5 * p.meta.sampling.hz));
    }
  scalana::Run run = BuildRun(h.psg, p, "run8");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  const RootCause *rc = FindCause(res, h.V(h.relax));
  ASSERT_NE(rc, nullptr);
  EXPECT_EQ(rc->culprit_rank, 3);
  EXPECT_NEAR(rc->cost_seconds, 0.5, 1e-5);
  EXPECT_GE(rc->waiting_ranks, 2);
  EXPECT_GT(rc->waits_caused, 0);
  EXPECT_LE(rc->waits_caused, rc->waiting_ranks * rc->cost_seconds + 1e-9)
      << rc->waits_caused << " s of waiting on " << rc->waiting_ranks << " ranks for a "
      << rc->cost_seconds << " s cause";
}

TEST(DetectRanking, CostsSayWhatTheyAreOfAndWhatAFixSaves) {
  // Rank 3's relax takes 1 s more; its two neighbours wait 1 s each for it.
  HaloProgram h;
  Profile p = HaloProfile(h, 8, 3, 2.0);
  p.meta.wall_time = 6.0;
  scalana::Run run = BuildRun(h.psg, p, "run8");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  ASSERT_EQ(rc.vertex, h.V(h.relax));
  EXPECT_DOUBLE_EQ(rc.wall_time, 6.0);
  EXPECT_NEAR(rc.rank_time, run.rank_total[3], 1e-6);
  EXPECT_EQ(rc.waiting_ranks, 2);
  EXPECT_NEAR(rc.waits_caused, 2.0, 1e-5);
  EXPECT_NEAR(rc.saved_seconds, 1.0, 1e-5);
  EXPECT_FALSE(rc.communication);
  // Slow but off the critical path: nobody waits for it and its rank is not
  // the slowest, so a fix saves no wall time.
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.relax), r == 1 ? 1.5 : 1.0);
    b.Cpu(r, h.main.Id(h.tail), r == 6 ? 2.5 : 0.5);
  }
  DetectResult two = Detect(h.psg, {BuildRun(h.psg, b.p, "run8")}, DetectOptions{});
  const RootCause *relax = FindCause(two, h.V(h.relax));
  ASSERT_NE(relax, nullptr);
  EXPECT_DOUBLE_EQ(relax->saved_seconds, 0);
  EXPECT_NEAR(FindCause(two, h.V(h.tail))->saved_seconds, 2.0, 1e-5);
}

// Balanced computation; the halo's Waitall grows with the rank count because
// every rank talks to more peers with more bytes (an all-to-all pattern).
std::vector<scalana::Run> CommBoundRuns(HaloProgram &h, bool more_traffic,
                                        double relax_per_rank = 0) {
  std::vector<scalana::Run> runs;
  for (int p : {2, 4, 8, 16}) {
    ProfileBuilder b(p);
    for (int r = 0; r < p; ++r) {
      b.Cpu(r, h.main.Id(h.relax), relax_per_rank > 0 ? relax_per_rank * p : 1.0);
      b.Cpu(r, h.main.Id(h.tail), 0.5);
      int peers = more_traffic ? p - 1 : 2;
      double wait = 0.05 * p;
      b.Mpi(r, h.main.Id(h.waitall), wait, 10);
      for (int k = 1; k <= peers; ++k) {
        int peer = (r + k) % p;
        b.Dep(r, h.main.Id(h.isend), DepKind::Send, peer, 0);
        b.Dep(r, h.main.Id(h.irecv), DepKind::Recv, peer, 0);
        b.Dep(r, h.main.Id(h.waitall), DepKind::Recv, peer, wait);
        b.p.ranks[r].deps.back().count = 10;
        b.p.ranks[r].deps.back().bytes = 8000;
      }
    }
    runs.push_back(BuildRun(h.psg, b.p, "np" + std::to_string(p)));
  }
  return runs;
}

// Computation that grows too, but by a small part of the wait's growth
// (an all-to-all's send-buffer fill under the all-to-all): it may be named,
// and the communication loss it cannot explain is named as well.
TEST(DetectRanking, ACauseFarSmallerThanTheWaitLeavesTheCommunicationNamed) {
  HaloProgram h;
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(h.psg, CommBoundRuns(h, true, 0.01), o);
  const RootCause *relax = FindCause(res, h.V(h.relax));
  ASSERT_NE(relax, nullptr) << "the growing computation on the wait's path is a cause";
  EXPECT_LT(relax->cost_seconds, 0.25 * 0.7);
  const RootCause *rc = FindCause(res, h.V(h.waitall));
  ASSERT_NE(rc, nullptr) << "0.14 s of computation growth cannot explain 0.7 s of waiting";
  EXPECT_TRUE(rc->communication);
  EXPECT_GT(rc->cost_seconds, 0.5);
  EXPECT_NE(rc->explanation.find("messages per rank grow"), std::string::npos) << rc->explanation;
}

TEST(DetectRanking, CommunicationLossIsNamedWithWhatGrew) {
  HaloProgram h;
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(h.psg, CommBoundRuns(h, true), o);
  const RootCause *rc = FindCause(res, h.V(h.waitall));
  ASSERT_NE(rc, nullptr) << "a non-scalable wait no computation explains is the cause";
  EXPECT_TRUE(rc->communication);
  EXPECT_EQ(rc->small_ranks, 2);
  EXPECT_EQ(rc->big_ranks, 16);
  EXPECT_GT(rc->cost_seconds, 0.5);
  for (const RootCause &c : res.root_causes)
    EXPECT_NE(c.vertex, h.V(h.relax)) << "balanced computation is no cause";
  // 1 -> 15 peers per rank, messages and bytes alike.
  EXPECT_NE(rc->explanation.find("messages per rank grow x15.0"), std::string::npos)
      << rc->explanation;
  EXPECT_NE(rc->explanation.find("peers per rank grow"), std::string::npos) << rc->explanation;
  // The same wait growth with constant traffic: the ranks wait longer.
  DetectResult flat = Detect(h.psg, CommBoundRuns(h, false), o);
  const RootCause *f = FindCause(flat, h.V(h.waitall));
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->explanation.find("do not"), std::string::npos) << f->explanation;
}

// A communication layer that polls memory other ranks write (bale's
// conveyors): main's loop computes, then waits in layer_wait's polling loop
// in mylayer/poll.c, which no wrapper times. The last rank's work grows
// with p (0.05 s per other rank); the others poll while they wait for it,
// and every poll scans all p mailboxes (0.02 s per rank).
struct PollingLayerProgram {
  FnBuilder main{"main"}, layer{"layer_wait", 90};
  uint32_t work, call, spin;
  Psg psg;
  PollingLayerProgram() {
    uint32_t outer = main.Add(0, VertexKind::Loop, 10);
    work = main.Add(outer, VertexKind::Loop, 11);
    call = main.Add(outer, VertexKind::Call, 14, "layer_wait");
    spin = layer.Add(0, VertexKind::Loop, 100);
    layer.Add(0, VertexKind::Mpi, 105, "MPI_Win_sync", MpiClass::Other);
    for (LocalVertex &v : layer.fn.vertices)
      v.loc.file = "../src/mylayer/poll.c";
    layer.fn.loc.file = "../src/mylayer/poll.c";
    layer.fn.object = "/opt/app/lib/libmylayer.so.1";
    psg = Psg::Build({main.fn, layer.fn});
  }
  VertexId Work() { return psg.Resolve({main.Id(work)}); }
  VertexId Spin() { return psg.Resolve({main.Id(call), layer.Id(spin)}); }
  std::vector<scalana::Run> Runs() {
    std::vector<scalana::Run> runs;
    for (int p : {2, 4, 8}) {
      ProfileBuilder b(p);
      b.p.contexts.push_back({main.Id(call), layer.Id(spin)});
      const uint32_t in_spin = uint32_t(b.p.contexts.size() - 1);
      for (int r = 0; r < p; ++r) {
        const bool last = r == p - 1;
        b.Cpu(r, main.Id(work), last ? 1.0 + 0.05 * (p - 1) : 1.0);
        double spin_s = 0.02 * p + (last ? 0 : 0.05 * (p - 1));
        b.p.ranks[r].vertices.push_back({in_spin, uint64_t(spin_s * 100), spin_s, {}});
      }
      runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(p)));
    }
    return runs;
  }
};

TEST(DetectRanking, ADeclaredCommunicationLayersPollingIsWaitingNotComputation) {
  PollingLayerProgram prog;
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  // Undeclared, the polling loop grows most and is named first.
  DetectResult plain = Detect(prog.psg, prog.Runs(), o);
  ASSERT_FALSE(plain.root_causes.empty());
  EXPECT_EQ(plain.root_causes[0].vertex, prog.Spin());
  EXPECT_FALSE(plain.root_causes[0].communication);
  // It grows on every rank, in a file that makes MPI calls: the report says
  // how to declare it, by its directory.
  ASSERT_EQ(plain.hints.size(), 1u);
  EXPECT_NE(plain.hints[0].find("--comm-layer 'mylayer/*'"), std::string::npos) << plain.hints[0];
  // Declared by its path, by its function's name, by its shared object: the
  // last rank's work is first; the polling is communication, with the
  // pattern that named it.
  for (const char *pattern : {"mylayer/*", "layer_*", "libmylayer.so*"}) {
    o.comm_layers = {pattern, "no_such_layer"};
    DetectResult res = Detect(prog.psg, prog.Runs(), o);
    ASSERT_FALSE(res.root_causes.empty()) << pattern;
    EXPECT_EQ(res.root_causes[0].vertex, prog.Work()) << pattern;
    EXPECT_EQ(res.root_causes[0].culprit_rank, 7) << pattern;
    const RootCause *spin = FindCause(res, prog.Spin());
    ASSERT_NE(spin, nullptr) << pattern << ": a wait that grows is still reported";
    EXPECT_TRUE(spin->communication) << pattern;
    EXPECT_EQ(spin->comm_layer, pattern);
    ASSERT_EQ(res.comm_layer_vertices.size(), 2u);
    EXPECT_EQ(res.comm_layer_vertices[0].second, 2u) << "layer_wait's loop and MPI call";
    EXPECT_EQ(res.comm_layer_vertices[1].second, 0u);
    bool warned = false;
    for (const std::string &w : res.warnings)
      warned |= w.find("no_such_layer names no function") != std::string::npos;
    EXPECT_TRUE(warned) << "a pattern that names nothing is said so";
    EXPECT_TRUE(res.hints.empty()) << pattern << ": " << res.hints[0];
  }
}

TEST(DetectRanking, ACallsOwnSamplesLeadIntoTheCalledCode) {
  // A lambda inlined into a forall: rank 7's extra work shows mostly as
  // samples on the call's line (19 against a median of 3: abnormal), a
  // little in the lambda's loop (28 against 22: noise alone). The line to
  // fix is the loop; its cost includes the call's samples.
  FnBuilder main{"main"}, body{"Body", 90};
  uint32_t call = main.Add(0, VertexKind::Call, 32, "Body");
  uint32_t loop = body.Add(0, VertexKind::Loop, 100);
  Psg psg = Psg::Build({main.fn, body.fn});
  ProfileBuilder b(8);
  b.p.contexts.push_back({main.Id(call), body.Id(loop)});
  uint32_t in_loop = uint32_t(b.p.contexts.size() - 1);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, main.Id(call), r == 7 ? 0.19 : 0.03);
    double loop_s = r == 7 ? 0.28 : 0.22;
    b.p.ranks[r].vertices.push_back({in_loop, uint64_t(loop_s * 100), loop_s, {}});
  }
  scalana::Run run = BuildRun(psg, b.p, "run8");
  DetectResult res = Detect(psg, {run}, DetectOptions{});
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, psg.Resolve({main.Id(call), body.Id(loop)}));
  EXPECT_EQ(rc.culprit_rank, 7);
  EXPECT_NEAR(rc.cost_seconds, 0.16 + 0.06, 1e-4);
}

TEST(DetectRanking, ThinEvidenceSaysHowMuchLongerToRun) {
  // At 100 Hz rank 2's tail takes 12 samples against a median of 5: abnormal,
  // but 7 samples over the median is 3.1 standard deviations of its count.
  // Rank 5's relax, 200 samples over a median of 100, is 20.
  HaloProgram h;
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.relax), r == 5 ? 3.0 : 1.0);
    b.Cpu(r, h.main.Id(h.tail), r == 2 ? 0.12 : 0.05);
  }
  scalana::Run run = BuildRun(h.psg, b.p, "run8");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  const RootCause *tail = FindCause(res, h.V(h.tail));
  const RootCause *relax = FindCause(res, h.V(h.relax));
  ASSERT_TRUE(tail && relax);
  EXPECT_NEAR(tail->evidence_samples, 7, 1e-6);
  EXPECT_NEAR(tail->signal_to_noise, 7 / std::sqrt(5.0), 1e-6);
  EXPECT_TRUE(tail->thin_data);
  EXPECT_EQ(tail->run_longer, 3); // (5 / 3.13)^2 = 2.55
  EXPECT_FALSE(relax->thin_data);
  EXPECT_NEAR(relax->signal_to_noise, 20, 1e-6);
}

TEST(DetectRanking, OneLineInTwoContextsIsOneCauseWithTheirCostsSummed) {
  // miniFE's and Nekbone's injected loops are reached from two call sites:
  // rank 7's extra time splits between two contexts of one line, and each
  // alone scored half of what the line costs.
  FnBuilder main{"main"}, work{"Work", 90};
  uint32_t c1 = main.Add(0, VertexKind::Call, 30, "Work");
  uint32_t c2 = main.Add(0, VertexKind::Call, 31, "Work");
  uint32_t other = main.Add(0, VertexKind::Loop, 40);
  uint32_t loop = work.Add(0, VertexKind::Loop, 100);
  Psg psg = Psg::Build({main.fn, work.fn});
  ProfileBuilder b(8);
  b.p.contexts.push_back({main.Id(c1), work.Id(loop)});
  b.p.contexts.push_back({main.Id(c2), work.Id(loop)});
  const uint32_t in1 = uint32_t(b.p.contexts.size() - 2), in2 = in1 + 1;
  for (int r = 0; r < 8; ++r) {
    double l1 = r == 7 ? 0.6 : 0.3, l2 = r == 7 ? 0.5 : 0.3;
    b.p.ranks[r].vertices.push_back({in1, uint64_t(l1 * 100), l1, {}});
    b.p.ranks[r].vertices.push_back({in2, uint64_t(l2 * 100), l2, {}});
    b.Cpu(r, main.Id(other), r == 3 ? 0.8 : 0.4); // one context, costs 0.4
  }
  DetectResult res = Detect(psg, {BuildRun(psg, b.p, "run8")}, DetectOptions{});
  ASSERT_GE(res.root_causes.size(), 2u);
  const RootCause &top = res.root_causes[0];
  EXPECT_EQ(psg.vertex(top.vertex).loc.line, 100u);
  EXPECT_EQ(top.contexts, 2u);
  EXPECT_EQ(top.vertex, psg.Resolve({main.Id(c1), work.Id(loop)})); // the costlier context
  EXPECT_NEAR(top.cost_seconds, 0.3 + 0.2, 1e-6);
  EXPECT_EQ(top.culprit_rank, 7);
  int at_line = 0;
  for (const RootCause &rc : res.root_causes)
    at_line += psg.vertex(rc.vertex).loc.line == 100;
  EXPECT_EQ(at_line, 1);
}

TEST(DetectRanking, ATemplatesLineInTwoInstancesIsTwoCauses) {
  // RAJA's forall loop (forall.hpp:98) is one line of every kernel's
  // instance: two unrelated kernels' extra time on rank 7 is not one cause.
  FnBuilder main{"main"}, fill{"forall<Fill>", 90}, sweep{"forall<Sweep>", 90};
  uint32_t c1 = main.Add(0, VertexKind::Call, 30, "forall<Fill>");
  uint32_t c2 = main.Add(0, VertexKind::Call, 31, "forall<Sweep>");
  uint32_t l1 = fill.Add(0, VertexKind::Loop, 100), l2 = sweep.Add(0, VertexKind::Loop, 100);
  Psg psg = Psg::Build({main.fn, fill.fn, sweep.fn});
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, fill.Id(l1), r == 7 ? 0.6 : 0.3);
    b.Cpu(r, sweep.Id(l2), r == 7 ? 0.5 : 0.3);
  }
  b.p.contexts[0] = {main.Id(c1), fill.Id(l1)};
  b.p.contexts[1] = {main.Id(c2), sweep.Id(l2)};
  DetectResult res = Detect(psg, {BuildRun(psg, b.p, "run8")}, DetectOptions{});
  ASSERT_EQ(res.root_causes.size(), 2u);
  EXPECT_EQ(res.root_causes[0].vertex, psg.Resolve({main.Id(c1), fill.Id(l1)}));
  EXPECT_NEAR(res.root_causes[0].cost_seconds, 0.3, 1e-6);
  EXPECT_EQ(res.root_causes[1].vertex, psg.Resolve({main.Id(c2), sweep.Id(l2)}));
  EXPECT_NEAR(res.root_causes[1].cost_seconds, 0.2, 1e-6);
}

TEST(DetectNonScalable, ALinesOtherContextsAreSummedWhenOneIsReportedAlone) {
  // contexts12's boundary loop: sampling a periodic step can give one of
  // its contexts enough samples to pass alone; the others, each under the
  // share threshold, are the same growth and must still be found summed.
  FnBuilder main{"main"}, bnd{"Boundary", 90};
  std::vector<uint32_t> calls;
  for (uint32_t i = 0; i < 4; ++i)
    calls.push_back(main.Add(0, VertexKind::Call, 30 + i, "Boundary"));
  uint32_t interior = main.Add(0, VertexKind::Loop, 20);
  uint32_t loop = bnd.Add(0, VertexKind::Loop, 100);
  Psg psg = Psg::Build({main.fn, bnd.fn});
  std::vector<scalana::Run> runs;
  for (int p : {2, 4, 8}) {
    ProfileBuilder b(p, 1000);
    std::vector<uint32_t> ctx;
    for (uint32_t c : calls) {
      b.p.contexts.push_back({main.Id(c), bnd.Id(loop)});
      ctx.push_back(uint32_t(b.p.contexts.size() - 1));
    }
    for (int r = 0; r < p; ++r) {
      b.Cpu(r, main.Id(interior), 1.0);
      for (size_t i = 0; i < ctx.size(); ++i) {
        double t = (i == 0 ? 0.01 : 0.0012) * p; // at 8: 8%, then 0.95% each
        b.p.ranks[r].vertices.push_back({ctx[i], uint64_t(t * 1000), t, {}});
      }
    }
    runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(p)));
  }
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  // Each of the others under the share threshold even ahead (growth first,
  // docs/detect.md §4: 0.87% at 8 ranks, 3.2% at 32); summed, over it.
  o.min_share = 0.05;
  DetectResult res = Detect(psg, runs, o);
  size_t alone = 0, summed = 0;
  for (const NonScalableVertex &ns : res.non_scalable)
    if (psg.vertex(ns.vertex).loc.line == 100) {
      alone += ns.contexts == 1;
      summed += ns.contexts == 3;
    }
  EXPECT_EQ(alone, 1u);
  EXPECT_EQ(summed, 1u); // the three contexts not reported alone
}

TEST(DetectReport, ComputationCostIsAShareOfTheRanksCpuTime) {
  // Rank 5's relax costs 2 s over the median; the rank's CPU clock read
  // 10 s (its MPI polling included). The cost is 20% of that CPU time.
  HaloProgram h;
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r) {
    b.Cpu(r, h.main.Id(h.relax), r == 5 ? 3.0 : 1.0);
    b.p.ranks[r].cpu_time = r == 5 ? 10.0 : 4.0;
  }
  std::vector<scalana::Run> runs{BuildRun(h.psg, b.p, "run8")};
  DetectOptions o;
  DetectResult res = Detect(h.psg, runs, o);
  const RootCause *rc = FindCause(res, h.V(h.relax));
  ASSERT_NE(rc, nullptr);
  EXPECT_NEAR(rc->rank_cpu, 10.0, 1e-6);
  ReportInput in{h.psg, runs, res, o, "/bin/app", {}};
  std::ostringstream text, js;
  WriteTextReport(in, text);
  EXPECT_NE(text.str().find("20.0% of that rank's CPU time 10.000 s"), std::string::npos)
      << text.str();
  WriteJsonReport(in, js);
  auto doc = nlohmann::json::parse(js.str());
  EXPECT_NEAR(doc["root_causes"][0]["rank_cpu_seconds"].get<double>(), 10.0, 1e-6);
}

TEST(DetectRanking, OnlyThinEvidenceIsInconclusive) {
  HaloProgram h;
  ProfileBuilder b(8);
  for (int r = 0; r < 8; ++r)
    b.Cpu(r, h.main.Id(h.relax), r == 5 ? 1.35 : 1.0);
  DetectResult res = Detect(h.psg, {BuildRun(h.psg, b.p, "run8")}, DetectOptions{});
  ASSERT_FALSE(res.root_causes.empty());
  EXPECT_TRUE(res.root_causes[0].thin_data);
  EXPECT_NE(res.inconclusive.find("inconclusive"), std::string::npos);
  EXPECT_NE(res.inconclusive.find("35 samples over its median on rank 5"), std::string::npos)
      << res.inconclusive;
  EXPECT_NE(res.inconclusive.find("3x longer"), std::string::npos) << res.inconclusive;
}

TEST(DetectRanking, PmuEvidenceWhenCountersAreReal) {
  HaloProgram h;
  for (bool real : {true, false}) {
    ProfileBuilder b(4);
    b.p.meta.sampling.counters = {"PAPI_TOT_INS", "PAPI_TOT_CYC"};
    b.p.meta.sampling.counters_real = real;
    for (int r = 0; r < 4; ++r) {
      b.Cpu(r, h.main.Id(h.relax), r == 2 ? 2.0 : 1.0);
      b.p.ranks[r].vertices.back().counters = {r == 2 ? 4e9 : 1e9, r == 2 ? 2e9 : 1e9};
    }
    scalana::Run run = BuildRun(h.psg, b.p, "run4");
    DetectResult res = Detect(h.psg, {run}, DetectOptions{});
    ASSERT_FALSE(res.root_causes.empty());
    const RootCause &rc = res.root_causes[0];
    EXPECT_EQ(rc.culprit_rank, 2);
    if (!real) {
      EXPECT_TRUE(rc.evidence.empty()) << "no evidence from counters that are not real";
      continue;
    }
    ASSERT_EQ(rc.evidence.size(), 2u);
    EXPECT_EQ(rc.evidence[0].counter, "PAPI_TOT_INS");
    EXPECT_DOUBLE_EQ(rc.evidence[0].culprit, 4e9);
    EXPECT_DOUBLE_EQ(rc.evidence[0].median, 1e9);
    EXPECT_DOUBLE_EQ(rc.evidence[1].culprit, 2e9);
  }
}

TEST(DetectRuns, OneRunWarnsAndDoesAbnormalOnly) {
  HaloProgram h;
  scalana::Run run = BuildRun(h.psg, HaloProfile(h, 4, 1, 2.0), "only");
  DetectResult res = Detect(h.psg, {run}, DetectOptions{});
  EXPECT_TRUE(res.non_scalable.empty());
  bool warned = false;
  for (const auto &w : res.warnings)
    warned |= w.find("only one scale") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_FALSE(res.root_causes.empty());
}

TEST(DetectRuns, SameScaleTwiceIsARepetition) {
  HaloProgram h;
  std::vector<scalana::Run> runs{BuildRun(h.psg, HaloProfile(h, 4, 1, 2.0), "a"),
                                 BuildRun(h.psg, HaloProfile(h, 4, 1, 2.0), "b")};
  DetectResult res = Detect(h.psg, runs, DetectOptions{});
  bool warned = false;
  for (const auto &w : res.warnings)
    warned |= w.find("repetitions") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_TRUE(res.non_scalable.empty());
}

// --- Bad input ------------------------------------------------------------------

TEST(DetectInput, PsgMismatchNamesBothRuns) {
  Profile a, b;
  a.meta.psg_id = "0x1";
  b.meta.psg_id = "0x2";
  try {
    CheckSamePsg({a, b}, {"runA", "runB"});
    FAIL() << "expected an error";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("runA"), std::string::npos);
    EXPECT_NE(m.find("runB"), std::string::npos);
  }
  EXPECT_NO_THROW(CheckSamePsg({a, a}, {"x", "y"}));
  EXPECT_THROW(CheckProfileMatchesBinary(a, "runA", "/bin/app", "", "0x9"), Error);
  a.meta.build_id = "aa";
  EXPECT_THROW(CheckProfileMatchesBinary(a, "runA", "/bin/app", "bb", "0x1"), Error);
  EXPECT_NO_THROW(CheckProfileMatchesBinary(a, "runA", "/bin/app", "aa", "0x1"));
}

class DetectFiles : public ::testing::Test {
protected:
  std::filesystem::path dir;
  void SetUp() override {
    char tmpl[] = "/tmp/scalana-detect-test-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string Expect(const std::vector<std::string> &dirs, const LoadOptions &o = {}) {
    try {
      LoadRuns(dirs, o);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(DetectFiles, UnreadableDirectory) {
  std::string m = Expect({(dir / "nope").string()});
  EXPECT_NE(m.find("nope"), std::string::npos);
  EXPECT_NE(m.find("not a readable directory"), std::string::npos);
}

TEST_F(DetectFiles, MovedBinaryAsksForBinaryOption) {
  HaloProgram h;
  Profile p = HaloProfile(h, 2, 0, 1.0);
  p.meta.binary = (dir / "gone" / "app").string();
  // A file holds frames, not PSG ids: offsets of the executable (module 0).
  for (Context &c : p.contexts)
    for (uint64_t &f : c)
      f &= kFrameOffsetMask;
  std::filesystem::create_directory(dir / "run");
  WriteProfileFile(p, (dir / "run" / "profile.json.gz").string());
  std::string m = Expect({(dir / "run").string()});
  EXPECT_NE(m.find("--binary"), std::string::npos) << m;
  LoadOptions o;
  o.binary = (dir / "also-gone").string();
  m = Expect({(dir / "run").string()}, o);
  EXPECT_NE(m.find("also-gone"), std::string::npos) << m;
}

TEST_F(DetectFiles, TruncatedProfileIsAnError) {
  HaloProgram h;
  std::filesystem::create_directory(dir / "run");
  std::string file = (dir / "run" / "profile.json.gz").string();
  WriteProfileFile(HaloProfile(h, 4, 0, 1.0), file);
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  std::string m = Expect({(dir / "run").string()});
  EXPECT_NE(m.find("profile"), std::string::npos) << m;
}

// --- Reports ---------------------------------------------------------------------

TEST(DetectReport, JsonHasTheDesignFields) {
  HaloProgram h;
  std::vector<scalana::Run> runs{BuildRun(h.psg, HaloProfile(h, 4, 1, 2.0), "np4"),
                                 BuildRun(h.psg, HaloProfile(h, 8, 3, 3.0), "np8")};
  DetectOptions o;
  DetectResult res = Detect(h.psg, runs, o);
  ReportInput in{h.psg, runs, res, o, "/bin/app", {}};
  std::ostringstream js;
  WriteJsonReport(in, js);
  auto doc = nlohmann::json::parse(js.str());
  ASSERT_TRUE(doc["root_causes"].is_array());
  ASSERT_FALSE(doc["root_causes"].empty());
  auto &rc = doc["root_causes"][0];
  EXPECT_EQ(rc["file"], "app.c");
  EXPECT_EQ(rc["line"], 11);
  EXPECT_EQ(rc["kind"], "loop");
  EXPECT_EQ(rc["function"], "main");
  EXPECT_EQ(rc["call_path"], nlohmann::json::array({"main"}));
  EXPECT_EQ(rc["ranks"], nlohmann::json::array({3}));
  EXPECT_GT(rc["score"].get<double>(), 0);
  ASSERT_FALSE(rc["path"].empty());
  for (const char *k : {"kind", "name", "file", "line", "rank"})
    EXPECT_TRUE(rc["path"][0].contains(k)) << k;
  EXPECT_TRUE(doc["non_scalable"].is_array());
  EXPECT_TRUE(doc["abnormal"].is_array());
  EXPECT_EQ(doc["runs"].size(), 2u);
  std::ostringstream text, html;
  WriteTextReport(in, text);
  EXPECT_NE(text.str().find("app.c:11"), std::string::npos);
  EXPECT_NE(text.str().find("app.c not found"), std::string::npos);
  WriteHtmlReport(in, html);
  EXPECT_NE(html.str().find("<table class=heat>"), std::string::npos);
  EXPECT_EQ(html.str().find("http"), std::string::npos) << "self-contained: no links";
}

TEST(DetectReport, HtmlAnswersFirst) {
  HaloProgram h;
  std::vector<scalana::Run> runs{BuildRun(h.psg, HaloProfile(h, 4, 1, 2.0), "np4"),
                                 BuildRun(h.psg, HaloProfile(h, 8, 3, 3.0), "np8")};
  DetectOptions o;
  DetectResult res = Detect(h.psg, runs, o);
  ASSERT_FALSE(res.root_causes.empty());
  ReportInput in{h.psg, runs, res, o, "/bin/app", {}};
  std::ostringstream html;
  WriteHtmlReport(in, html);
  std::string page = html.str();
  // The first cause's row, its card with a plot, then the picture.
  size_t row = page.find("<tr id=rc1>"), card = page.find("<div class=cause id=cause1>"),
         plot = page.find("id=causeplot1"), graph = page.find("<h2 id=graph>");
  ASSERT_NE(row, std::string::npos);
  EXPECT_NE(page.find(">app.c:11</a>", row), std::string::npos) << "the row names file:line";
  ASSERT_NE(card, std::string::npos);
  ASSERT_NE(plot, std::string::npos);
  ASSERT_NE(graph, std::string::npos);
  EXPECT_LT(row, card);
  EXPECT_LT(card, plot);
  EXPECT_LT(plot, graph);
  // The cause's plot: a point per run that measured it, at its scale.
  std::string svg = page.substr(plot, page.find("</svg>", plot) - plot);
  EXPECT_NE(svg.find("<title>4 ranks: "), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>8 ranks: "), std::string::npos) << svg;
}

TEST(DetectReport, ScalingPlotDrawsAModelWhenGivenOne) {
  html::ScalingPlotData d;
  d.measured = {{2, 1.0}, {4, 1.5}, {8, 2.2}};
  std::string without = html::ScalingPlot(d, "p", "plot");
  EXPECT_EQ(without.find("class=model"), std::string::npos);
  EXPECT_EQ(without.find("class=predicted"), std::string::npos);
  d.model = {{2, 1.0}, {8, 2.2}, {64, 6.0}};
  d.model_label = "0.5 + 0.2*p^(1/2)";
  d.predicted = {{64, 6.0}};
  std::string with = html::ScalingPlot(d, "p", "plot");
  EXPECT_NE(with.find("<polyline class=model"), std::string::npos) << with;
  EXPECT_NE(with.find("<title>predicted at 64 ranks: 6.0000 s</title>"), std::string::npos);
  EXPECT_NE(with.find(">64</text>"), std::string::npos) << "the axis reaches the prediction";
  EXPECT_NE(with.find("model 0.5 + 0.2*p^(1/2)"), std::string::npos) << "in the legend";
  EXPECT_EQ(with.find("class=fit"), std::string::npos) << "no fit given, none drawn";
}

TEST(DetectReport, HtmlHeatTableBucketsWideRuns) {
  // 130 ranks: 2 ranks per cell, 65 cells; every rank index stays in range.
  HaloProgram h;
  std::vector<scalana::Run> runs{BuildRun(h.psg, HaloProfile(h, 130, 129, 2.0), "np130")};
  DetectOptions o;
  DetectResult res = Detect(h.psg, runs, o);
  ReportInput in{h.psg, runs, res, o, "/bin/app", {}};
  std::ostringstream html;
  WriteHtmlReport(in, html);
  std::string page = html.str();
  EXPECT_NE(page.find("each cell: max over 2 ranks"), std::string::npos);
  EXPECT_NE(page.find("title='rank 128: 2.0000 s'"), std::string::npos)
      << "the cell of ranks 128-129 shows the slow rank's relax time";
}

TEST(DetectPsg, RecordCompDirReachesEveryFunction) {
  auto fn = [](const char *key, int line) {
    char hash[32];
    std::snprintf(hash, sizeof hash, "0x%016llx",
                  (unsigned long long)scalana_function_hash(key, std::strlen(key)));
    return std::string(R"({"key": ")") + key + R"(", "name": ")" + key + R"(", "hash": ")" + hash +
           R"(", "linkage": "external", "file": "src/a.c", "line": )" + std::to_string(line) +
           R"(, "vertices": [{"id": 0, "kind": "function", "line": )" + std::to_string(line) +
           "}]}";
  };
  std::string rec = R"({"scalana_psg": 1, "module": "src/a.c", "comp_dir": "/home/u/app", )"
                    R"("language": "c", "functions": [)" +
                    fn("f", 1) + ", " + fn("g", 5) + "]}";
  std::string rec2 =
      R"({"scalana_psg": 1, "module": "b.c", "language": "c", "functions": [)" + fn("h", 1) + "]}";
  std::vector<uint8_t> bytes(rec.begin(), rec.end());
  bytes.push_back(0);
  bytes.insert(bytes.end(), rec2.begin(), rec2.end());
  bytes.push_back(0);
  std::vector<LocalPsg> fns = ParsePsgSection(bytes);
  ASSERT_EQ(fns.size(), 3u);
  EXPECT_EQ(fns[0].comp_dir, "/home/u/app");
  EXPECT_EQ(fns[1].comp_dir, "/home/u/app");
  EXPECT_EQ(fns[2].comp_dir, "") << "a record without comp_dir (no debug info)";
}

// A program whose sources sit in a compilation directory, with a decoy of the
// same relative name in another directory.
struct CompDirFixture {
  std::string comp_dir, other;
  CompDirFixture() {
    char a[] = "/tmp/scalana-compdir-XXXXXX", b[] = "/tmp/scalana-other-XXXXXX";
    comp_dir = mkdtemp(a);
    other = mkdtemp(b);
    for (const std::string &d : {comp_dir, other}) {
      std::filesystem::create_directories(d + "/src");
      std::ofstream f(d + "/src/app.c");
      for (int i = 1; i <= 20; ++i)
        f << (d == comp_dir ? "real" : "decoy") << i << "\n";
    }
  }
  ~CompDirFixture() {
    std::filesystem::remove_all(comp_dir);
    std::filesystem::remove_all(other);
  }
};

std::string TextReportOf(const std::string &comp_dir, const std::vector<std::string> &dirs) {
  FnBuilder main{"main"};
  main.fn.comp_dir = comp_dir;
  main.fn.loc.file = "src/app.c";
  uint32_t loop = main.Add(0, VertexKind::Loop, 11);
  main.fn.vertices[loop].loc.file = "src/app.c";
  Psg psg = Psg::Build({main.fn});
  ProfileBuilder b(4);
  for (int r = 0; r < 4; ++r)
    b.Cpu(r, main.Id(loop), r == 2 ? 3.0 : 1.0);
  std::vector<scalana::Run> runs{BuildRun(psg, b.p, "np4")};
  DetectOptions o;
  DetectResult res = Detect(psg, runs, o);
  ReportInput in{psg, runs, res, o, "/bin/app", dirs};
  std::ostringstream text;
  WriteTextReport(in, text);
  return text.str();
}

TEST(DetectReport, RelativeSourcesStartAtTheCompilationDirectory) {
  CompDirFixture fx;
  // comp_dir first, before the directories the command adds (binary, cwd).
  std::string t = TextReportOf(fx.comp_dir, {fx.other});
  EXPECT_NE(t.find("   11> real11"), std::string::npos) << t;
  EXPECT_EQ(t.find("decoy"), std::string::npos) << t;
  // Without comp_dir the next directory is used.
  t = TextReportOf("", {fx.other});
  EXPECT_NE(t.find("   11> decoy11"), std::string::npos) << t;
  // A comp_dir that no longer holds the file falls through to the others.
  t = TextReportOf("/nonexistent-build-dir", {fx.other});
  EXPECT_NE(t.find("decoy11"), std::string::npos) << t;
  // Nowhere: the report says where it looked, and nothing else is searched
  // (no walking up parent directories).
  t = TextReportOf("/nonexistent-build-dir", {});
  EXPECT_NE(t.find("source: src/app.c not found (looked in /nonexistent-build-dir)"),
            std::string::npos)
      << t;
}

// Aggregated messaging: a helper's MPI_Isend (Flush, line 5) reached from
// the main loop (call at 11) and from the termination phase (call at 20).
// Every rank sends 300 messages from the main loop and 40 from the end
// phase; END_SKEW of those 40 go to rank 3 (the rest spread evenly), and
// MAIN_TO_3 of the main loop's 300.
std::vector<HotSpot> HotSpotsOfTwoPaths(int end_skew, int main_to_3, VertexId *end_send) {
  FnBuilder main{"main"}, flush{"Flush", 1};
  uint32_t loop = main.Add(0, VertexKind::Loop, 10);
  uint32_t in_loop = main.Add(loop, VertexKind::Call, 11, "Flush");
  uint32_t at_end = main.Add(0, VertexKind::Call, 20, "Flush");
  uint32_t isend = flush.Add(0, VertexKind::Mpi, 5, "MPI_Isend", MpiClass::P2PNonBlocking);
  Psg psg = Psg::Build({main.fn, flush.fn});
  const int world = 4;
  ProfileBuilder b(world);
  b.p.contexts.push_back({main.Id(in_loop), flush.Id(isend)});
  b.p.contexts.push_back({main.Id(at_end), flush.Id(isend)});
  auto send = [&](int rank, uint32_t ctx, int peer, uint64_t n) {
    DepRow d;
    d.ctx = ctx;
    d.kind = DepKind::Send;
    d.peer = peer;
    d.comm = 0;
    d.count = n;
    d.bytes = 64 * n;
    b.p.ranks[rank].deps.push_back(d);
  };
  for (int r = 0; r < world; ++r) {
    b.p.ranks[r].mpi.push_back({0, 300, 0.0, 0});
    b.p.ranks[r].mpi.push_back({1, 40, 0.0, 0});
    std::vector<int> others;
    for (int q = 0; q < world; ++q)
      if (q != r)
        others.push_back(q);
    for (int q : others) {
      uint64_t main_n = r == 3 ? 100 : q == 3 ? main_to_3 : (300 - main_to_3) / 2;
      send(r, 0, q, main_n);
      uint64_t end_n = r == 3 ? 13 : q == 3 ? end_skew : (40 - end_skew) / 2;
      send(r, 1, q, end_n);
    }
  }
  std::vector<scalana::Run> runs{BuildRun(psg, b.p, "np4")};
  *end_send = psg.Resolve({main.Id(at_end), flush.Id(isend)});
  return FindHotSpots(psg, runs, 0);
}

TEST(DetectHotSpots, ASkewOfOnePathThatTheCallDoesNotShowIsNoHotSpot) {
  // The end phase sends rank 3 90 of its 159 messages (57%, fair share
  // 25%), but over the whole call rank 3 gets 390 of 1359 (29%).
  VertexId end_send;
  std::vector<HotSpot> spots = HotSpotsOfTwoPaths(30, 100, &end_send);
  EXPECT_TRUE(spots.empty()) << "rank " << spots[0].target_rank << " share " << spots[0].share;
}

TEST(DetectHotSpots, ASkewTheWholeCallShowsIsAHotSpotOfItsPath) {
  // Rank 3 also draws 200 of each producer's 300 in the main loop (690 of
  // the call's 1359, 51%): the end phase's skew is the call's own.
  VertexId end_send;
  std::vector<HotSpot> spots = HotSpotsOfTwoPaths(30, 200, &end_send);
  ASSERT_FALSE(spots.empty());
  bool end_found = false;
  for (const HotSpot &h : spots) {
    EXPECT_EQ(h.target_rank, 3);
    end_found |= h.vertex == end_send;
  }
  EXPECT_TRUE(end_found);
}

// exstack-style puts: every PE puts 120 times to every other PE, with
// BIG_TO_0 bytes per put to PE 0 and 64 bytes to the others.
std::vector<HotSpot> HotSpotsOfPuts(uint64_t big_to_0, VertexId *put) {
  FnBuilder main{"main"};
  uint32_t loop = main.Add(0, VertexKind::Loop, 10);
  uint32_t call = main.Add(loop, VertexKind::Mpi, 11, "shmem_putmem", MpiClass::OneSided);
  Psg psg = Psg::Build({main.fn});
  std::vector<scalana::Run> runs;
  for (int world : {4, 8}) {
    ProfileBuilder b(world);
    b.p.contexts.push_back({main.Id(call)});
    const uint32_t ctx = uint32_t(b.p.contexts.size() - 1);
    for (int r = 0; r < world; ++r) {
      b.p.ranks[r].mpi.push_back({ctx, uint64_t(120 * (world - 1)), 0.0, 0});
      for (int q = 0; q < world; ++q) {
        if (q == r)
          continue;
        DepRow d;
        d.ctx = ctx;
        d.kind = DepKind::Rma;
        d.peer = q;
        d.count = 120;
        d.bytes = 120 * (q == 0 ? big_to_0 : 64);
        b.p.ranks[r].deps.push_back(d);
      }
    }
    runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(world)));
  }
  *put = psg.Resolve({main.Id(call)});
  return FindHotSpots(psg, runs, 1);
}

TEST(DetectHotSpots, ATargetOfFarMoreBytesIsAHotSpotByBytes) {
  VertexId put;
  std::vector<HotSpot> spots = HotSpotsOfPuts(64 * 10, &put);
  ASSERT_EQ(spots.size(), 1u);
  const HotSpot &h = spots[0];
  EXPECT_EQ(h.vertex, put);
  EXPECT_EQ(h.measure, HotMeasure::Bytes);
  EXPECT_EQ(h.target_rank, 0);
  // 7 PEs put 120 x 640 bytes to PE 0; each other PE gets 120 x 64 from 7.
  EXPECT_EQ(h.bytes_to_target, 7u * 120 * 640);
  EXPECT_EQ(h.bytes, 7u * 120 * 640 + 7u * 7 * 120 * 64);
  EXPECT_NEAR(h.share, 640.0 / (640 + 7 * 64), 1e-9);
  EXPECT_EQ(h.to_target, 7u * 120); // its fair share of the puts
  ASSERT_EQ(h.by_scale.size(), 2u);
  EXPECT_EQ(h.by_scale[0].ranks, 4);
  EXPECT_EQ(h.by_scale[0].target, 0);
  EXPECT_NEAR(h.by_scale[0].share, 640.0 / (640 + 3 * 64), 1e-9);
}

TEST(DetectHotSpots, EvenBytesAndOperationsAreNoHotSpot) {
  VertexId put;
  EXPECT_TRUE(HotSpotsOfPuts(64, &put).empty());
  // 1.5x the bytes to PE 0 at 8 PEs is 21% of them: under twice the fair share.
  EXPECT_TRUE(HotSpotsOfPuts(96, &put).empty());
}

TEST(DetectReport, CallSitesTellTwoCallsOfOneFunctionApart) {
  // main: MPI_Init(104); Dot() at 145; loop(150){ compute }; Dot() at 152
  // Dot: loop(97); MPI_Allreduce(99). Only the Allreduce reached from line
  // 145 grows; MPI_Init grows too but is start-up, never flagged.
  FnBuilder main{"main"}, dot{"Dot", 90};
  uint32_t init = main.Add(0, VertexKind::Mpi, 104, "MPI_Init", MpiClass::Other);
  uint32_t call145 = main.Add(0, VertexKind::Call, 145, "Dot");
  uint32_t work = main.Add(0, VertexKind::Loop, 150);
  uint32_t call152 = main.Add(0, VertexKind::Call, 152, "Dot");
  uint32_t dot_loop = dot.Add(0, VertexKind::Loop, 97);
  uint32_t allreduce = dot.Add(0, VertexKind::Mpi, 99, "MPI_Allreduce", MpiClass::Collective);
  Psg psg = Psg::Build({main.fn, dot.fn});
  std::vector<scalana::Run> runs;
  for (int p : {2, 4, 8}) {
    ProfileBuilder b(p);
    auto in_dot = [&](uint32_t site, uint32_t local) {
      b.p.contexts.push_back({main.Id(site), dot.Id(local)});
      return uint32_t(b.p.contexts.size() - 1);
    };
    uint32_t ar145 = in_dot(call145, allreduce), ar152 = in_dot(call152, allreduce);
    uint32_t loop145 = in_dot(call145, dot_loop);
    for (int r = 0; r < p; ++r) {
      b.Mpi(r, main.Id(init), 0.2 * p);
      b.Cpu(r, main.Id(work), 2.0);
      b.p.ranks[r].vertices.push_back({loop145, 50, 0.5, {}});
      b.p.ranks[r].mpi.push_back({ar145, 1, 0.3 * p, 0});
      b.p.ranks[r].mpi.push_back({ar152, 1, 0.05, 0});
    }
    runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(p)));
  }
  DetectOptions o;
  DetectResult res = Detect(psg, runs, o);
  EXPECT_EQ(res.scaling_used, ScalingMode::Weak) << res.scaling_reason;
  VertexId v145 = psg.Resolve({main.Id(call145), dot.Id(allreduce)});
  VertexId vinit = psg.Resolve({main.Id(init)});
  ASSERT_FALSE(res.non_scalable.empty());
  EXPECT_EQ(res.non_scalable[0].vertex, v145);
  for (const auto &ns : res.non_scalable)
    EXPECT_NE(ns.vertex, vinit) << "MPI_Init is start-up cost";
  for (const auto &ab : res.abnormal)
    EXPECT_NE(ab.vertex, vinit);
  ReportInput in{psg, runs, res, o, "/bin/app", {}};
  std::ostringstream text;
  WriteTextReport(in, text);
  std::string t = text.str();
  EXPECT_NE(t.find("mpi MPI_Allreduce in Dot called at app.c:145"), std::string::npos) << t;
  EXPECT_EQ(t.find("called at app.c:152"), std::string::npos) << "not flagged: " << t;
  EXPECT_EQ(t.find("MPI_Init  slope"), std::string::npos) << t;
  EXPECT_NE(t.find("(2 ranks,"), std::string::npos) << t;
}

TEST(DetectReport, ACallIsDescribedInTheCodeThatMakesIt) {
  // main calls Solve at 10; Solve calls Dot at 50. The call at 50 is in
  // Solve, reached from main's line 10: never "call Dot in Dot".
  FnBuilder main{"main"}, solve{"Solve", 40}, dot{"Dot", 90};
  uint32_t call10 = main.Add(0, VertexKind::Call, 10, "Solve");
  uint32_t call50 = solve.Add(0, VertexKind::Call, 50, "Dot");
  uint32_t loop = dot.Add(0, VertexKind::Loop, 97);
  Psg psg = Psg::Build({main.fn, solve.fn, dot.fn});
  VertexId call = psg.Resolve({main.Id(call10), solve.Id(call50)});
  ASSERT_NE(call, kNoVertex);
  EXPECT_EQ(report_common::Describe(psg, call), "call Dot in Solve called at app.c:10");
  VertexId in_dot = psg.Resolve({main.Id(call10), solve.Id(call50), dot.Id(loop)});
  EXPECT_EQ(report_common::Describe(psg, in_dot), "loop in Dot called at app.c:50");
  EXPECT_EQ(report_common::Describe(psg, psg.Resolve({main.Id(call10)})), "call Solve");
}

TEST(DetectReport, AnIndirectCallSiteIsNamedByItsTargets) {
  // main calls through a pointer at line 4: a or b. The site reads with its
  // targets, never "call ?"; a target bound under it keeps its own name.
  FnBuilder main{"main"}, a{"a", 20}, b{"b", 30};
  uint32_t site = main.Add(0, VertexKind::Call, 4);
  main.fn.vertices[site].indirect = true;
  main.fn.vertices[site].candidates = {"a", "b"};
  uint32_t la = a.Add(0, VertexKind::Loop, 21);
  Psg psg = Psg::Build({main.fn, a.fn, b.fn});
  VertexId v = psg.Resolve({main.Id(site)});
  ASSERT_NE(v, kNoVertex);
  EXPECT_EQ(report_common::VertexName(psg, v), "(indirect: a | b)");
  VertexId in_a = psg.Resolve({main.Id(site), a.Id(la)});
  ASSERT_NE(in_a, kNoVertex);
  EXPECT_EQ(report_common::VertexName(psg, psg.vertex(in_a).parent), "a");
}

TEST(DetectReport, HugeRatiosAreNotPrinted) {
  // Time from 1 us to 2.7 ms: "x2700" says more about the first figure
  // than about the growth.
  std::string e = ExplainGrowth({{"time", 1e-6, 2.7e-3}, {"calls", 100, 100}}, ScalingMode::Weak);
  EXPECT_NE(e.find("time per rank grows more than x100"), std::string::npos) << e;
  e = ExplainGrowth({{"time", 0.1, 0.35}}, ScalingMode::Weak);
  EXPECT_NE(e.find("time per rank grows x3.5"), std::string::npos) << e;
}

TEST(DetectReport, AGrowthCostIsNamedAsSuch) {
  // Weak scaling: the loop at 20 takes 1 s per rank at 2 ranks and grows
  // as p on every rank alike, so no rank is over its median: its cost is
  // its growth beyond the expected (flat) scaling, and the report says so.
  FnBuilder main{"main"};
  uint32_t flat = main.Add(0, VertexKind::Loop, 10);
  uint32_t grows = main.Add(0, VertexKind::Loop, 20);
  Psg psg = Psg::Build({main.fn});
  std::vector<scalana::Run> runs;
  for (int p : {2, 4, 8}) {
    ProfileBuilder b(p, 1000);
    for (int r = 0; r < p; ++r) {
      b.Cpu(r, main.Id(flat), 2.0);
      b.Cpu(r, main.Id(grows), 0.5 * p);
    }
    runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(p)));
  }
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(psg, runs, o);
  VertexId v = psg.Resolve({main.Id(grows)});
  ASSERT_FALSE(res.root_causes.empty());
  const RootCause &rc = res.root_causes[0];
  EXPECT_EQ(rc.vertex, v);
  EXPECT_TRUE(rc.cost_is_growth);
  EXPECT_NEAR(rc.cost_seconds, 3.0, 0.1) << "4 s at 8 ranks against 1 s expected";
  ReportInput in{psg, runs, res, o, "/bin/app", {}};
  std::ostringstream text;
  WriteTextReport(in, text);
  EXPECT_NE(text.str().find("(growth beyond the expected scaling)"), std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("why:       \n"), std::string::npos) << "never blank";
}

TEST(DetectReport, NonScalableRowsThatReadAlikeShowTheirCallPaths) {
  // main calls Solve at 10 and at 11; Solve calls Dot at 50; Dot's
  // Allreduce (99) grows in both contexts. Both rows read "mpi
  // MPI_Allreduce in Dot called at app.c:50" unless their paths are shown.
  FnBuilder main{"main"}, solve{"Solve", 40}, dot{"Dot", 90};
  uint32_t call10 = main.Add(0, VertexKind::Call, 10, "Solve");
  uint32_t call11 = main.Add(0, VertexKind::Call, 11, "Solve");
  uint32_t work = main.Add(0, VertexKind::Loop, 20);
  uint32_t call50 = solve.Add(0, VertexKind::Call, 50, "Dot");
  uint32_t allreduce = dot.Add(0, VertexKind::Mpi, 99, "MPI_Allreduce", MpiClass::Collective);
  Psg psg = Psg::Build({main.fn, solve.fn, dot.fn});
  std::vector<scalana::Run> runs;
  for (int p : {2, 4, 8}) {
    ProfileBuilder b(p);
    std::vector<uint32_t> ctx;
    for (uint32_t site : {call10, call11}) {
      b.p.contexts.push_back({main.Id(site), solve.Id(call50), dot.Id(allreduce)});
      ctx.push_back(uint32_t(b.p.contexts.size() - 1));
    }
    for (int r = 0; r < p; ++r) {
      b.Cpu(r, main.Id(work), 2.0);
      b.p.ranks[r].mpi.push_back({ctx[0], 1, 0.3 * p, 0});
      b.p.ranks[r].mpi.push_back({ctx[1], 1, 0.2 * p, 0});
    }
    runs.push_back(BuildRun(psg, b.p, "np" + std::to_string(p)));
  }
  DetectOptions o;
  DetectResult res = Detect(psg, runs, o);
  ASSERT_EQ(res.non_scalable.size(), 2u);
  ReportInput in{psg, runs, res, o, "/bin/app", {}};
  std::ostringstream text;
  WriteTextReport(in, text);
  std::string t = text.str();
  EXPECT_NE(t.find("via main > Solve (app.c:10) > Dot (app.c:50)"), std::string::npos) << t;
  EXPECT_NE(t.find("via main > Solve (app.c:11) > Dot (app.c:50)"), std::string::npos) << t;
}

TEST(DetectReport, SourceSnippetMarksTheLine) {
  char tmpl[] = "/tmp/scalana-snippet-XXXXXX";
  std::string d = mkdtemp(tmpl);
  {
    std::ofstream f(d + "/x.c");
    for (int i = 1; i <= 10; ++i)
      f << "line" << i << "\n";
  }
  bool found = false;
  auto lines = SourceSnippet("x.c", 5, 1, {d}, &found);
  std::filesystem::remove_all(d);
  ASSERT_TRUE(found);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find(">"), std::string::npos);
  EXPECT_NE(lines[1].find("line5"), std::string::npos);
}

} // namespace
} // namespace scalana

namespace scalana {
namespace {

// --- Models and --predict ----------------------------------------------------------

// Weak scaling at 1..6 ranks: RELAX constant, TAIL on the last rank growing
// as 0.05 p^2 (the others wait at the allreduce for half of it).
std::vector<scalana::Run> GrowingTailRuns(HaloProgram &h, const std::string &experiment = "") {
  std::vector<scalana::Run> runs;
  for (int p : {1, 2, 3, 4, 5, 6}) {
    ProfileBuilder b(p);
    if (!experiment.empty())
      b.p.meta.config["SCALANA_EXPERIMENT"] = experiment;
    for (int r = 0; r < p; ++r) {
      const bool culprit = r == p - 1;
      const double extra = 0.05 * p * p;
      b.Cpu(r, h.main.Id(h.relax), 1.0);
      b.Cpu(r, h.main.Id(h.tail), culprit ? 0.2 + extra : 0.2);
      const double wait = culprit ? 0 : 0.5 * extra; // the others arrive late too
      b.Mpi(r, h.main.Id(h.allreduce), 0.01 + wait);
      b.Dep(r, h.main.Id(h.allreduce), DepKind::Coll, -1, wait);
    }
    runs.push_back(BuildRun(h.psg, b.p, "np" + std::to_string(p)));
  }
  return runs;
}

TEST(DetectPredict, TheGrowingVertexBecomesDominantAndItsModelIsQuadratic) {
  HaloProgram h;
  auto runs = GrowingTailRuns(h);
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  o.predict = 64;
  DetectResult res = Detect(h.psg, runs, o);
  const Prediction &pr = res.prediction;
  ASSERT_EQ(pr.ranks, 64);
  EXPECT_EQ(pr.dominant, h.V(h.tail)) << report_common::Describe(h.psg, pr.dominant);
  // On its busiest rank tail (0.2 + 0.05 p^2) passes relax (1 s) at
  // p = 4 and stays ahead of the allreduce's waits (0.01 + 0.025 p^2).
  EXPECT_GT(pr.overtakes_at, 3.5);
  EXPECT_LT(pr.overtakes_at, 4.5);
  const VertexModel *tail = nullptr;
  for (const VertexModel &vm : pr.vertices)
    if (vm.vertex == h.V(h.tail))
      tail = &vm;
  ASSERT_NE(tail, nullptr);
  ASSERT_TRUE(tail->model.ok);
  EXPECT_EQ(LeadingText(tail->model), "p^2") << ModelText(tail->model);
  EXPECT_NEAR(tail->at_p, 0.2 + 0.05 * 64 * 64, 1e-3);
  // The cause's saving grows as its model: x (0.2 + 0.05*64^2) / (0.2 + 0.05*36).
  const RootCause *rc = FindCause(res, h.V(h.tail));
  ASSERT_NE(rc, nullptr);
  bool found = false;
  for (const CausePrediction &cp : pr.causes)
    if (cp.vertex == h.V(h.tail)) {
      found = true;
      EXPECT_NEAR(cp.growth, (0.2 + 0.05 * 4096) / (0.2 + 0.05 * 36), 1e-3);
      EXPECT_NEAR(cp.saves_at_p, rc->saved_seconds * cp.growth, 1e-6);
      EXPECT_GT(cp.saves_at_p, 10 * rc->saved_seconds);
    }
  EXPECT_TRUE(found);
  // The non-scalable entry carries the merged values' model beside its slope.
  for (const NonScalableVertex &ns : res.non_scalable)
    EXPECT_TRUE(ns.model.ok);
  DetectOptions none = o;
  none.predict = 0;
  EXPECT_EQ(Detect(h.psg, runs, none).prediction.ranks, 0);
}

TEST(DetectPredict, TheCausesPlotShowsTheModelCarriedToPAndThePrediction) {
  HaloProgram h;
  auto runs = GrowingTailRuns(h);
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  o.predict = 64;
  DetectResult res = Detect(h.psg, runs, o);
  ReportInput in{h.psg, runs, res, o, "app", {}};
  const RootCause *rc = FindCause(res, h.V(h.tail));
  ASSERT_NE(rc, nullptr);
  html::ScalingPlotData d = html::PlotDataOf(in, *rc);
  ASSERT_GT(d.model.size(), 10u);
  EXPECT_DOUBLE_EQ(d.model.front().first, 1);
  EXPECT_NEAR(d.model.back().first, 64, 1e-9);
  ASSERT_EQ(d.predicted.size(), 1u);
  EXPECT_DOUBLE_EQ(d.predicted[0].first, 64);
  // The plot's points are the non-scalable entry's merged values (the mean
  // over ranks: (0.2 p + 0.05 p^2) / p), and so is its model.
  EXPECT_EQ(d.model_label, "0.2 + 0.05 * p");
  EXPECT_NEAR(d.predicted[0].second, 0.2 + 0.05 * 64, 1e-6);
  std::string svg = html::ScalingPlot(d, "p1", "plot");
  EXPECT_NE(svg.find("class=model"), std::string::npos);
  EXPECT_NE(svg.find("predicted at 64 ranks"), std::string::npos);
  // Without --predict: no prediction point.
  o.predict = 0;
  DetectResult plain = Detect(h.psg, runs, o);
  ReportInput in2{h.psg, runs, plain, o, "app", {}};
  EXPECT_TRUE(html::PlotDataOf(in2, *FindCause(plain, h.V(h.tail))).predicted.empty());
}

TEST(DetectPredict, TheRecordedExperimentIsUsedAndScalingStillWins) {
  HaloProgram h;
  auto strong = GrowingTailRuns(h, "strong");
  DetectResult res = Detect(h.psg, strong, DetectOptions{});
  EXPECT_EQ(res.scaling_used, ScalingMode::Strong) << res.scaling_reason;
  EXPECT_NE(res.scaling_reason.find("--experiment strong"), std::string::npos);
  DetectOptions weak;
  weak.scaling = ScalingMode::Weak;
  EXPECT_EQ(Detect(h.psg, strong, weak).scaling_used, ScalingMode::Weak);
  // Unrecorded: the model of all computation (p * 1.2 + 0.05 p^2, no
  // constant) says weak.
  DetectResult guessed = Detect(h.psg, GrowingTailRuns(h), DetectOptions{});
  EXPECT_EQ(guessed.scaling_used, ScalingMode::Weak);
  EXPECT_NE(guessed.scaling_reason.find("summed over all ranks"), std::string::npos)
      << guessed.scaling_reason;
}

} // namespace
} // namespace scalana
