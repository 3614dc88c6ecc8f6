// The report's invariants as properties over generated PPGs (docs/detect.md,
// "Bounds"): random PSGs under main (loops, branches, computation, MPI and
// MPI-IO calls), random ranks and scales, a slow rank, waits on its
// neighbours; every root cause Detect reports must hold to the time it was
// measured from. The expected figures are taken from the generated profile,
// not from the PPG, so a wrong sum in the builder fails here too.
#include "detect/detect.h"
#include "detect/detect_stages.h"
#include "report/report.h"
#include "scalana/ids.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace scalana {
namespace {

// Figures are printed to the millisecond; sums of floats stored per rank.
constexpr double kSlack = 1e-3;

struct GenVertex {
  VertexKind kind;
  std::string op; // MPI vertices
  MpiClass cls = MpiClass::None;
  double base = 0, slope = 0; // seconds per rank at 1 rank, growth exponent
};

struct GenProgram {
  LocalPsg fn;
  std::vector<GenVertex> vertices; // parallel to fn.vertices from index 1
  Psg psg;
  uint64_t Id(uint32_t local) const {
    return scalana_vertex_id(scalana_function_hash(fn.key.data(), fn.key.size()), local);
  }
};

const struct {
  const char *op;
  MpiClass cls;
} kCalls[] = {{"MPI_Allreduce", MpiClass::Collective},
              {"MPI_Barrier", MpiClass::Collective},
              {"MPI_Waitall", MpiClass::Completion},
              {"MPI_Recv", MpiClass::P2PBlocking},
              {"MPI_File_write_at_all", MpiClass::Collective}};

GenProgram GenerateProgram() {
  GenProgram g;
  g.fn.key = g.fn.name = "main";
  g.fn.linkage = "external";
  g.fn.loc = {"app.c", 1, 999, 0};
  LocalVertex root;
  root.kind = VertexKind::Function;
  root.loc = g.fn.loc;
  g.fn.vertices.push_back(root);
  const int n = *rc::gen::inRange(1, 9);
  std::vector<uint32_t> parents{0};
  for (int i = 0; i < n; ++i) {
    GenVertex gv;
    const int k = *rc::gen::inRange(0, 5);
    gv.kind = k == 0   ? VertexKind::Loop
              : k == 1 ? VertexKind::Branch
              : k == 2 ? VertexKind::Comp
                       : VertexKind::Mpi;
    if (gv.kind == VertexKind::Mpi) {
      const auto &c = kCalls[*rc::gen::inRange(0, int(std::size(kCalls)))];
      gv.op = c.op, gv.cls = c.cls;
    }
    gv.base = *rc::gen::inRange(0, 1000) / 1000.0;
    gv.slope = *rc::gen::element(0.0, 0.0, 0.5, 1.0, 1.5);
    LocalVertex v;
    v.local = uint32_t(g.fn.vertices.size());
    v.kind = gv.kind;
    v.parent = int32_t(parents[size_t(*rc::gen::inRange(0, int(parents.size())))]);
    v.loc = {"app.c", 10 + 10 * v.local, 10 + 10 * v.local, 0}; // one vertex a line
    if (gv.kind == VertexKind::Mpi)
      v.mpi_op = gv.op, v.mpi_class = gv.cls;
    if (gv.kind == VertexKind::Loop)
      v.loop_depth = 1;
    g.fn.vertices[size_t(v.parent)].children.push_back(v.local);
    if (gv.kind == VertexKind::Loop || gv.kind == VertexKind::Branch)
      parents.push_back(v.local);
    g.fn.vertices.push_back(v);
    g.vertices.push_back(gv);
  }
  g.psg = Psg::Build({g.fn});
  return g;
}

// One run's profile, and each (vertex, rank)'s time in it as generated.
struct GenRun {
  Profile profile;
  std::map<std::pair<VertexId, int>, double> time; // exclusive seconds
  std::vector<double> waited;                      // per rank: MPI seconds
};

// SHARED: the ranks share one core, each runnable but not running for part
// of its wall time (the kernel's account), so contention can be found.
GenRun GenerateRun(GenProgram &g, int world, int slow, double factor, bool shared) {
  GenRun out;
  Profile &p = out.profile;
  p.meta.world_size = world;
  p.meta.psg_id = "0xabc";
  p.meta.sampling.hz = 100;
  p.comms.push_back({});
  for (int r = 0; r < world; ++r)
    p.comms[0].push_back(r);
  for (size_t i = 0; i < g.vertices.size() + 1; ++i)
    p.contexts.push_back({g.Id(uint32_t(i))});
  out.waited.assign(size_t(world), 0);
  // What the slow rank computes over the others: the waits below are shares
  // of it, so causes at the calls and at the slow loops overlap.
  double excess = 0;
  for (const GenVertex &gv : g.vertices)
    if (gv.kind != VertexKind::Mpi)
      excess += gv.base * std::pow(double(world), gv.slope) * (factor - 1);
  for (int r = 0; r < world; ++r) {
    RankData rd;
    rd.rank = r;
    double cpu = 0, mpi = 0;
    for (size_t i = 0; i < g.vertices.size(); ++i) {
      const GenVertex &gv = g.vertices[i];
      const uint32_t ctx = uint32_t(i + 1);
      const VertexId v = g.psg.Resolve({g.Id(ctx)});
      const double noise = 0.9 + *rc::gen::inRange(0, 200) / 1000.0;
      double t = gv.base * std::pow(double(world), gv.slope) * noise;
      if (gv.kind != VertexKind::Mpi) {
        if (r == slow)
          t *= factor;
        VertexRow row;
        row.ctx = ctx;
        row.samples = uint64_t(std::llround(t * p.meta.sampling.hz));
        row.cpu_seconds = t;
        rd.vertices.push_back(row);
        cpu += t;
      } else {
        // The slow rank's neighbours and the collectives wait for it.
        const double wait = r == slow ? 0 : (excess + 0.1) * *rc::gen::inRange(0, 1000) / 1000.0;
        t += wait;
        rd.mpi.push_back({ctx, 1, t, 0});
        DepRow d;
        d.ctx = ctx;
        d.comm = 0;
        d.count = 1;
        d.wait_seconds = wait;
        if (gv.cls == MpiClass::Collective) {
          d.kind = DepKind::Coll;
          d.peer = -1;
        } else {
          d.kind = DepKind::Recv;
          d.peer = world > 1 ? (r + 1) % world : 0;
        }
        if (world > 1)
          rd.deps.push_back(d);
        mpi += t;
        out.waited[size_t(r)] += t;
      }
      out.time[{v, r}] += t;
    }
    rd.cpu_time = cpu;
    rd.wall_time = cpu + mpi + *rc::gen::inRange(0, 500) / 1000.0;
    rd.host = "node";
    rd.cores = shared ? 1 : 64;
    rd.on_cpu = cpu;
    rd.run_delay = shared ? (rd.wall_time - cpu) * *rc::gen::inRange(0, 1000) / 1000.0 : 0;
    rd.samples = uint64_t(std::llround(cpu * p.meta.sampling.hz));
    p.meta.wall_time = std::max(p.meta.wall_time, rd.wall_time);
    p.ranks.push_back(rd);
  }
  return out;
}

RC_GTEST_PROP(DetectInvariants, EveryFigureWithinWhatTheRunMeasured, ()) {
  GenProgram g = GenerateProgram();
  const int scales = *rc::gen::inRange(1, 4);
  const int first = *rc::gen::inRange(0, 2); // 1 or 2 ranks first
  const double factor = 1 + *rc::gen::inRange(0, 300) / 100.0;
  const bool shared = *rc::gen::arbitrary<bool>();
  std::vector<GenRun> gen;
  std::vector<Run> runs;
  for (int s = 0; s < scales; ++s) {
    const int world = 1 << (first + 2 * s);
    gen.push_back(GenerateRun(g, world, world - 1, factor, shared));
    runs.push_back(BuildRun(g.psg, gen.back().profile, "np" + std::to_string(world)));
  }
  DetectOptions opts;
  opts.scaling = *rc::gen::element(ScalingMode::Weak, ScalingMode::Strong, ScalingMode::Auto);
  const DetectResult res = Detect(g.psg, runs, opts);
  const GenRun &big = gen[res.backtrack_run];
  const double wall = big.profile.meta.wall_time;
  // What the cases reached, printed by RapidCheck (verbose_shrinking aside).
  RC_CLASSIFY(shared, "shared cores");
  RC_CLASSIFY(res.root_causes.empty(), "no cause");
  RC_CLASSIFY(std::any_of(res.root_causes.begin(), res.root_causes.end(),
                          [](const RootCause &c) { return c.communication; }),
              "a communication or I/O cause");
  RC_CLASSIFY(std::any_of(res.root_causes.begin(), res.root_causes.end(),
                          [](const RootCause &c) { return !c.bounds.empty(); }),
              "a figure bounded");
  RC_CLASSIFY(res.savings_sum > 0, "savings overlap");
  RC_CLASSIFY(!res.minor_causes.empty(), "a minor cause");
  RC_CLASSIFY(!res.contention.empty(), "contention");
  // One order by saving; minor causes under the share by both measures,
  // the others over it by one; contention saves nothing and causes no wait.
  const double share = opts.minor_share;
  // (Growth alike on every rank on shared cores: never above a settled
  // cause of one rank; each class in the order of its savings.)
  const std::vector<RootCause> &rc = res.root_causes;
  for (size_t i = 0; i < rc.size(); ++i)
    for (size_t j = i + 1; j < rc.size(); ++j) {
      if (rc[i].alike_on_shared_cores && !rc[j].alike_on_shared_cores)
        RC_ASSERT(!detect_internal::Settled(rc[j]));
      if (rc[i].alike_on_shared_cores == rc[j].alike_on_shared_cores)
        RC_ASSERT(rc[i].saved_seconds >= rc[j].saved_seconds);
    }
  RC_ASSERT(shared || std::none_of(res.root_causes.begin(), res.root_causes.end(),
                                   [](const RootCause &c) { return c.alike_on_shared_cores; }));
  for (const RootCause &c : res.root_causes)
    RC_ASSERT(c.saved_seconds >= share * c.wall_time ||
              (!c.communication && c.cost_seconds >= share * c.rank_cpu));
  for (const RootCause &c : res.minor_causes)
    RC_ASSERT(c.saved_seconds < share * c.wall_time &&
              (c.communication || c.cost_seconds < share * c.rank_cpu));
  for (const RootCause &c : res.contention) {
    RC_ASSERT(c.saved_seconds == 0.0 && c.waits_caused == 0.0);
    RC_ASSERT(!c.contention.empty());
  }
  RC_ASSERT(shared || res.contention.empty());
  std::vector<const RootCause *> listed;
  for (const auto *list : {&res.root_causes, &res.minor_causes, &res.contention})
    for (const RootCause &c : *list)
      listed.push_back(&c);
  for (const RootCause *cp : listed) {
    const RootCause &c = *cp;
    const auto at = [&](int rank) {
      auto it = big.time.find({c.vertex, rank});
      return it == big.time.end() ? 0.0 : it->second;
    };
    double most = 0, others_waited = 0;
    for (int r = 0; r < big.profile.meta.world_size; ++r) {
      most = std::max(most, at(r));
      if (r != c.culprit_rank)
        others_waited += big.waited[size_t(r)];
    }
    const bool at_call = c.communication && !c.thread_imbalance;
    const double own = at_call ? most : at(c.culprit_rank);
    RC_ASSERT(c.cost_seconds <= own + kSlack);
    RC_ASSERT(c.cost_seconds <= wall + kSlack);
    RC_ASSERT(c.saved_seconds >= 0.0);
    RC_ASSERT(c.saved_seconds <= c.cost_seconds + kSlack);
    RC_ASSERT(c.saved_seconds <= wall + kSlack);
    RC_ASSERT(c.waits_caused <= others_waited + kSlack);
    RC_ASSERT(c.score >= 0.0 && c.score <= 1.0);
  }
  double saved = 0;
  for (const RootCause &c : res.root_causes)
    saved += c.saved_seconds;
  // A bounded figure, or savings that overlap, is said in the report.
  const bool bounded = std::any_of(res.root_causes.begin(), res.root_causes.end(),
                                   [](const RootCause &c) { return !c.bounds.empty(); });
  if (bounded || res.savings_sum > 0) {
    std::ostringstream text;
    WriteTextReport(ReportInput{g.psg, runs, res, opts, "app", {}}, text);
    RC_ASSERT(!bounded || text.str().find("\n    bounded:   ") != std::string::npos);
    RC_ASSERT(res.savings_sum == 0.0 ||
              text.str().find("\nsavings overlap: ") != std::string::npos);
  }
  // Savings past the wall time are said, with their sum.
  if (saved > wall + kSlack)
    RC_ASSERT(std::abs(res.savings_sum - saved) <= kSlack && res.savings_wall > 0);
  else
    RC_ASSERT(res.savings_sum == 0.0);
}

} // namespace
} // namespace scalana
