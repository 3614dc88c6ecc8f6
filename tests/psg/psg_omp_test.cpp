// OpenMP constructs in the whole-program PSG (docs/psg.md, "OpenMP
// regions"): a region is a call of its outlined body, so every thread's
// contexts land under it, and readers see it in the program's terms.
#include "psg_helpers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace scalana {
namespace {

using test::Fn;

// `#pragma omp parallel` in main's loop at line 4, as clang-19 records it
// with -g: the entry `main.omp_outlined` only calls the `_debug__` body,
// which holds an `omp for` loop calling work() and a task (line 8) whose
// entry calls the task's body.
struct Program {
  Fn main{"main", "o.c", 1, 20};
  Fn entry{"o.c:main.omp_outlined", "o.c", 4, 4};
  Fn body{"o.c:main.omp_outlined_debug__", "o.c", 5, 8};
  Fn task_entry{"o.c:.omp_task_entry.", "o.c", 8, 8};
  Fn task_body{"o.c:.omp_outlined.", "o.c", 9, 9};
  Fn work{"work", "o.c", 30, 35};
  uint32_t loop, region, call_body, ws, call_work, task, call_task, task_loop, work_loop;

  Program() {
    main.Mpi(0, "MPI_Init", 2, -1, MpiClass::Other);
    loop = main.Loop(0, 3, 10);
    region = main.Region(loop, OmpRegion::Parallel, "o.c:main.omp_outlined", 4);
    main.Mpi(loop, "MPI_Allreduce", 9);
    entry.Outlined(OmpRegion::Parallel);
    call_body = entry.Call(0, "o.c:main.omp_outlined_debug__", 4);
    body.Outlined(OmpRegion::Parallel);
    ws = body.Loop(0, 5, 6);
    body.Worksharing(ws, Worksharing::Static);
    call_work = body.Call(ws, "work", 6);
    task = body.Region(0, OmpRegion::Task, "o.c:.omp_task_entry.", 8);
    task_entry.Outlined(OmpRegion::Task);
    call_task = task_entry.Call(0, "o.c:.omp_outlined.", 8);
    task_body.Outlined(OmpRegion::Task);
    task_loop = task_body.Loop(0, 9, 9);
    work_loop = work.Loop(0, 31, 33);
  }
  Psg Build() const { return Psg::Build({main, entry, body, task_entry, task_body, work}); }
};

TEST(PsgOmp, EveryThreadLandsUnderTheRegion) {
  Program p;
  Psg psg = p.Build();
  // The master thread: main's frame, libomp's (dropped), the entry's.
  VertexId master = psg.Resolve({p.main.Id(p.region), p.entry.Id(p.call_body),
                                 p.body.Id(p.call_work), p.work.Id(p.work_loop)});
  ASSERT_NE(master, kNoVertex);
  // A worker: libomp calls the entry; no frame of main.
  EXPECT_EQ(psg.Resolve({p.entry.Id(p.call_body), p.body.Id(p.call_work), p.work.Id(p.work_loop)}),
            master);
  // The entry tail-called the body (-O2): the context starts in the body.
  EXPECT_EQ(psg.Resolve({p.body.Id(p.call_work), p.work.Id(p.work_loop)}), master);
  EXPECT_TRUE(psg.extra_roots().empty());
  EXPECT_EQ(psg.CallPath(master), (std::vector<std::string>{"main", "parallel region", "work"}));
  std::vector<CallSite> sites = psg.CallSites(master);
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[1].loc.line, 4u);
  EXPECT_EQ(sites[1].loc.file, "o.c");
  EXPECT_EQ(sites[2].loc.line, 6u);
  VertexId ws = psg.Resolve({p.entry.Id(p.call_body), p.body.Id(p.ws)});
  EXPECT_EQ(psg.vertex(ws).worksharing, Worksharing::Static);
  EXPECT_EQ(psg.FunctionName(ws), "parallel region");
  EXPECT_EQ(psg.vertex(psg.vertex(master).parent).parent, ws);
  // The region's own time (the master in libomp's fork and join).
  VertexId r = psg.Resolve({p.main.Id(p.region), p.main.Id(p.region)});
  EXPECT_EQ(psg.vertex(r).region, OmpRegion::Parallel);
  EXPECT_EQ(psg.vertex(r).label, "parallel region");
}

TEST(PsgOmp, TasksBelongToTheCodeThatMadeThem) {
  Program p;
  Psg psg = p.Build();
  // Run by the thread that made it, inside __kmpc_omp_task: the task's call
  // site is on the stack.
  VertexId made = psg.Resolve({p.main.Id(p.region), p.entry.Id(p.call_body), p.body.Id(p.task),
                               p.task_entry.Id(p.call_task), p.task_body.Id(p.task_loop)});
  ASSERT_NE(made, kNoVertex);
  // Run at a barrier of the body, whose line is no call site: the body's
  // frame gives no id, and the task entry follows the entry's call.
  EXPECT_EQ(psg.Resolve({p.entry.Id(p.call_body), p.task_entry.Id(p.call_task),
                         p.task_body.Id(p.task_loop)}),
            made);
  // Run by another thread: libomp calls the task entry.
  EXPECT_EQ(psg.Resolve({p.task_entry.Id(p.call_task), p.task_body.Id(p.task_loop)}), made);
  EXPECT_EQ(psg.CallPath(made), (std::vector<std::string>{"main", "parallel region", "task"}));
  std::vector<CallSite> sites = psg.CallSites(made);
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[2].loc.line, 8u);
  // A function with a plain call site is not entered that way.
  EXPECT_EQ(psg.Resolve({p.main.Id(p.region), p.body.Id(p.call_work), p.work.Id(p.work_loop)}),
            kNoVertex);
}

TEST(PsgOmp, WritersShowTheConstructs) {
  Program p;
  Psg psg = p.Build();
  psg.ExpandAll();
  EXPECT_EQ(test::Tree(psg), "Root main o.c:1-20\n"
                             "  MPI MPI_Init o.c:2\n"
                             "  Loop o.c:3-10\n"
                             "    Parallel o.c:4\n"
                             "      Loop o.c:5-6 (omp for static)\n"
                             "        Loop o.c:31-33 (in work)\n"
                             "      Task o.c:8\n"
                             "        Loop o.c:9\n"
                             "    MPI MPI_Allreduce o.c:9\n");
  EXPECT_EQ(test::SummaryLine(psg), "summary: 9 vertices before contraction, 9 after; loop 4, "
                                    "branch 0, comp 0, mpi 2, call 0, region 2");
  nlohmann::json j = nlohmann::json::parse(psg.ToJson());
  EXPECT_EQ(j["summary"]["region"], 2);
  size_t regions = 0, loops = 0;
  for (const auto &v : j["vertices"]) {
    regions += v.contains("region");
    loops += v.value("worksharing", "") == "static";
  }
  EXPECT_EQ(regions, 2u);
  EXPECT_EQ(loops, 1u);
  EXPECT_EQ(j["functions"][1]["outlined"], "parallel");
  EXPECT_NE(psg.ToDot().find("label=\"parallel region"), std::string::npos);
}

TEST(PsgOmp, FlangsDirectiveLine) {
  // flang's fork call is at another line (the declarations, 2) than the
  // directive (4): readers see the directive, frames match the call.
  Fn main("_QQmain", "f.f90", 1, 10);
  uint32_t region = main.Region(0, OmpRegion::Parallel, "f.f90:_QQmain..omp_par", 2, 4);
  Fn body("f.f90:_QQmain..omp_par", "f.f90", 2, 7);
  body.Outlined(OmpRegion::Parallel);
  uint32_t ws = body.Loop(0, 5, 7);
  body.Worksharing(ws, Worksharing::Dynamic);
  LocalPsg b = body;
  b.language = "fortran";
  Psg psg = Psg::Build({main, b});
  VertexId v = psg.Resolve({main.Id(region), body.Id(ws)});
  ASSERT_NE(v, kNoVertex);
  EXPECT_EQ(psg.Resolve({body.Id(ws)}), v);
  std::vector<CallSite> sites = psg.CallSites(v);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].function, "main");
  EXPECT_EQ(sites[1].function, "parallel region");
  EXPECT_EQ(sites[1].loc.line, 4u);
  EXPECT_EQ(psg.functions()[0].vertices[region].loc.line, 2u);
  psg.ExpandAll();
  EXPECT_EQ(test::Tree(psg), "Root _QQmain f.f90:1-10\n"
                             "  Parallel f.f90:4\n"
                             "    Loop f.f90:5-7 (omp do dynamic)\n");
}

TEST(PsgOmp, ARegionWithoutStructureIsComputation) {
  // Nothing but straight-line code in the region: it is a Comp, and every
  // thread's samples in it land there.
  Fn main("main", "o.c", 1, 20);
  main.Mpi(0, "MPI_Init", 2, -1, MpiClass::Other);
  uint32_t region = main.Region(0, OmpRegion::Parallel, "o.c:main.omp_outlined", 4);
  main.Mpi(0, "MPI_Finalize", 9, -1, MpiClass::Other);
  Fn entry("o.c:main.omp_outlined", "o.c", 4, 6);
  entry.Outlined(OmpRegion::Parallel);
  uint32_t leaf = entry.Call(0, "leaf", 5); // no record: library code
  entry.Call(0, "leaf2", 6);
  Psg psg = Psg::Build({main, entry});
  VertexId comp = psg.Resolve({main.Id(region), entry.Id(leaf)});
  ASSERT_NE(comp, kNoVertex);
  EXPECT_EQ(psg.vertex(comp).kind, VertexKind::Comp);
  EXPECT_EQ(psg.Resolve({entry.Id(leaf)}), comp);
  EXPECT_EQ(psg.Resolve({entry.Id(leaf), entry.Id(leaf)}), comp);
}

TEST(PsgOmp, ARegionInAFunctionCalledTwice) {
  // The master's contexts tell the two calls of solve apart; a worker's has
  // no frame of either: it is placed under a root of solve of its own.
  Fn main("main", "o.c", 1, 20);
  uint32_t c1 = main.Call(0, "solve", 3);
  uint32_t c2 = main.Call(0, "solve", 5);
  Fn solve("solve", "o.c", 30, 40);
  uint32_t region = solve.Region(0, OmpRegion::Parallel, "o.c:solve.omp_outlined", 31);
  solve.Mpi(0, "MPI_Barrier", 39);
  Fn entry("o.c:solve.omp_outlined", "o.c", 31, 35);
  entry.Outlined(OmpRegion::Parallel);
  uint32_t loop = entry.Loop(0, 32, 34);
  Psg psg = Psg::Build({main, solve, entry});
  VertexId a = psg.Resolve({main.Id(c1), solve.Id(region), entry.Id(loop)});
  VertexId b = psg.Resolve({main.Id(c2), solve.Id(region), entry.Id(loop)});
  ASSERT_NE(a, kNoVertex);
  ASSERT_NE(b, kNoVertex);
  EXPECT_NE(a, b);
  EXPECT_EQ(psg.CallPath(a), (std::vector<std::string>{"main", "solve", "parallel region"}));
  VertexId worker = psg.Resolve({entry.Id(loop)});
  ASSERT_NE(worker, kNoVertex);
  EXPECT_NE(worker, a);
  EXPECT_EQ(psg.CallPath(worker), (std::vector<std::string>{"solve", "parallel region"}));
  ASSERT_EQ(psg.extra_roots().size(), 1u);
  EXPECT_EQ(psg.vertex(psg.extra_roots()[0]).label, "solve");
}

std::string Record(const std::string &region_field, const std::string &loop_field) {
  auto hash = [](const std::string &key) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016llx",
                  (unsigned long long)scalana_function_hash(key.data(), key.size()));
    return std::string(buf);
  };
  return R"({"scalana_psg": 1, "module": "o.c", "language": "c", "functions": [
    {"key": "main", "hash": ")" +
         hash("main") + R"(", "file": "o.c", "line": 1, "end_line": 9, "vertices": [
      {"id": 0, "kind": "function", "line": 1, "end_line": 9, "children": [1]},
      {"id": 1, "kind": "call", "parent": 0, "line": 2, "col": 1, "callee": "o.c:main.omp_outlined",
       )" +
         region_field +
         R"(}]},
    {"key": "o.c:main.omp_outlined", "hash": ")" +
         hash("o.c:main.omp_outlined") +
         R"(", "linkage": "internal", "file": "o.c", "line": 2, "end_line": 5,
     "outlined": "parallel", "vertices": [
      {"id": 0, "kind": "function", "line": 2, "end_line": 5, "children": [1]},
      {"id": 1, "kind": "loop", "parent": 0, "line": 3, "end_line": 5, "depth": 1, )" +
         loop_field + R"(}]}]})";
}

std::vector<uint8_t> Bytes(const std::string &s) {
  std::vector<uint8_t> b(s.begin(), s.end());
  b.push_back(0);
  return b;
}

TEST(PsgOmp, RecordsReadBack) {
  std::vector<LocalPsg> fns = ParsePsgSection(
      Bytes(Record(R"("region": "parallel", "directive_line": 3)", R"("worksharing": "dynamic")")));
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].vertices[1].region, OmpRegion::Parallel);
  EXPECT_EQ(fns[0].vertices[1].directive_line, 3u);
  EXPECT_EQ(fns[1].outlined, OmpRegion::Parallel);
  EXPECT_EQ(fns[1].vertices[1].worksharing, Worksharing::Dynamic);
  // Records of older passes have none of these: a plain call.
  fns = ParsePsgSection(Bytes(Record(R"("indirect": false)", R"("depth": 1)")));
  EXPECT_EQ(fns[0].vertices[1].region, OmpRegion::None);
  EXPECT_EQ(fns[1].vertices[1].worksharing, Worksharing::None);
  for (auto [region, loop, what] :
       {std::tuple<const char *, const char *, const char *>{R"("region": "simd")", R"("depth": 1)",
                                                             "unknown OpenMP construct 'simd'"},
        {R"("region": "task")", R"("worksharing": "guided")", "unknown worksharing 'guided'"}}) {
    try {
      ParsePsgSection(Bytes(Record(region, loop)));
      ADD_FAILURE() << "accepted " << region << " " << loop;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("vertex 1"), std::string::npos) << e.what();
    }
  }
}

} // namespace
} // namespace scalana
