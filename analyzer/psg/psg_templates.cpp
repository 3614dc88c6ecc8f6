// The static analysis of each function (callees, MPI and loops below, call
// graph cycles) and its contraction into templates (docs/psg.md).
#include "psg_impl.h"

#include <algorithm>
#include <functional>

namespace scalana {

using namespace psg_internal;

void Psg::Impl::Analyse() {
  const size_t nf = fns.size();
  callee_of.resize(nf);
  mpi_below.resize(nf);
  loop_below.resize(nf);
  loops_around.resize(nf);
  fn_mpi.assign(nf, 0);
  fn_loop.assign(nf, 0);
  callers.assign(nf, {});
  std::vector<std::vector<int32_t>> calls(nf);
  for (size_t f = 0; f < nf; ++f) {
    const auto &vs = fns[f].vertices;
    callee_of[f].assign(vs.size(), -1);
    for (const LocalVertex &v : vs) {
      if (v.kind == VertexKind::Mpi)
        fn_mpi[f] = 1;
      if (v.kind == VertexKind::Loop)
        fn_loop[f] = 1;
      // An indirect call may reach MPI: keep the structure around it.
      if (v.kind == VertexKind::Call && v.indirect)
        fn_mpi[f] = 1;
      if (v.kind == VertexKind::Call && !v.indirect) {
        auto it = by_key.find(v.callee);
        if (it != by_key.end()) {
          callee_of[f][v.local] = it->second;
          calls[f].push_back(it->second);
          callers[it->second].emplace_back(int32_t(f), v.local);
        }
      }
    }
  }
  // "Has MPI / a loop below" flows from callees to callers: a worklist over
  // the reverse call graph handles recursion without iterating to a fixpoint.
  for (auto *flag : {&fn_mpi, &fn_loop}) {
    std::vector<int32_t> work;
    for (size_t f = 0; f < nf; ++f)
      if ((*flag)[f])
        work.push_back(int32_t(f));
    while (!work.empty()) {
      int32_t g = work.back();
      work.pop_back();
      for (auto &[caller, local] : callers[g])
        if (!(*flag)[caller]) {
          (*flag)[caller] = 1;
          work.push_back(caller);
        }
    }
  }
  // Per local vertex: post-order over the tree (children before parents).
  for (size_t f = 0; f < nf; ++f) {
    const auto &vs = fns[f].vertices;
    auto &mb = mpi_below[f], &lb = loop_below[f];
    auto &la = loops_around[f];
    mb.assign(vs.size(), 0);
    lb.assign(vs.size(), 0);
    la.assign(vs.size(), 0);
    std::vector<uint32_t> order;
    order.reserve(vs.size());
    std::vector<uint32_t> stack{0};
    while (!stack.empty()) {
      uint32_t u = stack.back();
      stack.pop_back();
      order.push_back(u);
      for (uint32_t c : vs[u].children) {
        la[c] = la[u] + (vs[u].kind == VertexKind::Loop ? 1 : 0);
        stack.push_back(c);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const LocalVertex &v = vs[*it];
      uint8_t m = v.kind == VertexKind::Mpi || (v.kind == VertexKind::Call && v.indirect);
      uint8_t l = v.kind == VertexKind::Loop;
      int32_t g = callee_of[f][*it];
      if (g >= 0) {
        m |= fn_mpi[g];
        l |= fn_loop[g];
      }
      for (uint32_t c : v.children) {
        m |= mb[c];
        l |= lb[c];
      }
      mb[*it] = m;
      lb[*it] = l;
    }
  }
  // Strongly connected components of the call graph (iterative Tarjan): a
  // function outside any cycle expands the same way on every path, so counts
  // can be memoised per function.
  scc.assign(nf, -1);
  std::vector<int32_t> index(nf, -1), low(nf, 0), stk;
  std::vector<uint8_t> on_stk(nf, 0);
  int32_t next_index = 0, nscc = 0;
  for (size_t s = 0; s < nf; ++s) {
    if (index[s] >= 0)
      continue;
    std::vector<std::pair<int32_t, size_t>> dfs{{int32_t(s), 0}};
    index[s] = low[s] = next_index++;
    stk.push_back(int32_t(s));
    on_stk[s] = 1;
    while (!dfs.empty()) {
      auto &[u, i] = dfs.back();
      if (i < calls[u].size()) {
        int32_t w = calls[u][i++];
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stk.push_back(w);
          on_stk[w] = 1;
          dfs.emplace_back(w, 0);
        } else if (on_stk[w]) {
          low[u] = std::min(low[u], index[w]);
        }
        continue;
      }
      int32_t done = u;
      dfs.pop_back();
      if (!dfs.empty())
        low[dfs.back().first] = std::min(low[dfs.back().first], low[done]);
      if (low[done] == index[done]) {
        int32_t w;
        do {
          w = stk.back();
          stk.pop_back();
          on_stk[w] = 0;
          scc[w] = nscc;
        } while (w != done);
        ++nscc;
      }
    }
  }
  runtime_entered = omp::EnteredByRuntime(fns, callers);
  source_fn = omp::SourceFunctions(fns, callers);
  scc_cyclic.assign(nscc, 0);
  std::vector<int32_t> size(nscc, 0);
  for (size_t f = 0; f < nf; ++f)
    ++size[scc[f]];
  for (size_t f = 0; f < nf; ++f) {
    if (size[scc[f]] > 1)
      scc_cyclic[scc[f]] = 1;
    for (int32_t g : calls[f])
      if (g == int32_t(f))
        scc_cyclic[scc[f]] = 1;
  }
}

// Contraction of one function at whole-program entry loop depth `depth`
// (docs/psg.md). Without contraction the template is the local PSG with
// calls that have no record turned into Comp.
Template Psg::Impl::MakeTemplate(int32_t f, uint32_t depth, bool contract) {
  const LocalPsg &fn = fns[f];
  const auto &vs = fn.vertices;
  const uint32_t max_depth = opts.max_loop_depth;
  Template t;
  t.local_to_t.assign(vs.size(), 0);
  TVertex r;
  r.kind = VertexKind::Function;
  r.loc = fn.loc;
  t.v.push_back(r);

  auto loc_of = [&](const LocalVertex &v) {
    SourceLoc l = v.loc;
    if (l.file.empty())
      l.file = fn.loc.file;
    return l;
  };
  auto map_subtree = [&](uint32_t u, int32_t to, std::vector<uint32_t> *locals) {
    std::vector<uint32_t> st{u};
    while (!st.empty()) {
      uint32_t x = st.back();
      st.pop_back();
      t.local_to_t[x] = to;
      if (locals)
        locals->push_back(x);
      for (uint32_t c : vs[x].children)
        st.push_back(c);
    }
  };
  // Global loop depth of the code directly inside local vertex u's parent.
  auto enclosing = [&](uint32_t u) { return depth + loops_around[f][u]; };
  auto is_comp = [&](uint32_t c) {
    const LocalVertex &v = vs[c];
    uint32_t d = enclosing(c);
    if (v.kind == VertexKind::Comp)
      return true;
    if (v.kind == VertexKind::Call && !v.indirect && callee_of[f][c] < 0)
      return true;
    // A callee that is only straight-line code: computation, not an empty copy.
    if (v.kind == VertexKind::Call && callee_of[f][c] >= 0 &&
        fns[callee_of[f][c]].vertices.size() == 1)
      return true;
    if (!contract)
      return false;
    switch (v.kind) {
    case VertexKind::Loop:
      return !mpi_below[f][c] && d + 1 > max_depth;
    case VertexKind::Branch:
    case VertexKind::Call:
      return !mpi_below[f][c] && !(loop_below[f][c] && d < max_depth);
    default:
      return false;
    }
  };
  auto folds = [&](uint32_t c) {
    return contract && vs[c].kind == VertexKind::Loop && enclosing(c) + 1 > max_depth;
  };

  struct Pending {
    std::vector<uint32_t> roots; // raw subtrees that become one Comp
    int32_t arm = -1;
  };
  std::function<void(int32_t, uint32_t, Pending &, int32_t)> emit;
  auto flush = [&](int32_t tparent, Pending &p) {
    if (p.roots.empty())
      return;
    int32_t ti = int32_t(t.v.size());
    TVertex cv;
    cv.kind = VertexKind::Comp;
    cv.parent = tparent;
    cv.arm = p.arm;
    cv.local = p.roots.front();
    cv.loop_depth = loops_around[f][p.roots.front()];
    std::vector<uint32_t> locals;
    for (uint32_t u : p.roots)
      map_subtree(u, ti, &locals);
    bool first = true;
    for (uint32_t x : locals) {
      SourceLoc l = loc_of(vs[x]);
      if (l.line == 0)
        continue;
      if (first)
        cv.loc = l;
      cv.loc.line = std::min(cv.loc.line, l.line);
      cv.loc.end_line = std::max({cv.loc.end_line, l.end_line, l.line});
      first = false;
    }
    if (first)
      cv.loc.file = fn.loc.file;
    t.v.push_back(cv);
    t.v[tparent].children.push_back(ti);
    p.roots.clear();
  };
  // Emits the children of raw vertex u under template vertex tparent. A
  // folded loop splices its children into tparent, so pending computation is
  // shared with the caller to merge across the fold.
  emit = [&](int32_t tparent, uint32_t u, Pending &pending, int32_t inherited_arm) {
    bool branch = vs[u].kind == VertexKind::Branch;
    for (uint32_t c : vs[u].children) {
      int32_t arm = branch ? vs[c].arm : inherited_arm;
      if (is_comp(c)) {
        // Arms of a branch are alternatives: never merge across them.
        if (!contract || pending.arm != arm)
          flush(tparent, pending);
        pending.arm = arm;
        pending.roots.push_back(c);
        if (!contract)
          flush(tparent, pending);
        continue;
      }
      if (folds(c)) {
        t.local_to_t[c] = tparent; // its own code becomes the parent's
        emit(tparent, c, pending, arm);
        continue;
      }
      flush(tparent, pending);
      const LocalVertex &v = vs[c];
      int32_t ti = int32_t(t.v.size());
      TVertex tv;
      tv.kind = v.kind;
      tv.parent = tparent;
      tv.arm = arm;
      tv.loc = loc_of(v);
      tv.local = c;
      tv.callee = callee_of[f][c];
      tv.indirect = v.indirect;
      tv.loop_depth = loops_around[f][c];
      tv.region = v.region;
      tv.worksharing = v.worksharing;
      // Readers look for a construct at its directive (flang's fork call
      // has a location of its own; frames still match the record's).
      if (v.region != OmpRegion::None && v.directive_line)
        tv.loc.line = tv.loc.end_line = v.directive_line;
      t.v.push_back(tv);
      t.v[tparent].children.push_back(ti);
      t.local_to_t[c] = ti;
      if (v.kind == VertexKind::Loop || v.kind == VertexKind::Branch) {
        Pending inner;
        emit(ti, c, inner, -1);
        flush(ti, inner);
        // A loop whose body is only computation is a leaf: the Comp would
        // just repeat the loop's own time.
        if (contract && v.kind == VertexKind::Loop && t.v[ti].children.size() == 1 &&
            t.v.back().kind == VertexKind::Comp && t.v[ti].children[0] == int32_t(t.v.size()) - 1) {
          for (auto &m : t.local_to_t)
            if (m == int32_t(t.v.size()) - 1)
              m = ti;
          t.v.pop_back();
          t.v[ti].children.clear();
        }
      } else {
        // Calls and MPI: raw children (none expected) belong to the vertex.
        map_subtree(c, ti, nullptr);
      }
    }
  };
  Pending top;
  emit(0, 0, top, -1);
  flush(0, top);
  if (contract && t.v[0].children.size() == 1 && t.v.size() == 2 &&
      t.v[1].kind == VertexKind::Comp) {
    for (auto &m : t.local_to_t)
      m = 0;
    t.v.pop_back();
    t.v[0].children.clear();
  }
  return t;
}

const Template &Psg::Impl::GetTemplate(int32_t f, uint32_t depth, bool contract) {
  if (!contract) {
    auto it = raw.find(f);
    if (it == raw.end())
      it = raw.emplace(f, MakeTemplate(f, 0, false)).first;
    return it->second;
  }
  // Past the limit every loop folds, so deeper entries contract alike.
  uint32_t d = std::min(depth, opts.max_loop_depth);
  auto key = std::make_pair(f, d);
  auto it = contracted.find(key);
  if (it == contracted.end())
    it = contracted.emplace(key, MakeTemplate(f, d, true)).first;
  return it->second;
}

} // namespace scalana
