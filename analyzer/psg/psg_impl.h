// The whole-program PSG's private state (Psg::Impl) and the types its
// parts share: the template of a contracted function, per-kind counts. One
// header for psg.cpp (building, Resolve, queries), psg_templates.cpp
// (analysis and contraction), psg_expand.cpp (materialising copies) and
// psg_write.cpp (text, JSON, DOT).
#pragma once

#include "omp.h"
#include "psg.h"

#include "scalana/ids.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace scalana {
namespace psg_internal {

inline uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// Per-kind counts of a (part of a) graph as shown; saturating.
struct Counts {
  uint64_t total = 0, loops = 0, branches = 0, comps = 0, mpis = 0, calls = 0, expanded = 0;
  uint64_t regions = 0;
  void Add(const Counts &o) {
    total = SatAdd(total, o.total);
    regions = SatAdd(regions, o.regions);
    loops = SatAdd(loops, o.loops);
    branches = SatAdd(branches, o.branches);
    comps = SatAdd(comps, o.comps);
    mpis = SatAdd(mpis, o.mpis);
    calls = SatAdd(calls, o.calls);
    expanded = SatAdd(expanded, o.expanded);
  }
  void AddKind(VertexKind k) {
    total = SatAdd(total, 1);
    switch (k) {
    case VertexKind::Loop:
      loops = SatAdd(loops, 1);
      break;
    case VertexKind::Branch:
      branches = SatAdd(branches, 1);
      break;
    case VertexKind::Comp:
      comps = SatAdd(comps, 1);
      break;
    case VertexKind::Mpi:
      mpis = SatAdd(mpis, 1);
      break;
    case VertexKind::Call:
      calls = SatAdd(calls, 1);
      break;
    case VertexKind::Function:
      break;
    }
  }
};

// A function's PSG after contraction at one entry loop depth: the shape every
// copy of the function at that depth gets. Index 0 is the copy's root.
struct TVertex {
  VertexKind kind = VertexKind::Comp;
  int32_t parent = -1;
  std::vector<int32_t> children;
  int32_t arm = -1;
  SourceLoc loc;
  uint32_t local = 0;
  int32_t callee = -1; // call with a record: function index
  bool indirect = false;
  uint32_t loop_depth = 0; // loops enclosing it inside the function
  OmpRegion region = OmpRegion::None;
  Worksharing worksharing = Worksharing::None;
};

struct Template {
  std::vector<TVertex> v;
  std::vector<int32_t> local_to_t; // raw local index -> template vertex containing it
};

} // namespace psg_internal

struct Psg::Impl {
  using Counts = psg_internal::Counts;
  using Template = psg_internal::Template;
  PsgOptions opts;
  std::vector<LocalPsg> fns;
  std::unordered_map<std::string, int32_t> by_key;
  std::unordered_map<uint64_t, int32_t> by_hash;
  int32_t main_fn = -1;
  int32_t fortran_program = -1; // `_QQmain`, shown as part of main
  // flang's generated C `main`, which only calls `_QQmain`: not part of the
  // graph (main_fn is then `_QQmain`), its frames are skipped by Resolve.
  int32_t flang_main = -1;
  std::string psg_id, build_id, binary;
  std::vector<std::string> libraries;
  std::vector<ModuleInfo> library_ids;
  std::vector<std::string> warnings;
  std::string structure_source; // "" for the pass's PSG

  // Static analysis per function.
  std::vector<std::vector<int32_t>> callee_of;     // per local vertex: callee index or -1
  std::vector<std::vector<uint8_t>> mpi_below;     // per local vertex (through callees)
  std::vector<std::vector<uint8_t>> loop_below;    // per local vertex (through callees)
  std::vector<std::vector<uint32_t>> loops_around; // loops enclosing a local vertex
  std::vector<uint8_t> fn_mpi, fn_loop;
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> callers; // (caller fn, call local)
  std::vector<int32_t> scc;
  std::vector<uint8_t> scc_cyclic; // per scc: more than one function or a self call
  // OpenMP (omp.h): functions only libomp calls, and where each one's code is.
  std::vector<uint8_t> runtime_entered;
  std::vector<int32_t> source_fn;

  // Templates: contracted by (fn, min(depth, max_loop_depth)), raw by fn.
  std::map<std::pair<int32_t, uint32_t>, Template> contracted;
  std::unordered_map<int32_t, Template> raw;

  // The materialised graph.
  struct Copy {
    int32_t fn = -1;
    VertexId vertex = kNoVertex; // the expanded call (or root) standing for the function vertex
    uint32_t depth = 0;          // loops enclosing the copy in the whole program
    std::vector<VertexId> local_map;
  };
  std::vector<Vertex> verts;
  std::vector<int32_t> copy_of;     // per vertex: copy it roots, or -1
  std::vector<int32_t> call_callee; // per vertex: callee function of a call, or -1
  std::vector<uint32_t> call_depth; // per vertex: loop depth a callee copy would enter at
  std::vector<Copy> copies;
  VertexId root = kNoVertex;
  std::vector<VertexId> extra_roots;
  std::unordered_map<uint64_t, VertexId> indirect_targets; // (call vertex, fn) -> target
  struct Start {
    int32_t copy = -1;
    VertexId terminal = kNoVertex;
  };
  std::unordered_map<int32_t, Start> starts; // first function of a context -> where it starts

  void Analyse();
  const Template &GetTemplate(int32_t f, uint32_t depth, bool contract);
  Template MakeTemplate(int32_t f, uint32_t depth, bool contract);
  int32_t Materialise(VertexId cv, int32_t f, uint32_t depth);
  VertexId AddVertex(Vertex v);
  void Expand(VertexId call);
  VertexId BindIndirect(VertexId call, int32_t target);
  int32_t CopyBelow(VertexId call_vertex);
  Start StartOf(int32_t f, std::vector<uint8_t> &visiting);
  // Vertices of these functions get no "(in f)" in the writers; nor do those
  // of an OpenMP construct's body in them.
  bool IsProgram(int32_t f) const {
    int32_t g = source_fn.empty() ? f : source_fn[size_t(f)];
    return g == main_fn || g == fortran_program;
  }
  // The name a reader knows: flang's program unit `_QQmain` is "main", an
  // OpenMP construct's outlined body "parallel region" (or "task", ...).
  const std::string &DisplayName(int32_t f) const {
    static const std::string kMain = "main";
    if (fns[size_t(f)].outlined != OmpRegion::None)
      return omp::StepName(fns[size_t(f)].outlined);
    return f == fortran_program || f == flang_main ? kMain : fns[size_t(f)].name;
  }
  // The function named in the writers' "(in f)": the one with the source.
  const std::string &SourceName(int32_t f) const {
    return fns[size_t(source_fn.empty() ? f : source_fn[size_t(f)])].name;
  }
  int32_t FnOfId(uint64_t id) const {
    auto it = by_hash.find(id & SCALANA_FN_MASK);
    return it == by_hash.end() ? -1 : it->second;
  }
  Counts Count(int32_t f, uint32_t depth, bool contract, std::vector<uint8_t> &on_path,
               std::map<std::tuple<int32_t, uint32_t, bool>, Counts> &memo);
  Counts CountProgram(bool contract);
  // Steps left for Count: call-graph cycles are walked path by path, which
  // can be exponential; past the budget the counts saturate ("too many").
  uint64_t count_steps_left = 0;
  // Memoised functions cost one step per template vertex and entry depth;
  // the budget covers that for any program, plus room for cycles.
  uint64_t CountBudget() const {
    uint64_t local = 0;
    for (const LocalPsg &f : fns)
      local += f.vertices.size();
    return 10'000'000 + 2 * local * (std::min<uint64_t>(opts.max_loop_depth, 64) + 1);
  }
  bool OnPath(VertexId from, int32_t f, VertexId *copy_vertex) const;
};

} // namespace scalana
