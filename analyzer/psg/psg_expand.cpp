// Materialising the graph lazily: copies of function templates under their
// call vertices, indirect targets bound as contexts name them, where a
// context's first function starts, and the counts of the graph as shown.
#include "psg_impl.h"

#include <algorithm>

namespace scalana {

using namespace psg_internal;

VertexId Psg::Impl::AddVertex(Vertex v) {
  verts.push_back(std::move(v));
  copy_of.push_back(-1);
  call_callee.push_back(-1);
  call_depth.push_back(0);
  return VertexId(verts.size() - 1);
}

// Is function f on the expansion path from `from` up to the root? Sets
// *copy_vertex to the vertex of the innermost copy of f on it.
bool Psg::Impl::OnPath(VertexId from, int32_t f, VertexId *copy_vertex) const {
  for (VertexId x = from; x != kNoVertex; x = verts[x].parent) {
    int32_t c = copy_of[x];
    if (c >= 0 && copies[c].fn == f) {
      *copy_vertex = x;
      return true;
    }
  }
  return false;
}

// Makes vertex cv stand for function f's vertex and adds f's contracted PSG
// below it. Calls with a record stay unexpanded until Expand.
int32_t Psg::Impl::Materialise(VertexId cv, int32_t f, uint32_t depth) {
  const Template &t = GetTemplate(f, depth, opts.contract);
  int32_t ci = int32_t(copies.size());
  copies.push_back(Copy{f, cv, depth, {}});
  copy_of[cv] = ci;
  std::vector<VertexId> tmap(t.v.size(), kNoVertex);
  tmap[0] = cv;
  // The functions on the expansion path, innermost copy first, gathered
  // once: each call checks it for recursion without walking up again.
  std::unordered_map<int32_t, VertexId> on_path;
  bool has_calls = false;
  for (size_t i = 1; i < t.v.size() && !has_calls; ++i)
    has_calls = t.v[i].callee >= 0;
  if (has_calls)
    for (VertexId x = cv; x != kNoVertex; x = verts[x].parent)
      if (copy_of[x] >= 0)
        on_path.emplace(copies[copy_of[x]].fn, x);
  for (size_t i = 1; i < t.v.size(); ++i) {
    const TVertex &tv = t.v[i];
    Vertex v;
    v.kind = tv.kind;
    v.parent = tmap[tv.parent];
    v.arm = tv.arm;
    v.loc = tv.loc;
    v.function = f;
    v.local = tv.local;
    v.region = tv.region;
    v.worksharing = tv.worksharing;
    const LocalVertex &lv = fns[f].vertices[tv.local];
    if (tv.kind == VertexKind::Mpi) {
      v.label = lv.mpi_op;
      v.mpi_class = lv.mpi_class;
    } else if (tv.kind == VertexKind::Call) {
      v.indirect = tv.indirect;
      v.label = tv.indirect ? "?" : tv.callee >= 0 ? fns[tv.callee].name : lv.callee;
      if (tv.region != OmpRegion::None) // its callee is a name the compiler made up
        v.label = omp::StepName(tv.region);
    }
    VertexId id = AddVertex(std::move(v));
    tmap[i] = id;
    verts[tmap[tv.parent]].children.push_back(id);
    if (tv.kind == VertexKind::Call) {
      call_depth[id] = depth + tv.loop_depth;
      if (tv.callee >= 0) {
        auto target = on_path.find(tv.callee);
        if (target != on_path.end()) {
          verts[id].recursive = true;
          verts[id].recursion_target = target->second;
        } else {
          call_callee[id] = tv.callee;
        }
      }
    }
  }
  Copy &c = copies[ci];
  c.local_map.resize(t.local_to_t.size());
  for (size_t l = 0; l < t.local_to_t.size(); ++l)
    c.local_map[l] = tmap[t.local_to_t[l]];
  return ci;
}

void Psg::Impl::Expand(VertexId call) {
  if (verts[call].expanded || call_callee[call] < 0)
    return;
  verts[call].expanded = true;
  Materialise(call, call_callee[call], call_depth[call]);
}

VertexId Psg::Impl::BindIndirect(VertexId call, int32_t target) {
  uint64_t key = uint64_t(uint32_t(call)) << 32 | uint32_t(target);
  auto it = indirect_targets.find(key);
  if (it != indirect_targets.end())
    return it->second;
  Vertex v;
  v.kind = VertexKind::Call;
  v.parent = call;
  v.loc = verts[call].loc;
  v.function = verts[call].function;
  v.local = verts[call].local;
  v.label = fns[target].name;
  v.indirect = true;
  VertexId id = AddVertex(std::move(v));
  verts[call].children.push_back(id);
  call_depth[id] = call_depth[call];
  VertexId loop_to;
  if (OnPath(call, target, &loop_to)) {
    verts[id].recursive = true;
    verts[id].recursion_target = loop_to;
  } else {
    call_callee[id] = target;
    Expand(id);
  }
  indirect_targets.emplace(key, id);
  return id;
}

// The copy a context continues in below a (kept) call vertex.
int32_t Psg::Impl::CopyBelow(VertexId x) {
  if (verts[x].recursive)
    return copy_of[verts[x].recursion_target];
  Expand(x);
  return copy_of[x];
}

// Where a context whose outermost frame is in function f starts: main's
// copy; else below f's only call site (recursively up to main); else a
// synthetic root of its own (OpenMP outlined functions, thread routines).
Psg::Impl::Start Psg::Impl::StartOf(int32_t f, std::vector<uint8_t> &visiting) {
  if (f == main_fn)
    return Start{copy_of[root], kNoVertex};
  auto it = starts.find(f);
  if (it != starts.end())
    return it->second;
  Start s;
  if (callers[f].size() == 1 && callers[f][0].first != f && !visiting[f]) {
    visiting[f] = 1;
    auto [caller, local] = callers[f][0];
    Start up = StartOf(caller, visiting);
    visiting[f] = 0;
    if (up.terminal != kNoVertex) {
      s.terminal = up.terminal;
    } else if (up.copy >= 0) {
      const Copy &c = copies[up.copy];
      VertexId x = c.local_map[local];
      const Vertex &xv = verts[x];
      if (xv.kind == VertexKind::Call && xv.function == caller && xv.local == local)
        s.copy = CopyBelow(x);
      else
        s.terminal = x; // the call was contracted into computation
    }
  }
  if (s.copy < 0 && s.terminal == kNoVertex) {
    Vertex v;
    v.kind = VertexKind::Function;
    v.loc = fns[f].loc;
    v.function = f;
    v.label = fns[f].name;
    VertexId id = AddVertex(std::move(v));
    extra_roots.push_back(id);
    s.copy = Materialise(id, f, 0);
  }
  starts.emplace(f, s);
  return s;
}

Counts Psg::Impl::Count(int32_t f, uint32_t depth, bool contract, std::vector<uint8_t> &on_path,
                        std::map<std::tuple<int32_t, uint32_t, bool>, Counts> &memo) {
  // Outside call-graph cycles the expansion of f does not depend on the path
  // (nothing below f can be on it), so one entry per (f, depth) suffices.
  // Inside a cycle it does: walked path by path, within count_steps_left.
  uint32_t d = contract ? std::min(depth, opts.max_loop_depth) : 0;
  bool cacheable = !scc_cyclic[scc[f]];
  auto key = std::make_tuple(f, d, contract);
  if (cacheable) {
    auto it = memo.find(key);
    if (it != memo.end())
      return it->second;
  }
  on_path[f] = 1;
  Counts c;
  const Template &t = GetTemplate(f, d, contract);
  for (size_t i = 1; i < t.v.size(); ++i) {
    if (count_steps_left == 0) {
      const uint64_t max = std::numeric_limits<uint64_t>::max();
      c = Counts{max, max, max, max, max, max, max, max};
      break;
    }
    --count_steps_left;
    const TVertex &tv = t.v[i];
    if (tv.kind == VertexKind::Call && tv.callee >= 0 && !on_path[tv.callee]) {
      c.expanded = SatAdd(c.expanded, 1);
      // A construct's call is shown (docs/psg.md): a vertex of its own.
      if (tv.region != OmpRegion::None) {
        c.total = SatAdd(c.total, 1);
        c.regions = SatAdd(c.regions, 1);
      }
      c.Add(Count(tv.callee, depth + tv.loop_depth, contract, on_path, memo));
    } else {
      c.AddKind(tv.kind);
    }
  }
  on_path[f] = 0;
  if (cacheable)
    memo.emplace(key, c);
  return c;
}

Counts Psg::Impl::CountProgram(bool contract) {
  std::vector<uint8_t> on_path(fns.size(), 0);
  std::map<std::tuple<int32_t, uint32_t, bool>, Counts> memo;
  count_steps_left = CountBudget();
  Counts c = Count(main_fn, 0, contract, on_path, memo);
  c.total = SatAdd(c.total, 1); // the root
  return c;
}

} // namespace scalana
