// The PPG built from parts (groups of ranks) and reports at thousands of
// ranks: what lets the detector read a million ranks.
#include "detect/detect.h"
#include "ppg/ppg_build.h"
#include "ppg/shard_link.h"
#include "report/report.h"
#include "scalana/ids.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <tuple>

namespace scalana {
namespace {

// main: Loop(10){ Loop(11) relax; Irecv(20); Isend(21); Waitall(22); Allreduce(40) }
struct Halo {
  LocalPsg fn;
  uint32_t outer = 0, relax = 0, irecv = 0, isend = 0, waitall = 0, allreduce = 0;
  Psg psg;
  uint32_t Add(uint32_t parent, VertexKind kind, uint32_t line, const char *op = "",
               MpiClass cls = MpiClass::None) {
    LocalVertex v;
    v.local = uint32_t(fn.vertices.size());
    v.kind = kind;
    v.parent = int32_t(parent);
    v.loc = {"app.c", line, line, 0};
    v.mpi_op = op;
    v.mpi_class = cls;
    fn.vertices.push_back(v);
    fn.vertices[parent].children.push_back(v.local);
    return v.local;
  }
  // With CALLS: main also calls work() (a loop) from two call sites, whose
  // copies the PSG makes as contexts reach them, numbered in that order.
  LocalPsg work;
  uint32_t call_a = 0, call_b = 0, work_loop = 0;
  explicit Halo(bool calls = false) {
    fn.key = fn.name = "main";
    fn.linkage = "external";
    fn.loc = {"app.c", 1, 100, 0};
    LocalVertex root;
    root.kind = VertexKind::Function;
    root.loc = fn.loc;
    fn.vertices.push_back(root);
    outer = Add(0, VertexKind::Loop, 10);
    relax = Add(outer, VertexKind::Loop, 11);
    irecv = Add(outer, VertexKind::Mpi, 20, "MPI_Irecv", MpiClass::P2PNonBlocking);
    isend = Add(outer, VertexKind::Mpi, 21, "MPI_Isend", MpiClass::P2PNonBlocking);
    waitall = Add(outer, VertexKind::Mpi, 22, "MPI_Waitall", MpiClass::Completion);
    allreduce = Add(outer, VertexKind::Mpi, 40, "MPI_Allreduce", MpiClass::Collective);
    if (!calls) {
      psg = Psg::Build({fn});
      return;
    }
    call_a = Add(outer, VertexKind::Call, 30);
    call_b = Add(outer, VertexKind::Call, 31);
    fn.vertices[call_a].callee = fn.vertices[call_b].callee = "work";
    work.key = work.name = "work";
    work.linkage = "external";
    work.loc = {"app.c", 50, 70, 0};
    LocalVertex wroot, loop;
    wroot.kind = VertexKind::Function;
    wroot.loc = work.loc;
    loop.local = 1;
    loop.kind = VertexKind::Loop;
    loop.parent = 0;
    loop.loc = {"app.c", 60, 60, 0};
    wroot.children.push_back(1);
    work.vertices = {wroot, loop};
    work_loop = 1;
    psg = Psg::Build({fn, work});
  }
  // work()'s loop reached through main's call site CALL.
  Context WorkLoop(uint32_t call) const {
    return {Id(call), scalana_vertex_id(scalana_function_hash("work", 4), work_loop)};
  }
  uint64_t Id(uint32_t local) const {
    return scalana_vertex_id(scalana_function_hash(fn.key.data(), fn.key.size()), local);
  }
  VertexId V(uint32_t local) { return psg.Resolve({Id(local)}); }

  // A ring: ranks in [slow_lo, slow_hi) take 2 s in relax instead of 1;
  // their neighbours wait for them in Waitall. Message numbers on p2p rows.
  Profile Make(int world, int slow_lo, int slow_hi) const {
    Profile p;
    p.meta.world_size = world;
    p.meta.psg_id = "0xabc";
    p.meta.sampling.hz = 100;
    p.comms.push_back({});
    for (int r = 0; r < world; ++r)
      p.comms[0].push_back(r);
    for (uint32_t l : {relax, irecv, isend, waitall, allreduce})
      p.contexts.push_back({Id(l)});
    auto slow = [&](int r) { return r >= slow_lo && r < slow_hi; };
    for (int r = 0; r < world; ++r) {
      RankData rd;
      rd.rank = r;
      double t = slow(r) ? 2.0 : 1.0;
      rd.vertices.push_back({0, uint64_t(t * 100), t, {}});
      rd.mpi.push_back({1, 2, 0.001, 16});
      rd.mpi.push_back({2, 2, 0.001, 16});
      rd.mpi.push_back({3, 1, 0.01, 0});
      rd.mpi.push_back({4, 1, slow(r) ? 0.0 : 1.0, 8});
      for (int peer : {(r + world - 1) % world, (r + 1) % world}) {
        int tag = peer == (r + 1) % world ? 1 : 2, back = 3 - tag;
        rd.deps.push_back({1, DepKind::Recv, peer, back, 0, 1, 8, 0, {{1, 5}}});
        rd.deps.push_back({2, DepKind::Send, peer, tag, 0, 1, 8, 0, {{1, 5}}});
        rd.deps.push_back({3, DepKind::Send, peer, tag, 0, 1, 8, 0, {{1, 5}}});
        double wait = slow(peer) && !slow(r) ? 1.0 : 0.0;
        rd.deps.push_back({3, DepKind::Recv, peer, back, 0, 1, 8, wait, {{1, 5}}});
      }
      rd.deps.push_back({4, DepKind::Coll, -1, 0, 0, 1, 8, slow(r) ? 0.0 : 1.0, {}});
      p.ranks.push_back(std::move(rd));
    }
    return p;
  }
};

// Ranks [first, last) of P as a part of its own: contexts in reverse order,
// and its communicators with one more ahead of them, renumbered.
Profile PartOf(const Profile &p, int first, int last) {
  Profile part;
  part.meta = p.meta;
  const uint32_t n = uint32_t(p.contexts.size());
  for (uint32_t c = n; c-- > 0;)
    part.contexts.push_back(p.contexts[c]);
  part.comms.push_back({first});
  part.comms.insert(part.comms.end(), p.comms.begin(), p.comms.end());
  for (int r = first; r < last; ++r) {
    RankData rd = p.ranks[size_t(r)];
    for (VertexRow &v : rd.vertices)
      v.ctx = n - 1 - v.ctx;
    for (MpiRow &m : rd.mpi)
      m.ctx = n - 1 - m.ctx;
    for (DepRow &d : rd.deps)
      d.ctx = n - 1 - d.ctx, d.comm += 1;
    part.ranks.push_back(std::move(rd));
  }
  return part;
}

using EdgeKey = std::tuple<VertexId, int, int, int, VertexId, float, int>;
std::vector<EdgeKey> Edges(const Run &run) {
  std::vector<EdgeKey> out;
  for (const VertexSeries &s : run.series)
    for (const DepEdge &e : s.edges)
      out.push_back({s.vertex, e.rank, e.peer_rank, int(e.kind), e.peer_vertex, e.wait,
                     int(run.comms[e.comm].size())});
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RunBuilder, PartsInAnyOrderGiveThePpgOfTheWhole) {
  Halo h;
  Profile whole = h.Make(64, 20, 23);
  scalana::Run a = BuildRun(h.psg, whole, "np64");
  RunBuilder b(h.psg, "np64");
  for (auto [first, last] : {std::pair{32, 48}, {0, 16}, {48, 64}, {16, 32}})
    b.Add(PartOf(whole, first, last));
  scalana::Run c = b.Finish();
  ASSERT_EQ(c.nslots(), 64);
  EXPECT_EQ(c.contexts, a.contexts);
  EXPECT_EQ(c.unmatched_p2p, 0u);
  EXPECT_EQ(a.unmatched_p2p, 0u);
  for (uint32_t l : {h.outer, h.relax, h.irecv, h.waitall, h.allreduce}) {
    const VertexSeries *x = a.Find(h.V(l)), *y = c.Find(h.V(l));
    ASSERT_TRUE(x && y) << l;
    EXPECT_EQ(x->cpu, y->cpu);
    EXPECT_EQ(x->mpi, y->mpi);
    EXPECT_EQ(x->calls, y->calls);
    EXPECT_EQ(x->incl, y->incl);
  }
  EXPECT_EQ(Edges(a), Edges(c));
  // A Waitall receive is matched to the Isend on the peer (the initiating call).
  const VertexSeries *w = c.Find(h.V(h.waitall));
  for (const DepEdge &e : w->edges)
    if (e.kind == DepKind::Recv)
      EXPECT_EQ(e.peer_vertex, h.V(h.isend));
  // One world communicator and one {first} per part, each once.
  EXPECT_EQ(c.comms.size(), 5u);
  EXPECT_EQ(c.rank_total, a.rank_total);
  EXPECT_EQ(c.sample_rate, a.sample_rate); // sums exact whatever the parts
}

TEST(RunBuilder, ARankInTwoPartsIsKeptOnceAndMissingRanksAreNamed) {
  Halo h;
  Profile whole = h.Make(32, 5, 6);
  RunBuilder b(h.psg, "np32");
  b.Add(PartOf(whole, 0, 16));
  b.Add(PartOf(whole, 8, 24)); // 8-15 again; 24-31 never come
  scalana::Run c = b.Finish();
  EXPECT_EQ(c.nslots(), 24);
  ASSERT_EQ(c.missing_ranks.size(), 8u);
  EXPECT_EQ(c.missing_ranks.front(), 24);
  bool twice = false, missing = false;
  for (const std::string &w : c.warnings) {
    twice |= w.find("rank 8 appears twice") != std::string::npos;
    missing |= w.find("8 of 32 ranks missing") != std::string::npos;
  }
  EXPECT_TRUE(twice);
  EXPECT_TRUE(missing);
  EXPECT_EQ(c.SlotOf(24), -1);
  EXPECT_EQ(c.SlotOf(23), 23);
}

// Two processes in one: what one sends, the other receives, in order.
class MemoryLink : public ShardLink {
public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void Send(int, const void *data, size_t bytes) override {
    bytes_.append(static_cast<const char *>(data), bytes);
  }
  void Recv(int, void *data, size_t bytes) override {
    ASSERT_LE(at_ + bytes, bytes_.size());
    std::memcpy(data, bytes_.data() + at_, bytes);
    at_ += bytes;
  }
  bool Drained() const { return at_ == bytes_.size(); }

private:
  std::string bytes_;
  size_t at_ = 0;
};

std::string JsonOf(Halo &h, std::vector<scalana::Run> &runs) {
  DetectOptions o;
  DetectResult r = Detect(h.psg, runs, o);
  ReportInput in{h.psg, runs, r, o, "app", {}};
  std::ostringstream j;
  WriteJsonReport(in, j);
  return j.str();
}

TEST(RunBuilder, PartsFoldedByTwoProcessesGiveThePpgOfOne) {
  Halo h(true), h2(true), other(true); // each process has a PSG of its own
  Profile small = h.Make(16, 3, 4), whole = h.Make(64, 20, 23);
  // Ranks 32-47 also run work() from both call sites, its copy through
  // call_b met first: the PSG makes that copy first.
  auto part = [&](int first, int last, bool calls) {
    Profile p = PartOf(whole, first, last);
    if (calls) {
      const uint32_t b = uint32_t(p.contexts.size());
      p.contexts.push_back(h.WorkLoop(h.call_b));
      p.contexts.push_back(h.WorkLoop(h.call_a));
      for (RankData &r : p.ranks) {
        r.vertices.push_back({b, 7, 0.07, {}});
        r.vertices.push_back({b + 1, 3, 0.03, {}});
      }
    }
    return p;
  };
  // The other process has resolved work()'s loop through call_a before:
  // its copies are numbered the other way round.
  size_t cut = 0;
  other.psg.ResolveNearest(other.WorkLoop(other.call_a), &cut);
  ASSERT_NE(other.psg.ResolveNearest(other.WorkLoop(other.call_b), &cut),
            h.psg.ResolveNearest(h.WorkLoop(h.call_b), &cut));
  Halo fresh(true); // the numbering the test's runs start from
  RunBuilder one(fresh.psg, "np64");
  for (auto [first, last, calls] :
       {std::tuple{0, 16, false}, {16, 32, false}, {32, 48, true}, {48, 64, false}})
    one.Add(part(first, last, calls));
  std::vector<scalana::Run> alone{BuildRun(fresh.psg, small, "np16"), one.Finish()};

  RunBuilder mine(h2.psg, "np64"), theirs(other.psg, "np64");
  mine.Add(part(0, 16, false));
  mine.Add(part(16, 32, false));
  theirs.Add(part(32, 48, true));
  theirs.Add(part(48, 64, false));
  MemoryLink link;
  theirs.SendTo(link, 0);
  mine.ReceiveFrom(link, 1);
  EXPECT_TRUE(link.Drained());
  std::vector<scalana::Run> split{BuildRun(h2.psg, small, "np16"), mine.Finish()};
  const scalana::Run &a = alone[1], &b = split[1];
  EXPECT_EQ(a.contexts, b.contexts);
  EXPECT_EQ(a.comms.size(), b.comms.size());
  ASSERT_EQ(a.series.size(), b.series.size());
  for (size_t i = 0; i < a.series.size(); ++i) {
    EXPECT_EQ(a.series[i].vertex, b.series[i].vertex) << i;
    EXPECT_EQ(a.series[i].cpu, b.series[i].cpu) << i;
    EXPECT_EQ(a.series[i].incl, b.series[i].incl) << i;
    EXPECT_EQ(a.series[i].edges.size(), b.series[i].edges.size()) << i;
  }
  EXPECT_EQ(Edges(a), Edges(b));
  EXPECT_EQ(a.sample_rate, b.sample_rate);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(JsonOf(fresh, alone), JsonOf(h2, split));
}

struct Reports {
  std::string text, json, html;
};
Reports ReportAt(Halo &h, int world) {
  // A quarter of the ranks slow: rank lists of ~world/4 entries everywhere.
  std::vector<scalana::Run> runs{BuildRun(h.psg, h.Make(world / 4, world / 16, world / 8), "small"),
                                 BuildRun(h.psg, h.Make(world, world / 4, world / 2), "big")};
  DetectOptions o;
  DetectResult r = Detect(h.psg, runs, o);
  ReportInput in{h.psg, runs, r, o, "app", {}};
  std::ostringstream t, j, x;
  WriteTextReport(in, t);
  WriteJsonReport(in, j);
  WriteHtmlReport(in, x);
  return {t.str(), j.str(), x.str()};
}

TEST(ReportAtScale, RankListsAreRangesAndCountsAndThePageStaysBounded) {
  Halo h;
  Reports small = ReportAt(h, 512), big = ReportAt(h, 4096);
  auto doc = nlohmann::json::parse(big.json);
  ASSERT_FALSE(doc["abnormal"].empty()) << big.text;
  bool ranged = false;
  for (const auto &a : doc["abnormal"]) {
    EXPECT_LE(a["ranks"].size(), 256u);
    EXPECT_EQ(a["ranks"].size(), std::min<size_t>(a["ranks_count"].get<size_t>(), 256));
    if (a["ranks_count"].get<size_t>() == 1024) {
      EXPECT_EQ(a["ranks_ranges"], "1024-2047");
      ranged = true;
    }
  }
  EXPECT_TRUE(ranged) << doc["abnormal"].dump();
  for (const auto &c : doc["root_causes"]) {
    EXPECT_LE(c["ranks"].size(), 256u);
    EXPECT_TRUE(c.contains("ranks_ranges"));
  }
  EXPECT_EQ(doc["runs"][1]["missing_ranks_count"], 0);
  // Eight times the ranks: the text and the page grow by little, not 8x.
  EXPECT_LT(big.text.size(), small.text.size() * 3 / 2) << big.text;
  EXPECT_LT(big.json.size(), small.json.size() * 2);
  EXPECT_LT(big.html.size(), small.html.size() * 3 / 2);
  EXPECT_LT(big.html.size(), size_t(2) << 20);
  EXPECT_NE(big.text.find("1024-2047"), std::string::npos) << big.text;
}

} // namespace
} // namespace scalana
