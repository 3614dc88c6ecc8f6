// Whole-program PSG: expansion, contraction, Resolve and counts on hand-built
// local PSGs (docs/psg.md).
#include "psg_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <random>

namespace scalana {
namespace {

using test::Fn;
using test::SummaryLine;
using test::Tree;

// The paper's Fig. 3: main's Loop 1 holds Loop 1.1, Loop 1.2, a call of foo
// and MPI_Bcast; foo holds a branch between MPI_Send and MPI_Recv.
std::vector<LocalPsg> Fig3() {
  Fn main("main", "fig3.c", 20, 36);
  main.Mpi(0, "MPI_Init", 22, -1, MpiClass::Other);
  uint32_t loop1 = main.Loop(0, 25, 34);
  main.Loop(loop1, 27, 28);
  main.Loop(loop1, 29, 30);
  main.Call(loop1, "foo", 31);
  main.Mpi(loop1, "MPI_Bcast", 32);
  main.Mpi(0, "MPI_Finalize", 35, -1, MpiClass::Other);
  Fn foo("foo", "fig3.c", 10, 16);
  uint32_t br = foo.Branch(0, 12, 15);
  foo.Mpi(br, "MPI_Send", 13, 0, MpiClass::P2PBlocking);
  foo.Mpi(br, "MPI_Recv", 15, 1, MpiClass::P2PBlocking);
  return {main, foo};
}

TEST(PsgFig3, CompletePsgReplacesTheCallByFoosBranch) {
  PsgOptions opts;
  opts.contract = false;
  Psg psg = Psg::Build(Fig3(), opts);
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main fig3.c:20-36\n"
                       "  MPI MPI_Init fig3.c:22\n"
                       "  Loop fig3.c:25-34\n"
                       "    Loop fig3.c:27-28\n"
                       "    Loop fig3.c:29-30\n"
                       "    Branch fig3.c:12-15 (in foo)\n"
                       "      MPI MPI_Send fig3.c:13 (arm 0) (in foo)\n"
                       "      MPI MPI_Recv fig3.c:15 (arm 1) (in foo)\n"
                       "    MPI MPI_Bcast fig3.c:32\n"
                       "  MPI MPI_Finalize fig3.c:35\n");
  EXPECT_EQ(SummaryLine(psg), "summary: 10 vertices before contraction, 10 after; loop 3, "
                              "branch 1, comp 0, mpi 5, call 0");
}

TEST(PsgFig3, MaxLoopDepthOneFoldsTheInnerLoopsIntoOneComp) {
  PsgOptions opts;
  opts.max_loop_depth = 1;
  Psg psg = Psg::Build(Fig3(), opts);
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), test::kFig3MaxLoopDepth1);
  EXPECT_EQ(SummaryLine(psg), "summary: 10 vertices before contraction, 9 after; loop 1, "
                              "branch 1, comp 1, mpi 5, call 0");
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.functions, 2u);
}

TEST(PsgFig3, DefaultDepthKeepsAllLoops) {
  Psg psg = Psg::Build(Fig3());
  psg.ExpandAll();
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.vertices_before, 10u);
  EXPECT_EQ(s.vertices_after, 10u);
  EXPECT_EQ(s.loops, 3u);
}

TEST(PsgFig3, LazyGraphStartsAsMainAndExpandsOnResolve) {
  std::vector<LocalPsg> fns = Fig3();
  Fn main = Fn("main", "fig3.c", 20, 36); // only for ids
  Fn foo = Fn("foo", "fig3.c", 10, 16);
  Psg psg = Psg::Build(fns);
  // main: root, Init, Loop1, Loop1.1, Loop1.2, Call foo, Bcast, Finalize.
  EXPECT_EQ(psg.vertices().size(), 8u);
  VertexId send = psg.Resolve({main.Id(5), foo.Id(2)});
  ASSERT_NE(send, kNoVertex);
  EXPECT_EQ(psg.vertex(send).label, "MPI_Send");
  EXPECT_EQ(psg.FunctionOf(send).key, "foo");
  EXPECT_EQ(psg.CallPath(send), (std::vector<std::string>{"main", "foo"}));
  // With the call site foo is entered through: "main > foo (fig3.c:31)".
  std::vector<CallSite> sites = psg.CallSites(send);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].function, "main");
  EXPECT_EQ(sites[0].loc.line, 0u);
  EXPECT_EQ(sites[1].function, "foo");
  EXPECT_EQ(sites[1].loc.file, "fig3.c");
  EXPECT_EQ(sites[1].loc.line, 31u);
  EXPECT_EQ(psg.FunctionName(send), "foo");
  EXPECT_EQ(psg.vertices().size(), 11u);
  // Memoised: the same context gives the same vertex and adds nothing.
  EXPECT_EQ(psg.Resolve({main.Id(5), foo.Id(2)}), send);
  EXPECT_EQ(psg.vertices().size(), 11u);
  // Straight-line code of foo belongs to the call vertex standing for foo.
  VertexId foo_body = psg.Resolve({main.Id(5), foo.Id(0)});
  EXPECT_EQ(psg.vertex(foo_body).kind, VertexKind::Call);
  EXPECT_TRUE(psg.vertex(foo_body).expanded);
  EXPECT_EQ(psg.vertex(send).parent, psg.vertex(foo_body).children[0]);
}

TEST(PsgContraction, LoopFoldingAtSeveralDepths) {
  // main: A{ B{ C{ MPI_Send }, D{} } }, loops at depths 1, 2, 3, 3.
  Fn main("main", "d.c", 1, 20);
  uint32_t a = main.Loop(0, 2, 19);
  uint32_t b = main.Loop(a, 3, 18);
  uint32_t c = main.Loop(b, 4, 8);
  main.Mpi(c, "MPI_Send", 5, -1, MpiClass::P2PBlocking);
  main.Loop(b, 10, 12);
  auto tree = [&](uint32_t depth) {
    PsgOptions opts;
    opts.max_loop_depth = depth;
    Psg psg = Psg::Build({main}, opts);
    psg.ExpandAll();
    return Tree(psg);
  };
  EXPECT_EQ(tree(3), "Root main d.c:1-20\n"
                     "  Loop d.c:2-19\n"
                     "    Loop d.c:3-18\n"
                     "      Loop d.c:4-8\n"
                     "        MPI MPI_Send d.c:5\n"
                     "      Loop d.c:10-12\n");
  // C has MPI below: it folds and its children join B. D has none: Comp.
  EXPECT_EQ(tree(2), "Root main d.c:1-20\n"
                     "  Loop d.c:2-19\n"
                     "    Loop d.c:3-18\n"
                     "      MPI MPI_Send d.c:5\n"
                     "      Comp d.c:10-12\n");
  EXPECT_EQ(tree(1), "Root main d.c:1-20\n"
                     "  Loop d.c:2-19\n"
                     "    MPI MPI_Send d.c:5\n"
                     "    Comp d.c:10-12\n");
  EXPECT_EQ(tree(0), "Root main d.c:1-20\n"
                     "  MPI MPI_Send d.c:5\n"
                     "  Comp d.c:10-12\n");
}

TEST(PsgContraction, LoopDepthCountsThroughExpandedCalls) {
  // main: Loop{ call g }; g: Loop{ MPI_Allreduce }, Loop{} -> g's loops are
  // at depth 2 in the whole program.
  Fn main("main", "m.c", 1, 10);
  uint32_t l = main.Loop(0, 2, 5);
  main.Call(l, "g", 3);
  Fn g("g", "g.c", 1, 10);
  uint32_t gl = g.Loop(0, 2, 4);
  g.Mpi(gl, "MPI_Allreduce", 3);
  g.Loop(0, 6, 8);
  PsgOptions opts;
  opts.max_loop_depth = 1;
  Psg psg = Psg::Build({main, g}, opts);
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main m.c:1-10\n"
                       "  Loop m.c:2-5\n"
                       "    MPI MPI_Allreduce g.c:3 (in g)\n"
                       "    Comp g.c:6-8 (in g)\n");
  // Called outside any loop, g keeps its loops.
  Fn main2("main", "m.c", 1, 10);
  main2.Call(0, "g", 3);
  Psg psg2 = Psg::Build({main2, g}, opts);
  psg2.ExpandAll();
  EXPECT_EQ(Tree(psg2), "Root main m.c:1-10\n"
                        "  Loop g.c:2-4 (in g)\n"
                        "    MPI MPI_Allreduce g.c:3 (in g)\n"
                        "  Loop g.c:6-8 (in g)\n");
}

TEST(PsgContraction, ConsecutiveComputationMergesIntoOneComp) {
  // Root{ Loop(deep, no MPI) , call of a library function, branch without
  // MPI or loop, MPI_Barrier, call of a library function }
  Fn main("main", "c.c", 1, 40);
  uint32_t outer = main.Loop(0, 2, 39);
  uint32_t deep = main.Loop(outer, 3, 5);
  (void)deep;
  main.Call(outer, "printf_like", 7);
  uint32_t br = main.Branch(outer, 9, 12);
  main.Call(br, "helper", 10, 0);
  main.Mpi(outer, "MPI_Barrier", 14);
  main.Call(outer, "memcpy_like", 16);
  Fn helper("helper", "c.c", 30, 35); // no MPI, no loop
  PsgOptions opts;
  opts.max_loop_depth = 1;
  Psg psg = Psg::Build({main, helper}, opts);
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main c.c:1-40\n"
                       "  Loop c.c:2-39\n"
                       "    Comp c.c:3-12\n"
                       "    MPI MPI_Barrier c.c:14\n"
                       "    Comp c.c:16\n");
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.comps, 2u);
  // Uncontracted: the library calls are computation of their own, and so is
  // the call of helper, which has no structure to copy.
  PsgOptions raw;
  raw.contract = false;
  Psg full = Psg::Build({main, helper}, raw);
  full.ExpandAll();
  EXPECT_EQ(Tree(full), "Root main c.c:1-40\n"
                        "  Loop c.c:2-39\n"
                        "    Loop c.c:3-5\n"
                        "    Comp c.c:7\n"
                        "    Branch c.c:9-12\n"
                        "      Comp c.c:10 (arm 0)\n"
                        "    MPI MPI_Barrier c.c:14\n"
                        "    Comp c.c:16\n");
  EXPECT_EQ(full.Stats().vertices_before, 8u);
}

TEST(PsgContraction, SubtreeWithoutMpiOrLoopBecomesOneComp) {
  // A user function without MPI or loop is computation wherever it is called;
  // a branch whose arms only call it too. A loop without MPI within the
  // depth limit stays a loop.
  Fn main("main", "s.c", 1, 30);
  main.Call(0, "pure", 2);
  uint32_t br = main.Branch(0, 4, 8);
  main.Call(br, "pure", 5, 0);
  main.Call(br, "pure", 7, 1);
  main.Mpi(0, "MPI_Reduce", 10);
  main.Loop(0, 12, 14);
  Fn pure("pure", "p.c", 1, 9);
  uint32_t pb = pure.Branch(0, 2, 6);
  pure.Call(pb, "sqrt_like", 3, 0);
  Psg psg = Psg::Build({main, pure});
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main s.c:1-30\n"
                       "  Comp s.c:2-8\n"
                       "  MPI MPI_Reduce s.c:10\n"
                       "  Loop s.c:12-14\n");
  EXPECT_EQ(psg.Stats().vertices_after, 4u);
  // Uncontracted: root; three copies of pure (its branch and library call);
  // main's branch, MPI and loop.
  EXPECT_EQ(psg.Stats().vertices_before, 1u + 2 + 1 + 2 + 2 + 1 + 1);
}

TEST(PsgContraction, BranchArmsDoNotMerge) {
  Fn main("main", "b.c", 1, 30);
  uint32_t br = main.Branch(0, 2, 9);
  main.Call(br, "lib_a", 3, 0);
  main.Mpi(br, "MPI_Send", 4, 0, MpiClass::P2PBlocking);
  main.Call(br, "lib_b", 6, 1);
  main.Call(br, "lib_c", 7, 2);
  Psg psg = Psg::Build({main});
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main b.c:1-30\n"
                       "  Branch b.c:2-9\n"
                       "    Comp b.c:3 (arm 0)\n"
                       "    MPI MPI_Send b.c:4 (arm 0)\n"
                       "    Comp b.c:6 (arm 1)\n"
                       "    Comp b.c:7 (arm 2)\n");
}

TEST(PsgRecursion, DirectRecursionClosesACycle) {
  Fn main("main", "r.c", 1, 10);
  main.Call(0, "f", 2);
  Fn f("f", "r.c", 20, 30);
  uint32_t br = f.Branch(0, 21, 28);
  f.Mpi(br, "MPI_Send", 22, 0, MpiClass::P2PBlocking);
  f.Call(br, "f", 25, 1);
  Psg psg = Psg::Build({main, f});
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main r.c:1-10\n"
                       "  Branch r.c:21-28 (in f)\n"
                       "    MPI MPI_Send r.c:22 (arm 0) (in f)\n"
                       "    Call f r.c:25 (arm 1) (recursive) (in f)\n");
  VertexId copy_of_f = psg.vertex(psg.root()).children[0];
  const Vertex &call = psg.vertex(psg.vertex(psg.vertex(copy_of_f).children[0]).children[1]);
  EXPECT_TRUE(call.recursive);
  EXPECT_EQ(call.recursion_target, copy_of_f);
  // A context deeper in the recursion maps to the same vertices.
  VertexId send1 = psg.Resolve({main.Id(1), f.Id(2)});
  VertexId send3 = psg.Resolve({main.Id(1), f.Id(3), f.Id(3), f.Id(2)});
  ASSERT_NE(send1, kNoVertex);
  EXPECT_EQ(send1, send3);
  // Counts: a recursive call is shown as a call.
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.vertices_after, 4u);
  EXPECT_EQ(s.vertices_before, 4u);
}

TEST(PsgRecursion, MutualRecursionPointsBackToTheFirstCopy) {
  Fn main("main", "r.c", 1, 10);
  main.Call(0, "f", 2);
  main.Call(0, "g", 3);
  Fn f("f", "f.c", 1, 10);
  f.Mpi(0, "MPI_Barrier", 2);
  f.Call(0, "g", 3);
  Fn g("g", "g.c", 1, 10);
  g.Mpi(0, "MPI_Allreduce", 2);
  g.Call(0, "f", 3);
  Psg psg = Psg::Build({main, f, g});
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main r.c:1-10\n"
                       "  MPI MPI_Barrier f.c:2 (in f)\n"
                       "  MPI MPI_Allreduce g.c:2 (in g)\n"
                       "  Call f g.c:3 (recursive) (in g)\n"
                       "  MPI MPI_Allreduce g.c:2 (in g)\n"
                       "  MPI MPI_Barrier f.c:2 (in f)\n"
                       "  Call g f.c:3 (recursive) (in f)\n");
  // f's copy under main's first call is the target of g's recursive call.
  VertexId f_copy = psg.vertex(psg.root()).children[0];
  VertexId g_in_f = psg.vertex(f_copy).children[1];
  VertexId back = psg.vertex(g_in_f).children[1];
  EXPECT_TRUE(psg.vertex(back).recursive);
  EXPECT_EQ(psg.vertex(back).recursion_target, f_copy);
  // main->f->g->f->g: the last g is the g under f.
  VertexId allreduce = psg.Resolve({main.Id(1), f.Id(2), g.Id(2), f.Id(2), g.Id(1)});
  EXPECT_EQ(allreduce, psg.vertex(g_in_f).children[0]);
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.vertices_before, 7u);
  EXPECT_EQ(s.calls, 2u);
}

TEST(PsgWriters, EmptyPsgIsHarmless) {
  Psg psg;
  psg.ExpandAll();
  EXPECT_EQ(psg.root(), kNoVertex);
  EXPECT_EQ(psg.Resolve({0x8000000000000001ull}), kNoVertex);
  EXPECT_EQ(psg.Stats().vertices_after, 0u);
  EXPECT_EQ(SummaryLine(psg), "summary: 0 vertices before contraction, 0 after; loop 0, branch 0, "
                              "comp 0, mpi 0, call 0");
}

TEST(PsgWriters, JsonAndDotDescribeTheSameGraph) {
  Fn main("main", "r.c", 1, 10);
  main.Call(0, "f", 2);
  Fn f("f", "r.c", 20, 30);
  uint32_t br = f.Branch(0, 21, 28);
  f.Mpi(br, "MPI_Send", 22, 0, MpiClass::P2PBlocking);
  f.Call(br, "f", 25, 1);
  Psg psg = Psg::Build({main, f});
  psg.ExpandAll();
  nlohmann::json j = nlohmann::json::parse(psg.ToJson());
  ASSERT_EQ(j["vertices"].size(), psg.vertices().size());
  EXPECT_EQ(j["vertices"][j["root"].get<int>()]["label"], "main");
  EXPECT_EQ(j["summary"]["vertices_after"], 4);
  int recursive = 0, expanded = 0;
  for (const auto &v : j["vertices"]) {
    recursive += v.value("recursive", false);
    expanded += v.value("expanded", false);
    if (v["kind"] == "mpi") {
      EXPECT_EQ(v["class"], "p2p_blocking");
      EXPECT_EQ(v["arm"], 0);
    }
  }
  EXPECT_EQ(recursive, 1);
  EXPECT_EQ(expanded, 1);
  std::string dot = psg.ToDot();
  EXPECT_EQ(dot.rfind("digraph psg {", 0), 0u);
  EXPECT_NE(dot.find("style=dashed, label=\"recursion\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("[label=\"arm 1\"]"), std::string::npos) << dot;
  EXPECT_EQ(psg.Write(PsgFormat::Dot), dot);
}

TEST(PsgResolve, IndirectCallIsBoundToEachTargetSeen) {
  Fn main("main", "i.c", 1, 10);
  uint32_t loop = main.Loop(0, 2, 8);
  uint32_t ind = main.Indirect(loop, 4);
  Fn a("a", "a.c", 1, 5);
  uint32_t send = a.Mpi(0, "MPI_Send", 2, -1, MpiClass::P2PBlocking);
  Fn b("b", "b.c", 1, 5);
  uint32_t recv = b.Mpi(0, "MPI_Recv", 3, -1, MpiClass::P2PBlocking);
  Psg psg = Psg::Build({main, a, b});
  psg.ExpandAll();
  EXPECT_EQ(Tree(psg), "Root main i.c:1-10\n"
                       "  Loop i.c:2-8\n"
                       "    Call ? i.c:4 (indirect)\n");
  VertexId vs = psg.Resolve({main.Id(ind), a.Id(send)});
  VertexId vr = psg.Resolve({main.Id(ind), b.Id(recv)});
  ASSERT_NE(vs, kNoVertex);
  ASSERT_NE(vr, kNoVertex);
  EXPECT_NE(vs, vr);
  EXPECT_EQ(psg.vertex(vs).label, "MPI_Send");
  EXPECT_EQ(psg.vertex(vr).label, "MPI_Recv");
  EXPECT_EQ(psg.Resolve({main.Id(ind), a.Id(send)}), vs);
  EXPECT_EQ(Tree(psg), "Root main i.c:1-10\n"
                       "  Loop i.c:2-8\n"
                       "    Call ? i.c:4 (indirect)\n"
                       "      Call a i.c:4 (indirect)\n"
                       "        MPI MPI_Send a.c:2 (in a)\n"
                       "      Call b i.c:4 (indirect)\n"
                       "        MPI MPI_Recv b.c:3 (in b)\n");
  // The sample in the indirect call site itself (callee uninstrumented).
  VertexId site = psg.Resolve({main.Id(ind), main.Id(ind)});
  EXPECT_EQ(psg.vertex(site).kind, VertexKind::Call);
  EXPECT_TRUE(psg.vertex(site).indirect);
  EXPECT_EQ(psg.vertex(site).label, "?");
}

TEST(PsgResolve, TwoCallSitesGiveTwoVertexSets) {
  Fn main("main", "t.c", 1, 20);
  uint32_t c1 = main.Call(0, "work", 3);
  uint32_t c2 = main.Call(0, "work", 5);
  Fn work("work", "w.c", 1, 10);
  uint32_t loop = work.Loop(0, 2, 8);
  uint32_t mpi = work.Mpi(loop, "MPI_Allreduce", 4);
  Psg psg = Psg::Build({main, work});
  VertexId l1 = psg.Resolve({main.Id(c1), work.Id(loop)});
  VertexId l2 = psg.Resolve({main.Id(c2), work.Id(loop)});
  VertexId m1 = psg.Resolve({main.Id(c1), work.Id(mpi)});
  VertexId m2 = psg.Resolve({main.Id(c2), work.Id(mpi)});
  ASSERT_NE(l1, kNoVertex);
  ASSERT_NE(l2, kNoVertex);
  EXPECT_NE(l1, l2);
  EXPECT_NE(m1, m2);
  EXPECT_EQ(psg.vertex(m1).parent, l1);
  EXPECT_EQ(psg.vertex(m2).parent, l2);
  EXPECT_EQ(psg.vertex(l1).kind, VertexKind::Loop);
  EXPECT_EQ(psg.vertex(l1).loc.line, 2u);
  EXPECT_EQ(psg.CallPath(m2), (std::vector<std::string>{"main", "work"}));
  // The two copies are children of the two call vertices of main.
  EXPECT_EQ(psg.vertex(l1).parent, psg.Resolve({main.Id(c1)}));
  EXPECT_EQ(psg.vertex(l2).parent, psg.Resolve({main.Id(c2)}));
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.vertices_after, 5u); // root + 2 x (loop, mpi)
  EXPECT_EQ(s.expanded_calls, 2u);
}

TEST(PsgResolve, UninstrumentedCalleeLandsOnTheCallSite) {
  Fn main("main", "u.c", 1, 20);
  uint32_t loop = main.Loop(0, 2, 10);
  uint32_t lib = main.Call(loop, "dgemm_", 3); // no record: a library
  uint32_t mpi = main.Mpi(loop, "MPI_Allreduce", 5);
  uint32_t user = main.Call(0, "solve", 12);
  Fn solve("solve", "s.c", 1, 10);
  solve.Mpi(0, "MPI_Bcast", 2);
  PsgOptions raw;
  raw.contract = false;
  Psg psg = Psg::Build({main, solve}, raw);
  VertexId v = psg.Resolve({main.Id(lib), main.Id(lib)});
  ASSERT_NE(v, kNoVertex);
  EXPECT_EQ(psg.vertex(v).kind, VertexKind::Comp);
  EXPECT_EQ(psg.vertex(v).loc.line, 3u);
  // With contraction, the library call is the loop's only computation and
  // the loop holds MPI: the Comp stays next to the MPI vertex.
  Psg contracted = Psg::Build({main, solve});
  VertexId cv = contracted.Resolve({main.Id(lib), main.Id(lib)});
  ASSERT_NE(cv, kNoVertex);
  EXPECT_EQ(contracted.vertex(cv).kind, VertexKind::Comp);
  EXPECT_EQ(contracted.vertex(contracted.vertex(cv).parent).kind, VertexKind::Loop);
  EXPECT_NE(cv, contracted.Resolve({main.Id(mpi)}));
  // An instrumented callee's call site: the call vertex itself.
  VertexId uc = contracted.Resolve({main.Id(user), main.Id(user)});
  EXPECT_EQ(contracted.vertex(uc).kind, VertexKind::Call);
  EXPECT_EQ(contracted.vertex(uc).label, "solve");
}

TEST(PsgResolve, UnknownContextsGiveNoVertex) {
  std::vector<LocalPsg> fns = Fig3();
  Fn main("main", "fig3.c", 20, 36);
  Fn foo("foo", "fig3.c", 10, 16);
  Fn other("not_in_binary", "x.c", 1, 2);
  Psg psg = Psg::Build(fns);
  EXPECT_EQ(psg.Resolve({}), kNoVertex);
  EXPECT_EQ(psg.Resolve({other.Id(0)}), kNoVertex);             // unknown function
  EXPECT_EQ(psg.Resolve({main.Id(99)}), kNoVertex);             // local out of range
  EXPECT_EQ(psg.Resolve({main.Id(6), foo.Id(1)}), kNoVertex);   // call site is an MPI vertex
  EXPECT_EQ(psg.Resolve({main.Id(5), main.Id(1)}), kNoVertex);  // callee is foo, not main
  EXPECT_EQ(psg.Resolve({main.Id(5), foo.Id(42)}), kNoVertex);  // out of range in foo
  EXPECT_EQ(psg.Resolve({main.Id(5), other.Id(1)}), kNoVertex); // unknown inside
  EXPECT_NE(psg.Resolve({main.Id(5), foo.Id(1)}), kNoVertex);
}

// A context that does not fit is placed at its deepest part that does: a
// row is never dropped while one of its ids names a vertex.
TEST(PsgResolve, NearestKeepsTheDeepestPartThatFits) {
  Fn main("main", "n.c", 1, 20);
  uint32_t loop = main.Loop(0, 2, 10);
  uint32_t call = main.Call(loop, "work", 3);
  Fn work("work", "w.c", 1, 10);
  uint32_t inner = work.Loop(0, 2, 8);
  Fn helper("helper", "h.c", 1, 5);
  uint32_t hloop = helper.Loop(0, 2, 4);
  Fn other("not_in_binary", "x.c", 1, 2);
  Psg psg = Psg::Build({main, work, helper});
  size_t cut = 9;
  // Fits whole: nothing cut.
  VertexId whole = psg.ResolveNearest({main.Id(call), work.Id(inner)}, &cut);
  EXPECT_EQ(whole, psg.Resolve({main.Id(call), work.Id(inner)}));
  EXPECT_EQ(cut, 0u);
  // helper's loop reached from work's loop by a call the PSG does not know
  // (helper is called by nobody there): work's loop, in its context, holds
  // the time, as it would a callee without a record.
  Context bad{main.Id(call), work.Id(inner), helper.Id(hloop)};
  ASSERT_EQ(psg.Resolve(bad), kNoVertex);
  VertexId v = psg.ResolveNearest(bad, &cut);
  EXPECT_EQ(v, psg.Resolve({main.Id(call), work.Id(inner)}));
  EXPECT_EQ(cut, 1u);
  EXPECT_EQ(psg.ResolveNearest({main.Id(call), work.Id(inner), other.Id(1)}, &cut), v);
  EXPECT_EQ(cut, 1u);
  // The outermost id is no call site: only one id fits either way, and the
  // inner part, on its own, keeps the line the time is spent on.
  Context outer_bad{main.Id(loop), helper.Id(hloop)};
  ASSERT_EQ(psg.Resolve(outer_bad), kNoVertex);
  VertexId h = psg.ResolveNearest(outer_bad, &cut);
  ASSERT_NE(h, kNoVertex);
  EXPECT_EQ(cut, 1u);
  EXPECT_EQ(psg.vertex(h).kind, VertexKind::Loop);
  EXPECT_EQ(psg.FunctionName(h), "helper");
  // Nothing of this PSG: nothing to place it on.
  EXPECT_EQ(psg.ResolveNearest({other.Id(1)}, &cut), kNoVertex);
}

TEST(PsgResolve, ContextsStartingOutsideMain) {
  // `outlined` has no call site (an OpenMP outlined function): it gets a
  // synthetic root. `kernel` is called once, from `step`, itself called once
  // from main: contexts starting in kernel map under that call chain.
  Fn main("main", "o.c", 1, 20);
  uint32_t loop = main.Loop(0, 2, 10);
  uint32_t cstep = main.Call(loop, "step", 3);
  Fn step("step", "o.c", 30, 40);
  uint32_t ckernel = step.Call(0, "kernel", 32);
  step.Mpi(0, "MPI_Barrier", 33);
  Fn kernel("kernel", "o.c", 50, 60);
  uint32_t kloop = kernel.Loop(0, 51, 55);
  kernel.Mpi(kloop, "MPI_Send", 53, -1, MpiClass::P2PBlocking);
  Fn outlined("main.omp_outlined", "o.c", 70, 80);
  uint32_t oloop = outlined.Loop(0, 71, 75);
  outlined.Mpi(oloop, "MPI_Isend", 72, -1, MpiClass::P2PNonBlocking);
  Psg psg = Psg::Build({main, step, kernel, outlined});
  VertexId full = psg.Resolve({main.Id(cstep), step.Id(ckernel), kernel.Id(kloop)});
  VertexId partial = psg.Resolve({kernel.Id(kloop)});
  ASSERT_NE(full, kNoVertex);
  EXPECT_EQ(full, partial);
  EXPECT_EQ(psg.Resolve({step.Id(ckernel), kernel.Id(2)}),
            psg.Resolve({main.Id(cstep), step.Id(ckernel), kernel.Id(2)}));
  VertexId o = psg.Resolve({outlined.Id(2)});
  ASSERT_NE(o, kNoVertex);
  EXPECT_EQ(psg.vertex(o).label, "MPI_Isend");
  ASSERT_EQ(psg.extra_roots().size(), 1u);
  VertexId synthetic = psg.extra_roots()[0];
  EXPECT_EQ(psg.vertex(synthetic).kind, VertexKind::Function);
  EXPECT_EQ(psg.vertex(synthetic).parent, kNoVertex);
  EXPECT_EQ(psg.vertex(psg.vertex(o).parent).parent, synthetic);
  EXPECT_EQ(psg.Resolve({outlined.Id(1)}), psg.vertex(o).parent);
  EXPECT_EQ(psg.CallPath(o), (std::vector<std::string>{"main.omp_outlined"}));
  // The master thread runs the outlined function inside main's context, with
  // no call site for it on the stack: it lands on the same vertices as the
  // other threads.
  EXPECT_EQ(psg.Resolve({main.Id(cstep), outlined.Id(2)}), o);
  EXPECT_EQ(psg.Resolve({main.Id(cstep), step.Id(ckernel), outlined.Id(1)}), psg.vertex(o).parent);
  // Also when the function holding the parallel region has no structure of
  // its own, so that its call is computation.
  Fn holder("holder", "o.c", 90, 95);
  Fn main2("main", "o.c", 1, 20);
  uint32_t chold = main2.Call(0, "holder", 2);
  main2.Mpi(0, "MPI_Barrier", 3);
  Psg psg2 = Psg::Build({main2, holder, outlined});
  VertexId comp = psg2.Resolve({main2.Id(chold)});
  EXPECT_EQ(psg2.vertex(comp).kind, VertexKind::Comp);
  EXPECT_EQ(psg2.Resolve({main2.Id(chold), holder.Id(0)}), comp);
  VertexId worker = psg2.Resolve({outlined.Id(2)});
  EXPECT_EQ(psg2.vertex(worker).label, "MPI_Isend");
  EXPECT_EQ(psg2.Resolve({main2.Id(chold), outlined.Id(2)}), worker);
  // A function that has direct callers is not entered that way: no fit.
  EXPECT_EQ(psg.Resolve({main.Id(cstep), kernel.Id(kloop)}), kNoVertex);
  // Truncated contexts (deeper than the runtime's stack): only the vertex counts.
  Context deep(kMaxContextCallSites + 5, main.Id(99));
  deep.back() = kernel.Id(kloop);
  EXPECT_EQ(psg.Resolve(deep), full);
}

// main -> f0,g0 ; level i functions f_i, g_i each call both f_{i+1} and
// g_{i+1}: 2^levels calling contexts, counted without materialising them.
std::vector<LocalPsg> Diamond(int levels) {
  std::vector<LocalPsg> fns;
  Fn main("main", "dia.c", 1, 5);
  main.Call(0, "f0", 2);
  main.Call(0, "g0", 3);
  fns.push_back(main);
  for (int i = 0; i < levels; ++i) {
    for (const char *p : {"f", "g"}) {
      Fn fn(p + std::to_string(i), "dia.c", 10, 20);
      uint32_t loop = fn.Loop(0, 11, 19);
      fn.Mpi(loop, "MPI_Allreduce", 12);
      if (i + 1 < levels) {
        fn.Call(loop, "f" + std::to_string(i + 1), 13);
        fn.Call(loop, "g" + std::to_string(i + 1), 14);
      }
      fns.push_back(fn);
    }
  }
  return fns;
}

TEST(PsgStats, DiamondCallGraphIsCountedWithoutMaterialising) {
  const int levels = 30;
  PsgOptions deep;
  deep.max_loop_depth = 64; // keep every loop: before and after agree
  Psg psg = Psg::Build(Diamond(levels), deep);
  PsgStats s = psg.Stats();
  // Level i has 2^(i+1) copies, each with a loop and an MPI vertex.
  uint64_t copies = (uint64_t(1) << (levels + 1)) - 2;
  EXPECT_EQ(s.vertices_before, 1 + 2 * copies);
  EXPECT_EQ(s.vertices_after, 1 + 2 * copies);
  EXPECT_EQ(s.loops, copies);
  EXPECT_EQ(s.mpis, copies);
  EXPECT_EQ(s.calls, 0u);
  EXPECT_EQ(s.functions, uint64_t(1 + 2 * levels));
  EXPECT_LT(psg.vertices().size(), 10u); // still just main's local PSG
  // Loop depth grows with the level: loops of levels past MaxLoopDepth fold
  // (they hold MPI), leaving 2 + 4 + ... + 2^10 with the default of 10.
  EXPECT_EQ(Psg::Build(Diamond(levels)).Stats().loops, (uint64_t(1) << 11) - 2);
  PsgOptions opts;
  opts.max_loop_depth = 2;
  Psg shallow = Psg::Build(Diamond(levels), opts);
  PsgStats t = shallow.Stats();
  EXPECT_EQ(t.vertices_before, s.vertices_before);
  EXPECT_EQ(t.loops, 2u + 4u);
  EXPECT_EQ(t.vertices_after, 1 + copies + 6);
  // ExpandAll refuses instead of exhausting memory.
  try {
    psg.ExpandAll();
    FAIL() << "ExpandAll should refuse a graph of 2^31 vertices";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("--max-vertices"), std::string::npos) << e.what();
  }
}

TEST(PsgStats, CountsSaturate) {
  Psg psg = Psg::Build(Diamond(70));
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.vertices_before, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(s.vertices_after, std::numeric_limits<uint64_t>::max());
}

TEST(PsgStats, LargeRecursiveCycleSaturatesInsteadOfHanging) {
  // 14 functions that all call each other: 14! paths through the cycle.
  std::vector<LocalPsg> fns;
  Fn main("main", "cyc.c", 1, 3);
  main.Call(0, "c0", 2);
  fns.push_back(main);
  const int n = 14;
  for (int i = 0; i < n; ++i) {
    Fn f("c" + std::to_string(i), "cyc.c", 10, 20);
    f.Mpi(0, "MPI_Barrier", 11);
    for (int j = 0; j < n; ++j)
      if (j != i)
        f.Call(0, "c" + std::to_string(j), uint32_t(12 + j));
    fns.push_back(f);
  }
  Psg psg = Psg::Build(fns);
  PsgStats s = psg.Stats();
  EXPECT_EQ(s.vertices_before, std::numeric_limits<uint64_t>::max());
  EXPECT_THROW(psg.ExpandAll(), Error);
  // Contexts still resolve, materialising only their path.
  Fn c0("c0", "cyc.c", 0, 0), c5("c5", "cyc.c", 0, 0);
  VertexId v = psg.Resolve({main.Id(1), c0.Id(6), c5.Id(1)});
  ASSERT_NE(v, kNoVertex);
  EXPECT_EQ(psg.vertex(v).label, "MPI_Barrier");
  EXPECT_EQ(psg.CallPath(v), (std::vector<std::string>{"main", "c0", "c5"}));
  EXPECT_LT(psg.vertices().size(), 100u);
}

TEST(PsgStats, DynamicProgramMatchesTheMaterialisedGraph) {
  // A small diamond with folding, merged comps and recursion: Stats (by DP)
  // and a full expansion must agree vertex for vertex.
  for (bool contract : {false, true})
    for (uint32_t depth : {0u, 1u, 2u, 3u, 10u}) {
      std::vector<LocalPsg> fns = Diamond(5);
      Fn rec("rec", "rec.c", 1, 9);
      uint32_t rl = rec.Loop(0, 2, 8);
      rec.Call(rl, "rec", 3);
      rec.Call(rl, "lib", 4);
      rec.Mpi(rl, "MPI_Send", 5, -1, MpiClass::P2PBlocking);
      fns.push_back(rec);
      fns.push_back(Fn("unused", "u.c", 1, 1)); // never called: not counted
      Fn main("main", "dia.c", 1, 5);
      uint32_t ml = main.Loop(0, 2, 4);
      main.Call(ml, "f0", 2);
      main.Call(ml, "g0", 3);
      main.Call(0, "rec", 4);
      fns[0] = main;
      PsgOptions opts;
      opts.contract = contract;
      opts.max_loop_depth = depth;
      Psg psg = Psg::Build(fns, opts);
      psg.ExpandAll();
      uint64_t shown = 0, loops = 0, comps = 0, calls = 0, mpis = 0;
      for (const Vertex &v : psg.vertices()) {
        if (v.kind == VertexKind::Call && v.expanded)
          continue;
        ++shown;
        loops += v.kind == VertexKind::Loop;
        comps += v.kind == VertexKind::Comp;
        calls += v.kind == VertexKind::Call;
        mpis += v.kind == VertexKind::Mpi;
      }
      PsgStats s = psg.Stats();
      SCOPED_TRACE("contract=" + std::to_string(contract) + " depth=" + std::to_string(depth));
      EXPECT_EQ(s.vertices_after, shown);
      EXPECT_EQ(s.loops, loops);
      EXPECT_EQ(s.comps, comps);
      EXPECT_EQ(s.calls, calls);
      EXPECT_EQ(s.mpis, mpis);
      if (!contract)
        EXPECT_EQ(s.vertices_before, shown);
    }
}

// Random programs (fixed seed): recursion, library and indirect calls,
// branches and loops at random. Stats (by DP) must match the materialised
// graph, every raw vertex of every copy must resolve to a vertex of that copy's
// subtree, and the contracted graph must obey the rules.
TEST(PsgStats, RandomProgramsAgreeWithTheMaterialisedGraph) {
  std::mt19937 rng(12345);
  auto pick = [&](int n) { return int(rng() % uint32_t(n)); };
  for (int round = 0; round < 150; ++round) {
    const int nf = 2 + pick(6);
    std::vector<Fn> fns;
    for (int i = 0; i < nf; ++i) {
      Fn f(i == 0 ? "main" : "f" + std::to_string(i), "r.c", 1, 100);
      std::vector<uint32_t> containers{0};
      const int nv = pick(12);
      for (int k = 0; k < nv; ++k) {
        uint32_t parent = containers[size_t(pick(int(containers.size())))];
        bool in_branch = f.psg().vertices[parent].kind == VertexKind::Branch;
        int32_t arm = in_branch ? pick(2) : -1;
        uint32_t line = uint32_t(2 + k);
        switch (pick(7)) {
        case 0:
          containers.push_back(f.Loop(parent, line, line + 1, arm));
          break;
        case 1:
          containers.push_back(f.Branch(parent, line, line + 1, arm));
          break;
        case 2:
          f.Mpi(parent, "MPI_Send", line, arm, MpiClass::P2PBlocking);
          break;
        case 3:
          f.Call(parent, "lib", line, arm);
          break;
        case 4:
          if (pick(4) == 0)
            f.Indirect(parent, line, arm);
          break;
        default:
          f.Call(parent, "f" + std::to_string(1 + pick(nf - 1)), line, arm);
        }
      }
      fns.push_back(f);
    }
    std::vector<LocalPsg> locals(fns.begin(), fns.end());
    for (bool contract : {false, true})
      for (uint32_t depth : {0u, 1u, 2u, 10u}) {
        SCOPED_TRACE("round " + std::to_string(round) + " contract=" + std::to_string(contract) +
                     " depth=" + std::to_string(depth));
        PsgOptions opts;
        opts.contract = contract;
        opts.max_loop_depth = depth;
        Psg psg = Psg::Build(locals, opts);
        PsgStats s = psg.Stats();
        psg.ExpandAll();
        uint64_t shown = 0, loops = 0, comps = 0, calls = 0, mpis = 0, branches = 0;
        for (VertexId v = 0; v < VertexId(psg.vertices().size()); ++v) {
          const Vertex &x = psg.vertex(v);
          for (VertexId c : x.children)
            ASSERT_EQ(psg.vertex(c).parent, v);
          if (x.kind == VertexKind::Call && x.expanded)
            continue;
          ++shown;
          loops += x.kind == VertexKind::Loop;
          comps += x.kind == VertexKind::Comp;
          calls += x.kind == VertexKind::Call;
          mpis += x.kind == VertexKind::Mpi;
          branches += x.kind == VertexKind::Branch;
          if (contract && x.kind == VertexKind::Loop) {
            uint32_t d = 1;
            for (VertexId p = x.parent; p != kNoVertex; p = psg.vertex(p).parent)
              d += psg.vertex(p).kind == VertexKind::Loop;
            EXPECT_LE(d, depth) << "a kept loop deeper than MaxLoopDepth";
          }
          if (contract && x.kind == VertexKind::Comp && x.parent != kNoVertex) {
            const auto &sib = psg.vertex(x.parent).children;
            auto pos = std::find(sib.begin(), sib.end(), v);
            if (pos + 1 != sib.end()) {
              const Vertex &next = psg.vertex(*(pos + 1));
              EXPECT_FALSE(next.kind == VertexKind::Comp && next.arm == x.arm)
                  << "two consecutive Comps";
            }
          }
        }
        EXPECT_EQ(s.vertices_after, shown);
        EXPECT_EQ(s.loops, loops);
        EXPECT_EQ(s.comps, comps);
        EXPECT_EQ(s.calls, calls);
        EXPECT_EQ(s.mpis, mpis);
        EXPECT_EQ(s.branches, branches);
        if (!contract)
          EXPECT_EQ(s.vertices_before, shown);
        // Every raw vertex of main resolves, to a vertex of main's code (or
        // the root, or a Comp holding it).
        for (uint32_t l = 0; l < locals[0].vertices.size(); ++l) {
          VertexId v = psg.Resolve({fns[0].Id(l)});
          ASSERT_NE(v, kNoVertex);
          EXPECT_TRUE(psg.vertex(v).function == 0) << "local " << l;
        }
      }
  }
}

// Sanity at size: ~50k local vertices over 500 functions in a call DAG.
TEST(PsgScale, FiftyThousandVertices) {
  std::vector<LocalPsg> fns;
  const int nf = 500;
  for (int i = 0; i < nf; ++i) {
    Fn f(i == 0 ? "main" : "fn" + std::to_string(i), "big.c", uint32_t(i * 300 + 1),
         uint32_t(i * 300 + 299));
    uint32_t base = uint32_t(i * 300);
    for (int k = 0; k < 14; ++k) {
      uint32_t l = f.Loop(0, base + 2 + k * 18, base + 19 + k * 18);
      uint32_t br = f.Branch(l, base + 3 + k * 18, base + 10 + k * 18);
      f.Mpi(br, "MPI_Send", base + 4 + k * 18, 0, MpiClass::P2PBlocking);
      f.Mpi(br, "MPI_Recv", base + 5 + k * 18, 1, MpiClass::P2PBlocking);
      uint32_t inner = f.Loop(l, base + 11 + k * 18, base + 15 + k * 18);
      f.Call(inner, "lib", base + 12 + k * 18);
      f.Loop(inner, base + 13 + k * 18, base + 14 + k * 18);
      // Each function calls the next one: one copy per function along a chain.
      if (i + 1 < nf && k == 0)
        f.Call(l, "fn" + std::to_string(i + 1), base + 16);
    }
    fns.push_back(f);
  }
  size_t local_total = 0;
  for (const LocalPsg &f : fns)
    local_total += f.vertices.size();
  EXPECT_GE(local_total, 49000u);
  auto start = std::chrono::steady_clock::now();
  Psg psg = Psg::Build(fns);
  PsgStats s = psg.Stats();
  auto counted = std::chrono::steady_clock::now();
  psg.ExpandAll();
  auto expanded = std::chrono::steady_clock::now();
  // A figure for the record, not a goal: no assertion on time.
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf(
      "[ figure   ] %zu local vertices: Build+Stats %.1f ms, ExpandAll %.1f ms, %zu vertices\n",
      local_total, ms(start, counted), ms(counted, expanded), psg.vertices().size());
  EXPECT_GE(s.vertices_before, 49000u);
  uint64_t shown = 0;
  for (const Vertex &v : psg.vertices())
    shown += !(v.kind == VertexKind::Call && v.expanded);
  EXPECT_EQ(s.vertices_after, shown);
  // The full context of the last function is deeper than the runtime's
  // stack: only its vertex is kept, and the unique call chain places it.
  Context ctx;
  for (int i = 0; i + 1 < nf; ++i) {
    Fn f(i == 0 ? "main" : "fn" + std::to_string(i), "big.c", 0, 0);
    ctx.push_back(f.Id(8)); // the call of the next function (k == 0)
  }
  Fn last("fn" + std::to_string(nf - 1), "big.c", 0, 0);
  ctx.push_back(last.Id(3));
  VertexId v = psg.Resolve(ctx);
  ASSERT_NE(v, kNoVertex);
  EXPECT_EQ(psg.vertex(v).label, "MPI_Send");
  EXPECT_EQ(psg.FunctionOf(v).key, "fn" + std::to_string(nf - 1));
  EXPECT_EQ(psg.CallPath(v).size(), size_t(nf));
  // A context cut to the stack's size does not fit: kNoVertex, not a guess.
  Context cut(ctx.begin(), ctx.begin() + kMaxContextCallSites);
  cut.push_back(last.Id(3));
  EXPECT_EQ(psg.Resolve(cut), kNoVertex);
}

} // namespace
} // namespace scalana
