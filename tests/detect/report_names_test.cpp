// Readable names, the PPG picture and the export writers on hand-built runs.
#include "export/export.h"
#include "report/model_scales.h"
#include "report/names.h"
#include "report/report_common.h"
#include "scalana/ids.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace scalana {
namespace {

size_t Width(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

TEST(ReadableName, Fortran) {
  EXPECT_EQ(ReadableName("_QQmain"), "program");
  EXPECT_EQ(ReadableName("_QMmodPsub"), "mod::sub");
  EXPECT_EQ(ReadableName("_QPsolve"), "solve");
  EXPECT_EQ(ReadableName("_QMphysicsSfluxPupdate"), "physics::flux::update");
  EXPECT_EQ(ReadableName("_QQmainPinner"), "program::inner");
  EXPECT_EQ(ReadableName("_Qnotfortran"), "_Qnotfortran") << "not flang's scheme: unchanged";
}

TEST(ReadableName, CxxDemangledAndElided) {
  EXPECT_EQ(ReadableName("_Z3fooi"), "foo(int)");
  EXPECT_EQ(ReadableName("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  // Too long: template arguments go first, then the parameters.
  EXPECT_EQ(ReadableName("_ZNSt6vectorIiSaIiEE9push_backERKi", 45),
            "std::vector<\xE2\x80\xA6>::push_back(int const&)");
  EXPECT_EQ(ReadableName("_ZNSt6vectorIiSaIiEE9push_backERKi", 30),
            "std::vector<\xE2\x80\xA6>::push_back(\xE2\x80\xA6)");
  const std::string raja = "void RAJA::forall<RAJA::policy::omp::omp_parallel_for_exec, "
                           "RAJA::TypedRangeSegment<long, long>, main::{lambda(long)#1}>"
                           "(RAJA::TypedRangeSegment<long, long>&&, main::{lambda(long)#1}&&)";
  EXPECT_EQ(ReadableName(raja, 60), "RAJA::forall<\xE2\x80\xA6>(\xE2\x80\xA6)");
  EXPECT_EQ(ReadableName(raja, 400), raja) << "short enough: unchanged, return type too";
}

TEST(ReadableName, OperatorsAndPlainNames) {
  EXPECT_EQ(ReadableName("main"), "main");
  EXPECT_EQ(ReadableName("MPI_Allreduce"), "MPI_Allreduce");
  // operator< is a name, not a template list.
  EXPECT_EQ(ReadableName("bool operator<(Key const&, Key const&)", 16), "operator<(\xE2\x80\xA6)");
  EXPECT_EQ(ReadableName("_ZN1AltERKS_"), "A::operator<(A const&)");
}

TEST(ReadableName, NeverLongerThanAsked) {
  std::string s(300, 'x');
  for (size_t max : {8u, 20u, 120u}) {
    std::string r = ReadableName(s, max);
    EXPECT_EQ(Width(r), max);
    EXPECT_EQ(r.substr(r.size() - 3), "\xE2\x80\xA6");
  }
  std::string t = "ns::f<" + std::string(200, 'T') + ">(" + std::string(200, 'a') + ")";
  EXPECT_LE(Width(ReadableName(t, 50)), 50u);
}

// --- Hand-built runs: main { Loop(11) { MPI_Send(20) } }, the loop slow on
// the last rank, more so the more ranks.
struct Tiny {
  LocalPsg fn;
  Psg psg;
  Tiny() {
    fn.key = fn.name = "main";
    fn.linkage = "external";
    fn.loc = {"app.c", 1, 100, 0};
    auto add = [&](VertexKind k, int32_t parent, uint32_t line, const char *op = "") {
      LocalVertex v;
      v.local = uint32_t(fn.vertices.size());
      v.kind = k;
      v.parent = parent;
      v.loc = {"app.c", line, line, 0};
      if (k == VertexKind::Mpi)
        v.mpi_op = op, v.mpi_class = MpiClass::P2PBlocking;
      if (k == VertexKind::Loop)
        v.loop_depth = 1;
      fn.vertices.push_back(v);
      if (parent >= 0)
        fn.vertices[parent].children.push_back(v.local);
    };
    add(VertexKind::Function, -1, 1);
    add(VertexKind::Loop, 0, 11);
    add(VertexKind::Mpi, 1, 20, "MPI_Send");
    psg = Psg::Build({fn});
  }
  uint64_t Id(uint32_t local) const {
    return scalana_vertex_id(scalana_function_hash(fn.key.data(), fn.key.size()), local);
  }
  static double LoopTime(int world, int r) { return r == world - 1 ? 0.5 * world : 0.5; }
  Run MakeRun(int world) {
    Profile p;
    p.meta.world_size = world;
    p.meta.psg_id = "0xabc";
    p.meta.sampling.hz = 100;
    p.comms.push_back({});
    p.contexts = {{Id(1)}, {Id(2)}};
    for (int r = 0; r < world; ++r) {
      p.comms[0].push_back(r);
      RankData rd;
      rd.rank = r;
      VertexRow row;
      row.ctx = 0;
      row.cpu_seconds = LoopTime(world, r);
      row.samples = uint64_t(row.cpu_seconds * 100);
      rd.vertices.push_back(row);
      rd.mpi.push_back({1, 1, 0.01 * (r + 1), 8});
      p.ranks.push_back(rd);
    }
    return BuildRun(psg, p, "np" + std::to_string(world));
  }
};

TEST(Export, ExtrapHasEveryVertexAtEveryScale) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(2), t.MakeRun(4)};
  ExportInput in{t.psg, runs, "app"};
  std::ostringstream s;
  WriteExtrapJson(in, s);
  auto doc = nlohmann::json::parse(s.str());
  EXPECT_EQ(doc["parameters"], nlohmann::json::array({"p"}));
  auto &m = doc["measurements"];
  ASSERT_TRUE(m.contains("main->loop at app.c:11")) << m.dump();
  ASSERT_TRUE(m.contains("main->loop at app.c:11->MPI_Send at app.c:20"));
  auto &loop = m["main->loop at app.c:11"]["time"];
  ASSERT_EQ(loop.size(), 2u);
  EXPECT_EQ(loop[0]["point"][0], 2);
  EXPECT_NEAR(loop[0]["values"][0].get<double>(), Tiny::LoopTime(2, 1), 1e-6);
  EXPECT_EQ(loop[1]["point"][0], 4);
  EXPECT_NEAR(loop[1]["values"][0].get<double>(), Tiny::LoopTime(4, 3), 1e-6);
  EXPECT_NEAR(m["main->loop at app.c:11"]["time_mean"][1]["values"][0].get<double>(),
              (0.5 * 3 + 2.0) / 4, 1e-6);
}

TEST(Export, HatchetLiteralTree) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(4)};
  ExportInput in{t.psg, runs, "app"};
  std::ostringstream s;
  WriteHatchetLiteral(in, 0, s);
  auto doc = nlohmann::json::parse(s.str());
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["frame"]["name"], "main");
  EXPECT_EQ(doc[0]["frame"]["type"], "function");
  ASSERT_EQ(doc[0]["children"].size(), 1u);
  auto &loop = doc[0]["children"][0];
  EXPECT_EQ(loop["frame"]["name"], "loop at app.c:11");
  EXPECT_EQ(loop["frame"]["line"], 11);
  EXPECT_NEAR(loop["metrics"]["time"].get<double>(), 2.0, 1e-6);
  EXPECT_EQ(loop["metrics"]["ranks"], 4);
  EXPECT_GE(loop["metrics"]["time (inc)"].get<double>(), 2.0);
  ASSERT_EQ(loop["children"].size(), 1u);
  EXPECT_EQ(loop["children"][0]["frame"]["name"], "MPI_Send at app.c:20");
  EXPECT_NEAR(loop["children"][0]["metrics"]["mpi"].get<double>(), 0.04, 1e-6);
}

// Reads the ustar members back: name -> content, checking each checksum.
std::map<std::string, std::string> Untar(const std::string &tar) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos + 512 <= tar.size() && tar[pos] != '\0') {
    const char *h = tar.data() + pos;
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i)
      sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
    EXPECT_EQ(std::strtoul(std::string(h + 148, 7).c_str(), nullptr, 8), sum);
    EXPECT_EQ(std::string(h + 257, 5), "ustar");
    size_t size = std::strtoull(std::string(h + 124, 11).c_str(), nullptr, 8);
    out[std::string(h)] = tar.substr(pos + 512, size);
    pos += 512 + (size + 511) / 512 * 512;
  }
  EXPECT_EQ(tar.size() % 512, 0u);
  return out;
}

TEST(Export, TarArchiveRoundTrips) {
  std::string big(1300, 'z');
  auto files = Untar(TarArchive({{"a.txt", "hello"}, {"b.bin", big}, {"empty", ""}}));
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files["a.txt"], "hello");
  EXPECT_EQ(files["b.bin"], big);
  EXPECT_EQ(files["empty"], "");
}

TEST(Export, CubexDenseValuesPerRank) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(4)};
  ExportInput in{t.psg, runs, "app"};
  auto files = Untar(CubexArchive(in, 0));
  ASSERT_TRUE(files.count("anchor.xml"));
  const std::string &anchor = files["anchor.xml"];
  EXPECT_EQ(anchor.rfind("<?xml", 0), 0u);
  EXPECT_NE(anchor.find("<uniq_name>cpu_time</uniq_name>"), std::string::npos);
  // cnodes in pre-order: main 0, loop 1, MPI_Send 2; metric ids in order.
  EXPECT_NE(anchor.find("<cnode id=\"1\" calleeId=\"1\">"), std::string::npos);
  EXPECT_NE(anchor.find("<name>loop at app.c:11</name>"), std::string::npos);
  const std::string &idx = files["1.index"]; // cpu_time
  ASSERT_GE(idx.size(), 22u);
  EXPECT_EQ(idx.substr(0, 11), "CUBEX.INDEX");
  int32_t one, n;
  std::memcpy(&one, idx.data() + 11, 4);
  std::memcpy(&n, idx.data() + 18, 4);
  EXPECT_EQ(one, 1);
  ASSERT_EQ(n, 3);
  const std::string &data = files["1.data"];
  ASSERT_EQ(data.size(), 10u + 8u * 3 * 4);
  EXPECT_EQ(data.substr(0, 10), "CUBEX.DATA");
  for (int r = 0; r < 4; ++r) {
    double v;
    std::memcpy(&v, data.data() + 10 + 8 * (1 * 4 + r), 8); // cnode 1, location r
    EXPECT_NEAR(v, Tiny::LoopTime(4, r), 1e-6) << "rank " << r;
  }
}

// --- Names the readers take apart: main { MPI_Send(20), MPI_Send(20),
// call Grid::operator->(30) }. Two siblings of one name, and a name holding
// Extra-P's callpath separator "->".
struct Siblings {
  LocalPsg fn, op;
  Psg psg;
  Siblings() {
    op.key = "_ZN4GridptEv";
    op.name = "Grid::operator->()";
    op.linkage = "external";
    op.loc = {"grid.h", 5, 9, 0};
    op.vertices.resize(2); // Grid::operator->() { loop(7) }
    op.vertices[0].kind = VertexKind::Function;
    op.vertices[0].loc = op.loc;
    op.vertices[0].children = {1};
    op.vertices[1].local = 1;
    op.vertices[1].kind = VertexKind::Loop;
    op.vertices[1].parent = 0;
    op.vertices[1].loc = {"grid.h", 7, 7, 0};
    op.vertices[1].loop_depth = 1;
    fn.key = fn.name = "main";
    fn.linkage = "external";
    fn.loc = {"app.c", 1, 100, 0};
    auto add = [&](VertexKind k, uint32_t line) {
      LocalVertex v;
      v.local = uint32_t(fn.vertices.size());
      v.kind = k;
      v.parent = k == VertexKind::Function ? -1 : 0;
      v.loc = {"app.c", line, line, 0};
      if (k == VertexKind::Mpi)
        v.mpi_op = "MPI_Send", v.mpi_class = MpiClass::P2PBlocking;
      if (k == VertexKind::Call)
        v.callee = "_ZN4GridptEv"; // Grid::operator->()
      fn.vertices.push_back(v);
      if (v.parent >= 0)
        fn.vertices[0].children.push_back(v.local);
    };
    add(VertexKind::Function, 1);
    add(VertexKind::Mpi, 20);
    add(VertexKind::Mpi, 20);
    add(VertexKind::Call, 30);
    psg = Psg::Build({fn, op});
  }
  uint64_t Id(uint32_t local) const {
    return scalana_vertex_id(scalana_function_hash(fn.key.data(), fn.key.size()), local);
  }
  // FIRST: whether the first MPI_Send ran (the second and the call always do).
  Run MakeRun(int world, bool first) {
    Profile p;
    p.meta.world_size = world;
    p.meta.psg_id = "0xabc";
    p.meta.sampling.hz = 100;
    p.comms.push_back({});
    p.contexts = {{Id(1)}, {Id(2)}, {Id(3)}};
    for (int r = 0; r < world; ++r) {
      p.comms[0].push_back(r);
      RankData rd;
      rd.rank = r;
      if (first)
        rd.mpi.push_back({0, 1, 0.25, 8});
      rd.mpi.push_back({1, 1, 0.5 * world, 8});
      VertexRow row;
      row.ctx = 2;
      row.cpu_seconds = 0.125;
      row.samples = 12;
      rd.vertices.push_back(row);
      p.ranks.push_back(rd);
    }
    return BuildRun(psg, p, "np" + std::to_string(world));
  }
};

TEST(Export, SiblingsOfOneNameKeepTheirNameInEveryRun) {
  Siblings t;
  // At 2 ranks only the second MPI_Send ran: it must not take the first's name.
  std::vector<scalana::Run> runs{t.MakeRun(2, false), t.MakeRun(4, true)};
  ExportInput in{t.psg, runs, "app"};
  std::ostringstream s;
  WriteExtrapJson(in, s);
  auto m = nlohmann::json::parse(s.str())["measurements"];
  ASSERT_TRUE(m.contains("main->MPI_Send at app.c:20#2")) << m.dump();
  auto &second = m["main->MPI_Send at app.c:20#2"]["time"];
  EXPECT_NEAR(second[0]["values"][0].get<double>(), 1.0, 1e-6) << "p=2: the second call's time";
  EXPECT_NEAR(second[1]["values"][0].get<double>(), 2.0, 1e-6);
  auto &first = m["main->MPI_Send at app.c:20"]["time"];
  EXPECT_EQ(first[0]["values"][0].get<double>(), 0.0) << "p=2: the first call did not run";
  EXPECT_NEAR(first[1]["values"][0].get<double>(), 0.25, 1e-6);
  // "->" only between the elements of a callpath.
  for (auto &[cp, metrics] : m.items())
    if (cp != "main")
      EXPECT_EQ(cp.find("->", 6), std::string::npos) << cp;
  EXPECT_TRUE(m.contains("main->Grid::operator-_() at app.c:30")) << m.dump();
  std::ostringstream h;
  WriteHatchetLiteral(in, 1, h);
  auto tree = nlohmann::json::parse(h.str());
  std::set<std::string> names;
  for (auto &c : tree[0]["children"])
    EXPECT_TRUE(names.insert(c["frame"]["name"].get<std::string>()).second)
        << "two siblings named " << c["frame"]["name"] << ": Hatchet and Thicket match "
        << "nodes by frame";
  EXPECT_TRUE(names.count("MPI_Send at app.c:20#2")) << tree.dump();
  EXPECT_TRUE(names.count("Grid::operator->() at app.c:30")) << tree.dump();
}

TEST(Export, CubeRegionNamesAreExtrapCallpathElements) {
  Siblings t;
  std::vector<scalana::Run> runs{t.MakeRun(4, true)};
  ExportInput in{t.psg, runs, "app"};
  std::string anchor = Untar(CubexArchive(in, 0))["anchor.xml"];
  // Extra-P's cube reader joins region names with "->" into callpaths:
  // each name must be one element, and siblings distinct.
  std::vector<std::string> names;
  for (size_t at = 0; (at = anchor.find("<name>", at)) != std::string::npos; at += 6)
    names.push_back(anchor.substr(at + 6, anchor.find("</name>", at) - at - 6));
  for (const std::string &n : names)
    EXPECT_EQ(n.find("-&gt;"), std::string::npos) << anchor;
  EXPECT_NE(std::find(names.begin(), names.end(), "MPI_Send at app.c:20"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "MPI_Send at app.c:20#2"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "Grid::operator-_() at app.c:30"), names.end());
  // The mangled name keeps the vertex's own name.
  EXPECT_NE(anchor.find("<mangled_name>Grid::operator-&gt;() at app.c:30</mangled_name>"),
            std::string::npos);
}

TEST(Export, UnwritableOutputIsAClearError) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(2)};
  ExportInput in{t.psg, runs, "app"};
  try {
    Export(in, "extrap", "/proc/no/such/dir/x.json");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Export(in, "cube", "/proc/version/sub"), Error);
}

// Few scales: the rank counts to add continue the runs' progression, up to
// Extra-P's minimum of 5.
TEST(ModelScales, ScalesToAddContinueTheProgression) {
  EXPECT_EQ(ScalesToAdd({2, 4, 8}), (std::vector<int>{16, 32}));
  EXPECT_EQ(ScalesToAdd({1, 8, 27}), (std::vector<int>{64, 125})) << "cube counts (LULESH)";
  EXPECT_EQ(ScalesToAdd({1, 4, 9, 16}), (std::vector<int>{25})) << "squares";
  EXPECT_EQ(ScalesToAdd({3, 5}), (std::vector<int>{10, 20, 40})) << "doubling";
  EXPECT_TRUE(ScalesToAdd({1, 2, 4, 8, 16}).empty());
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(2), t.MakeRun(4), t.MakeRun(8)};
  EXPECT_EQ(FewScalesText(runs),
            "the models rest on 3 scales (2, 4, 8): Extra-P's modeler needs 5 per parameter and "
            "warns on every model below that (the exports carry the same points); add runs at "
            "16 and 32 ranks");
  EXPECT_EQ(FewScalesText({t.MakeRun(4)}), "") << "one scale: nothing is modelled";
}

TEST(PpgPicture, NodesAndCrossingsOfThePath) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(4)};
  DetectResult res;
  RootCause rc;
  VertexId loop = t.psg.Resolve({t.Id(1)}), send = t.psg.Resolve({t.Id(2)});
  rc.vertex = loop;
  rc.culprit_rank = 3;
  PathStep a{send, 0, 0.01, 0, "start", true}, b{send, 3, 0.04, 1.5, "p2p", false},
      c{loop, 3, 2.0, 0, "prev", true};
  rc.path = {a, b, c};
  res.root_causes.push_back(rc);
  DetectOptions o;
  ReportInput in{t.psg, runs, res, o, "app", {}};
  report_common::PpgPicture pic = report_common::BuildPpgPicture(in, 5, 100);
  EXPECT_EQ(pic.nodes, 3u);
  EXPECT_EQ(pic.crossings, 1u);
  EXPECT_EQ(pic.steps, 1u);
  EXPECT_NE(pic.dot.find("class=\"crossing"), std::string::npos);
  EXPECT_NE(pic.dot.find("class=\"ppgnode problematic rootcause\""), std::string::npos);
  // Cut at two (vertex, rank) pairs: the sends of ranks 0 and 3, and as
  // both ranks then visit only the send they share a column and a node.
  EXPECT_EQ(report_common::BuildPpgPicture(in, 5, 2).nodes, 1u);
  EXPECT_EQ(report_common::BuildPpgPicture(in, 5, 2).columns, 1u);
  EXPECT_TRUE(report_common::BuildPpgPicture(in, 5, 2).truncated);
}

// Labels of the DOT's nodes with id prefix PREFIX ("row", "col"), in order.
std::vector<std::string> DotLabels(const std::string &dot, const std::string &prefix) {
  std::vector<std::string> out;
  for (size_t at = 0; (at = dot.find("  " + prefix, at)) != std::string::npos; ++at) {
    size_t l = dot.find("label=\"", at), e = dot.find("\"", l + 7);
    out.push_back(dot.substr(l + 7, e - l - 7));
  }
  return out;
}

TEST(PpgPicture, RowLabelsAreUniqueAndFitTheirColumn) {
  // Two MPI_Send calls on one line of main: the same kind, name and line.
  Siblings t;
  std::vector<scalana::Run> runs{t.MakeRun(4, true)};
  VertexId a = t.psg.Resolve({t.Id(1)}), b = t.psg.Resolve({t.Id(2)});
  ASSERT_NE(a, b);
  DetectResult res;
  RootCause rc;
  rc.vertex = b;
  rc.culprit_rank = 3;
  rc.path = {PathStep{a, 0, 0.25, 0, "start", true}, PathStep{b, 0, 1.0, 0, "prev", true},
             PathStep{b, 3, 2.0, 1.0, "p2p", true}};
  res.root_causes.push_back(rc);
  DetectOptions o;
  ReportInput in{t.psg, runs, res, o, "app", {}};
  report_common::PpgPicture pic = report_common::BuildPpgPicture(in, 5, 100);
  std::vector<std::string> rows = DotLabels(pic.dot, "row");
  ASSERT_EQ(rows.size(), 2u) << pic.dot;
  EXPECT_NE(rows[0], rows[1]) << "two rows read the same: " << rows[0];
  // The left column is as wide as its longest line at 5.6 pt a character,
  // and the first column of nodes starts right of it.
  size_t widest = 0;
  for (const std::string &r : rows)
    for (size_t at = 0, nl; at <= r.size(); at = nl + 2) {
      nl = r.find("\\n", at);
      nl = nl == std::string::npos ? r.size() : nl;
      widest = std::max(widest, nl - at);
    }
  size_t w = pic.dot.find("width=", pic.dot.find("  row0"));
  EXPECT_GE(std::stod(pic.dot.substr(w + 6)) * 72, 5.6 * double(widest)) << pic.dot;
  // Crossings carry their edge as a tooltip and in the list, not on the arrow.
  ASSERT_EQ(pic.crossing_list.size(), 1u);
  EXPECT_EQ(pic.crossing_list[0].via, "p2p");
  EXPECT_NE(pic.crossing_list[0].from.find("rank 0:"), std::string::npos);
  EXPECT_NE(pic.crossing_list[0].to.find("rank 3:"), std::string::npos);
  size_t arrow = pic.dot.find("class=\"crossing");
  std::string arrow_line = pic.dot.substr(arrow, pic.dot.find('\n', arrow) - arrow);
  EXPECT_EQ(arrow_line.find(" label="), std::string::npos) << arrow_line;
  EXPECT_NE(arrow_line.find("tooltip=\"p2p wait 1.000 s"), std::string::npos) << arrow_line;
}

TEST(PpgPicture, RanksVisitingTheSameVerticesShareAColumn) {
  Tiny t;
  std::vector<scalana::Run> runs{t.MakeRun(64)};
  VertexId loop = t.psg.Resolve({t.Id(1)}), send = t.psg.Resolve({t.Id(2)});
  DetectResult res;
  // Rank 63 waits in MPI_Send for every other rank in turn, each of which
  // waits in MPI_Send too; ranks 0-3 and 5-62 visit only the send, rank 4
  // its loop as well.
  RootCause rc;
  rc.vertex = loop;
  rc.culprit_rank = 4;
  rc.path.push_back(PathStep{send, 63, 0.1, 0, "start", true});
  for (int r = 0; r < 63; ++r)
    if (r != 4)
      rc.path.push_back(PathStep{send, r, 0.1, 0.5, "p2p", false});
  rc.path.push_back(PathStep{send, 4, 0.1, 0.5, "p2p", false});
  rc.path.push_back(PathStep{loop, 4, 2.0, 0, "prev", true});
  res.root_causes.push_back(rc);
  DetectOptions o;
  ReportInput in{t.psg, runs, res, o, "app", {}};
  report_common::PpgPicture pic = report_common::BuildPpgPicture(in, 5, 400);
  EXPECT_EQ(pic.ranks, 64u);
  EXPECT_EQ(pic.columns, 2u);
  std::vector<std::string> cols = DotLabels(pic.dot, "col");
  ASSERT_EQ(cols.size(), 2u);
  // The culprit's column first, beside the row labels: on a narrow screen
  // it is the one to see.
  EXPECT_EQ(cols[0], "rank 4");
  EXPECT_EQ(cols[1], "ranks 0-3,5-63\\n(63 ranks)");
  EXPECT_EQ(pic.nodes, 3u) << "send on ranks 0-3,5-63, send and loop on rank 4";
  EXPECT_NE(pic.dot.find("ranks 0-3,5-63: max 0.1000 s"), std::string::npos) << pic.dot;
  EXPECT_EQ(RankRanges({7, 0, 1, 2, 3, 9, 10}), "0-3,7,9-10");
  EXPECT_EQ(RankRanges({0, 2, 4, 6, 8, 10, 12}, 8), "0,2,4,6,...");
}

TEST(PpgPicture, ManyDistinctRanksStayWithinTheColumnBound) {
  Siblings t;
  std::vector<scalana::Run> runs{t.MakeRun(64, true)};
  const int nv = int(t.psg.vertices().size());
  ASSERT_GE(nv, 4);
  // Rank r visits the vertices of the bits of r + 1, a set of its own; the
  // path ends on rank 0, the culprit, which visits the fewest.
  RootCause rc;
  rc.culprit_rank = 0;
  const int ranks = std::min(40, (1 << nv) - 1);
  for (int i = 1; i <= ranks; ++i) {
    int rank = i % ranks;
    for (int v = 0; v < nv; ++v)
      if ((rank + 1) >> v & 1)
        rc.path.push_back(PathStep{VertexId(v), rank, 0.1, 0.2, "p2p", false});
  }
  rc.vertex = rc.path.back().vertex;
  DetectResult res;
  res.root_causes.push_back(rc);
  DetectOptions o;
  ReportInput in{t.psg, runs, res, o, "app", {}};
  report_common::PpgPicture pic = report_common::BuildPpgPicture(in, 5, 400);
  EXPECT_EQ(pic.ranks, size_t(ranks));
  EXPECT_EQ(pic.columns, report_common::kMaxPpgColumns);
  std::vector<std::string> cols = DotLabels(pic.dot, "col");
  ASSERT_EQ(cols.size(), report_common::kMaxPpgColumns);
  ASSERT_GT(ranks, int(report_common::kMaxPpgColumns));
  EXPECT_NE(std::find(cols.begin(), cols.end(), "rank 0"), cols.end())
      << "the culprit keeps a column of its own";
  for (const std::string &c : cols)
    EXPECT_LE(c.size(), std::string("ranks 0-3,5-63,...\\n(63 ranks)").size()) << c;
}

} // namespace
} // namespace scalana
