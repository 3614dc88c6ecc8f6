// ParsePsgSection on section bytes written here (docs/formats.md section 2).
#include "psg_helpers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace scalana {
namespace {

using json = nlohmann::json;

std::string HashOf(const std::string &key) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx",
                (unsigned long long)scalana_function_hash(key.data(), key.size()));
  return buf;
}

// fig3.c as the pass would record it: main and foo in one record.
json Fig3Record() {
  return json::parse(R"({"scalana_psg": 1, "producer": "test", "module": "fig3.c",
    "language": "c", "opt_level": 2, "functions": [
    {"key": "foo", "name": "foo", "hash": ")" +
                     HashOf("foo") + R"(", "linkage": "external",
     "file": "fig3.c", "line": 10, "end_line": 16, "vertices": [
      {"id": 0, "kind": "function", "line": 10, "end_line": 16, "children": [1]},
      {"id": 1, "kind": "branch", "parent": 0, "line": 12, "end_line": 15, "children": [2, 3]},
      {"id": 2, "kind": "mpi", "parent": 1, "arm": 0, "line": 13, "col": 5, "op": "MPI_Send",
       "class": "p2p_blocking"},
      {"id": 3, "kind": "mpi", "parent": 1, "arm": 1, "line": 15, "col": 5, "op": "MPI_Recv",
       "class": "p2p_blocking"}]},
    {"key": "main", "name": "main", "hash": ")" +
                     HashOf("main") + R"(", "linkage": "external",
     "file": "fig3.c", "line": 20, "end_line": 36, "vertices": [
      {"id": 0, "kind": "function", "line": 20, "end_line": 36, "children": [1, 2, 7]},
      {"id": 1, "kind": "mpi", "parent": 0, "line": 22, "col": 3, "op": "MPI_Init", "class": "other"},
      {"id": 2, "kind": "loop", "parent": 0, "line": 25, "end_line": 34, "depth": 1,
       "children": [3, 4, 5, 6]},
      {"id": 3, "kind": "loop", "parent": 2, "line": 27, "end_line": 28, "depth": 2},
      {"id": 4, "kind": "loop", "parent": 2, "line": 29, "end_line": 30, "depth": 2},
      {"id": 5, "kind": "call", "parent": 2, "line": 31, "col": 5, "callee": "foo"},
      {"id": 6, "kind": "mpi", "parent": 2, "line": 32, "col": 5, "op": "MPI_Bcast",
       "class": "collective"},
      {"id": 7, "kind": "mpi", "parent": 0, "line": 35, "col": 3, "op": "MPI_Finalize",
       "class": "other"}]}]})");
}

std::vector<uint8_t> Bytes(const std::vector<json> &records, size_t padding = 0) {
  std::vector<uint8_t> out;
  for (const json &r : records) {
    std::string s = r.dump();
    out.insert(out.end(), s.begin(), s.end());
    out.push_back(0);
    out.insert(out.end(), padding, 0);
  }
  return out;
}

std::string ParseError(const std::vector<uint8_t> &bytes) {
  try {
    ParsePsgSection(bytes);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(PsgParse, Fig3RecordBuildsThePaperGraph) {
  std::vector<LocalPsg> fns = ParsePsgSection(Bytes({Fig3Record()}, 7));
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[1].key, "main");
  EXPECT_EQ(fns[1].module, "fig3.c");
  EXPECT_EQ(fns[1].language, "c");
  EXPECT_EQ(fns[1].vertices[5].callee, "foo");
  EXPECT_EQ(fns[0].vertices[2].mpi_class, MpiClass::P2PBlocking);
  EXPECT_EQ(fns[0].vertices[3].arm, 1);
  EXPECT_EQ(fns[1].vertices[5].loc.column, 5u);
  PsgOptions opts;
  opts.max_loop_depth = 1;
  Psg psg = Psg::Build(fns, opts);
  psg.ExpandAll();
  EXPECT_EQ(test::Tree(psg), test::kFig3MaxLoopDepth1);
}

TEST(PsgParse, PsgIdIsFnvOfTheSectionBytes) {
  std::vector<uint8_t> bytes = Bytes({Fig3Record()});
  std::string id = PsgIdOf(bytes);
  EXPECT_EQ(id.size(), 18u);
  char want[32];
  std::snprintf(want, sizeof want, "0x%016llx",
                (unsigned long long)scalana_fnv1a64(bytes.data(), bytes.size()));
  EXPECT_EQ(id, want);
  bytes.push_back(0); // padding changes the bytes, hence the identity
  EXPECT_NE(PsgIdOf(bytes), id);
}

TEST(PsgParse, DuplicateLinkonceFunctionsKeepTheFirst) {
  json a = Fig3Record();
  json b = Fig3Record();
  b["module"] = "other.c";
  b["functions"].erase(1); // only foo, identical
  json c = Fig3Record();
  c["module"] = "third.c";
  c["functions"].erase(1);
  c["functions"][0]["vertices"][2]["op"] = "MPI_Ssend"; // a conflicting copy
  std::vector<std::string> warnings;
  std::vector<LocalPsg> fns = ParsePsgSection(Bytes({a, b, c}, 3), &warnings);
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].module, "fig3.c");
  EXPECT_EQ(fns[0].vertices[2].mpi_op, "MPI_Send");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("third.c"), std::string::npos) << warnings[0];
}

// One inline function or template instance as two TUs record it (a.cc and
// b.cc include the same header): it calls the header's `static inline`
// helper, whose key carries each TU's module name.
json InlineRecord(const std::string &module, uint32_t end_line = 11) {
  std::string helper = module + ":_ZL5Scaled";
  std::string key = "_Z6ReduceIiEdPKT_i";
  json r = json::parse(R"({"scalana_psg": 1, "producer": "test", "language": "c++",
    "opt_level": 2, "functions": [{"key": ")" + key + R"(", "name": "Reduce<int>",
    "linkage": "linkonce", "file": "./shared.h", "line": 4, "vertices": [
      {"id": 0, "kind": "function", "line": 4, "children": [1, 3]},
      {"id": 1, "kind": "loop", "parent": 0, "line": 6, "end_line": 7, "depth": 1,
       "children": [2]},
      {"id": 2, "kind": "call", "parent": 1, "line": 7, "col": 10},
      {"id": 3, "kind": "mpi", "parent": 0, "line": 9, "col": 3, "op": "MPI_Allreduce",
       "class": "collective"}]},
    {"key": ")" + helper + R"(", "name": "Scale", "linkage": "internal",
     "file": "./shared.h", "line": 3, "end_line": 3, "vertices": [
      {"id": 0, "kind": "function", "line": 3, "end_line": 3}]}]})");
  r["module"] = module;
  r["functions"][0]["hash"] = HashOf(key);
  r["functions"][0]["end_line"] = end_line;
  r["functions"][0]["vertices"][0]["end_line"] = end_line;
  r["functions"][0]["vertices"][2]["callee"] = helper;
  r["functions"][1]["hash"] = HashOf(helper);
  return r;
}

TEST(PsgParse, SameInlineFunctionInTwoTusMergesSilently) {
  std::vector<std::string> warnings;
  std::vector<LocalPsg> fns =
      ParsePsgSection(Bytes({InlineRecord("a.cc"), InlineRecord("b.cc")}), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  ASSERT_EQ(fns.size(), 3u); // Reduce<int> once, each TU's Scale
  EXPECT_EQ(fns[0].module, "a.cc");
  EXPECT_EQ(fns[0].vertices[2].callee, "a.cc:_ZL5Scaled");
}

TEST(PsgParse, DifferentSourcesOfOneNameAreReported) {
  std::vector<std::string> warnings;
  ParsePsgSection(Bytes({InlineRecord("a.cc"), InlineRecord("b.cc", 12)}), &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("in a.cc and b.cc"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("lines shared.h:4-11 and shared.h:4-12"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("different sources"), std::string::npos) << warnings[0];
  // Same lines, another callee: the structure differs, and says where.
  json c = InlineRecord("c.cc");
  c["functions"][0]["vertices"][2]["callee"] = "other";
  warnings.clear();
  ParsePsgSection(Bytes({InlineRecord("a.cc"), c}), &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("vertex 2: calls 'a.cc:_ZL5Scaled' and 'other'"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("different options"), std::string::npos) << warnings[0];
}

TEST(PsgParse, IndirectCallsGetTheCandidatesOfEveryTu) {
  // a.c calls through a pointer and a vtable slot and sees no target; b.c
  // takes the address of kern (static there) and has an override in slot 2.
  json a = json::parse(R"J({"scalana_psg": 1, "module": "a.c", "language": "c++", "functions": [
    {"key": "main", "line": 1, "end_line": 9, "vertices": [
      {"id": 0, "kind": "function", "line": 1, "end_line": 9, "children": [1, 2, 3]},
      {"id": 1, "kind": "call", "parent": 0, "line": 3, "indirect": true, "sig": "void (i32)"},
      {"id": 2, "kind": "call", "parent": 0, "line": 4, "indirect": true,
       "sig": "void (ptr, i32)", "slot": 2},
      {"id": 3, "kind": "call", "parent": 0, "line": 5, "indirect": true,
       "candidates": ["mine"]}]}]})J");
  a["functions"][0]["hash"] = HashOf("main");
  json b = json::parse(R"J({"scalana_psg": 1, "module": "b.c", "language": "c++", "functions": [
    {"key": "b.c:kern", "line": 1, "end_line": 2, "vertices": [
      {"id": 0, "kind": "function", "line": 1, "end_line": 2}]},
    {"key": "_ZN1D5relaxEi", "line": 3, "end_line": 4, "vertices": [
      {"id": 0, "kind": "function", "line": 3, "end_line": 4}]}],
    "targets": [{"key": "b.c:kern", "sig": "void (i32)"},
                {"key": "declared_only", "sig": "void (i32)"},
                {"key": "_ZN1D5relaxEi", "sig": "void (ptr, i32)", "slot": 2},
                {"key": "_ZN1D5relaxEi", "sig": "void (ptr, i32)", "slot": 3}]})J");
  b["functions"][0]["hash"] = HashOf("b.c:kern");
  b["functions"][1]["hash"] = HashOf("_ZN1D5relaxEi");
  std::vector<LocalPsg> fns = ParsePsgSection(Bytes({a, b}));
  ASSERT_EQ(fns.size(), 3u);
  const auto &v = fns[0].vertices;
  // Only targets with a record and of the call's type (and slot).
  EXPECT_EQ(v[1].candidates, (std::vector<std::string>{"b.c:kern"}));
  EXPECT_EQ(v[2].candidates, (std::vector<std::string>{"_ZN1D5relaxEi"}));
  EXPECT_EQ(v[2].vtable_slot, 2);
  // A record of an older pass (no type) keeps its own list.
  EXPECT_EQ(v[3].candidates, (std::vector<std::string>{"mine"}));
  Psg psg = Psg::Build(fns);
  // By name where the target has a record (the hand-made records name none).
  EXPECT_EQ(psg.CandidatesOf(1), (std::vector<std::string>{"b.c:kern"}));
}

TEST(PsgParse, TruncatedRecord) {
  std::vector<uint8_t> bytes = Bytes({Fig3Record()});
  bytes.resize(bytes.size() / 2);
  std::string e = ParseError(bytes);
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  bytes.push_back(0); // cut JSON, but terminated
  e = ParseError(bytes);
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("record 0"), std::string::npos) << e;
}

TEST(PsgParse, BadKindNamesTheModuleAndFunction) {
  json r = Fig3Record();
  r["functions"][1]["vertices"][3]["kind"] = "lop";
  std::string e = ParseError(Bytes({Fig3Record(), r}));
  EXPECT_NE(e.find("record 1"), std::string::npos) << e;
  EXPECT_NE(e.find("module fig3.c"), std::string::npos) << e;
  EXPECT_NE(e.find("function 'main' vertex 3"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown kind 'lop'"), std::string::npos) << e;
  EXPECT_NE(e.find("rebuild"), std::string::npos) << e;
}

TEST(PsgParse, DanglingChild) {
  json r = Fig3Record();
  r["functions"][0]["vertices"][1]["children"] = {2, 3, 9};
  std::string e = ParseError(Bytes({r}));
  EXPECT_NE(e.find("function 'foo' vertex 1: child 9 out of range"), std::string::npos) << e;
}

TEST(PsgParse, ParentAndChildrenMustAgree) {
  json r = Fig3Record();
  r["functions"][1]["vertices"][6]["parent"] = 0; // but listed by the loop
  std::string e = ParseError(Bytes({r}));
  EXPECT_NE(e.find("child 6 has parent 0"), std::string::npos) << e;
  json s = Fig3Record();
  s["functions"][1]["vertices"][2]["children"] = {3, 4, 5}; // 6 not listed anywhere
  e = ParseError(Bytes({s}));
  EXPECT_NE(e.find("vertex 6: not among the children"), std::string::npos) << e;
}

TEST(PsgParse, OtherMalformedRecords) {
  json r = Fig3Record();
  r["scalana_psg"] = 2;
  EXPECT_NE(ParseError(Bytes({r})).find("schema version 2"), std::string::npos);
  r = Fig3Record();
  r["functions"][0]["hash"] = "0x8000000000000000";
  EXPECT_NE(ParseError(Bytes({r})).find("is not the hash of its key"), std::string::npos);
  r = Fig3Record();
  r["functions"][0]["vertices"][2].erase("op");
  EXPECT_NE(ParseError(Bytes({r})).find("has no 'op'"), std::string::npos);
  r = Fig3Record();
  r["functions"][1]["vertices"][5].erase("callee");
  EXPECT_NE(ParseError(Bytes({r})).find("neither 'callee' nor 'indirect'"), std::string::npos);
  r = Fig3Record();
  r["functions"][1]["vertices"][4]["id"] = 7;
  EXPECT_NE(ParseError(Bytes({r})).find("'id' is 7"), std::string::npos);
  r = Fig3Record();
  r["functions"][1]["vertices"][3]["parent"] = 40;
  EXPECT_NE(ParseError(Bytes({r})).find("parent 40 out of range"), std::string::npos);
  EXPECT_NE(ParseError(Bytes({json::array()})).find("not a JSON object"), std::string::npos);
  // Only padding: no functions, no error (LoadFromBinary reports the empty graph).
  EXPECT_TRUE(ParsePsgSection(std::vector<uint8_t>(16, 0)).empty());
}

TEST(PsgParse, FortranMainProgram) {
  // flang-new-19: `main` (in the module) calls the program unit `_QQmain`;
  // without a record of main, the program unit is the root.
  test::Fn prog("_QQmain", "p.f90", 1, 10);
  uint32_t loop = prog.Loop(0, 3, 8);
  prog.Mpi(loop, "MPI_Allreduce", 5);
  Psg psg = Psg::Build({prog});
  EXPECT_EQ(psg.vertex(psg.root()).label, "_QQmain");
  test::Fn main("main", "p.f90", 1, 10);
  main.Call(0, "_QQmain", 1);
  Psg both = Psg::Build({main, prog});
  both.ExpandAll();
  // The program unit's vertices are main's for the reader: no "(in _QQmain)".
  EXPECT_EQ(test::Tree(both), "Root main p.f90:1-10\n"
                              "  Loop p.f90:3-8\n"
                              "    MPI MPI_Allreduce p.f90:5\n");
  // flang's main is not in the graph: the program unit is the root, and
  // contexts with or without main's call of it (the `end program` line)
  // reach the same vertex; the call path is the reader's, without _QQmain.
  EXPECT_EQ(both.vertex(both.root()).function, 1);
  EXPECT_TRUE(both.IsGeneratedEntry(0));
  EXPECT_FALSE(both.IsGeneratedEntry(1));
  VertexId mpi = both.Resolve({main.Id(1), prog.Id(2)});
  ASSERT_NE(mpi, kNoVertex);
  EXPECT_EQ(both.Resolve({prog.Id(2)}), mpi);
  EXPECT_EQ(both.vertex(mpi).label, "MPI_Allreduce");
  EXPECT_EQ(both.CallPath(mpi), (std::vector<std::string>{"main"}));
  EXPECT_EQ(both.FunctionName(mpi), "main");
  std::vector<CallSite> sites = both.CallSites(mpi);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].vertex, both.root());
  EXPECT_EQ(sites[0].loc.line, 0u); // the entry has no call site
  // A sample in flang's runtime start-up, called from main: the root.
  EXPECT_EQ(both.Resolve({main.Id(1), main.Id(1)}), both.root());
  EXPECT_EQ(both.Resolve({main.Id(0)}), both.root());
  EXPECT_EQ(both.Stats().vertices_after, 3u);
  // Without a record of main the program unit is "main" in call paths too.
  VertexId alone = psg.Resolve({prog.Id(2)});
  EXPECT_EQ(psg.CallPath(alone), (std::vector<std::string>{"main"}));
  try {
    Psg::Build({test::Fn("helper", "h.c", 1, 2)});
    FAIL() << "no main";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no PSG record of main"), std::string::npos);
  }
}

TEST(PsgParse, HashCollisionIsReported) {
  // 44-bit hashes practically never collide; force one on hand-built records.
  LocalPsg a = test::Fn("main", "a.c", 1, 2);
  LocalPsg b = test::Fn("helper", "b.c", 1, 2);
  b.hash = a.hash;
  try {
    Psg::Build({a, b});
    FAIL() << "collision not reported";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'main' and 'helper' have the same hash"), std::string::npos) << m;
  }
}

TEST(PsgLoad, BinaryErrors) {
  auto load_error = [](const std::string &path) {
    try {
      Psg::LoadFromBinary(path);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = load_error("/nonexistent/app");
  EXPECT_NE(e.find("/nonexistent/app"), std::string::npos) << e;
  EXPECT_NE(e.find("scalana-cc"), std::string::npos) << e;
  e = load_error("/etc/hostname");
  EXPECT_NE(e.find("not an ELF file"), std::string::npos) << e;
  // An ordinary binary: built without the wrappers.
  e = load_error("/bin/true");
  EXPECT_EQ(e, "/bin/true has no Program Structure Graph (section scalana_psg missing): rebuild "
               "it with scalana-cc, scalana-cxx or scalana-fc (e.g. CC=scalana-cc make)");
}

} // namespace
} // namespace scalana
