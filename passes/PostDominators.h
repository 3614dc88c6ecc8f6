// Graph orders and post-dominators over a function's blocks, for the local
// PSG (FunctionPsg.cpp): iterative, since generated code has CFGs deep
// enough to overflow a recursive walk.
#pragma once

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/CFG.h"

#include <functional>
#include <utility>
#include <vector>

namespace scalana {

// Iterative depth-first post-order of the nodes reachable from `start`
// (recursion would overflow the stack on generated code with huge CFGs).
// `succs(v)` lists v's successors; the last one listed is visited first.
template <typename Succs>
inline void AppendPostOrder(unsigned start, unsigned num_nodes, Succs succs,
                            std::vector<unsigned> &out) {
  std::vector<char> seen(num_nodes, 0);
  std::vector<std::pair<unsigned, std::vector<unsigned>>> stack;
  seen[start] = 1;
  stack.push_back({start, succs(start)});
  while (!stack.empty()) {
    auto &[v, next] = stack.back();
    if (!next.empty()) {
      unsigned s = next.back();
      next.pop_back();
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, succs(s)});
      }
      continue;
    }
    out.push_back(v);
    stack.pop_back();
  }
}

// Post-dominators inside a scope (the function, or one loop's body) over the
// blocks that can reach the scope's normal exit (a `ret`; for a loop, its
// back edge), by the Cooper-Harvey-Kennedy iteration on the reverse CFG.
// Blocks that only lead elsewhere (`exit()`, `unreachable`, exception paths,
// and in a loop a `break`) are ignored, so that `if (bad) exit(1);` or a
// throwing call does not make every later block part of a branch arm.
class ScopePostDominators {
public:
  // edge(b, s): the CFG edge b->s stays in the scope. exits(b): b has an
  // edge to the scope's normal exit.
  ScopePostDominators(const std::vector<llvm::BasicBlock *> &blocks,
                      const llvm::DenseMap<const llvm::BasicBlock *, unsigned> &index,
                      const std::vector<unsigned> &members,
                      const std::function<bool(unsigned, unsigned)> &edge,
                      const std::function<bool(unsigned)> &exits) {
    const unsigned n = blocks.size();

    const unsigned exit = n; // virtual exit node
    exit_ = exit;
    live_.assign(n, false);
    std::vector<unsigned> work;
    for (unsigned i : members)
      if (exits(i)) {
        live_[i] = true;
        work.push_back(i);
      }
    std::vector<char> member(n, 0);
    for (unsigned i : members)
      member[i] = 1;
    while (!work.empty()) {
      unsigned b = work.back();
      work.pop_back();
      for (llvm::BasicBlock *p : llvm::predecessors(blocks[b])) {
        unsigned pi = index.lookup(p);
        if (member[pi] && !live_[pi] && edge(pi, b)) {
          live_[pi] = true;
          work.push_back(pi);
        }
      }
    }
    // Post-order of the reverse graph from the virtual exit.
    std::vector<unsigned> order;
    auto reverse_succs = [&](unsigned v) {
      std::vector<unsigned> out;
      if (v == exit) {
        for (unsigned i : members)
          if (live_[i] && exits(i))
            out.push_back(i);
      } else {
        for (llvm::BasicBlock *p : llvm::predecessors(blocks[v])) {
          unsigned pi = index.lookup(p);
          if (member[pi] && live_[pi] && edge(pi, v))
            out.push_back(pi);
        }
      }
      return out;
    };
    AppendPostOrder(exit, n + 1, reverse_succs, order);
    std::vector<unsigned> po_number(n + 1, ~0u);
    for (unsigned i = 0; i < order.size(); ++i)
      po_number[order[i]] = i;
    const unsigned undefined = ~0u;
    idom_.assign(n + 1, undefined);
    idom_[exit] = exit;
    auto intersect = [&](unsigned a, unsigned b) {
      while (a != b) {
        while (po_number[a] < po_number[b])
          a = idom_[a];
        while (po_number[b] < po_number[a])
          b = idom_[b];
      }
      return a;
    };
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        unsigned v = *it;
        if (v == exit)
          continue;
        // Predecessors in the reverse graph are the CFG successors (and the
        // virtual exit for exit blocks).
        unsigned new_idom = undefined;
        auto consider = [&](unsigned p) {
          if (idom_[p] == undefined)
            return;
          new_idom = new_idom == undefined ? p : intersect(p, new_idom);
        };
        if (exits(v))
          consider(exit);
        for (llvm::BasicBlock *s : llvm::successors(blocks[v])) {
          unsigned si = index.lookup(s);
          if (member[si] && live_[si] && edge(v, si) && po_number[si] != ~0u)
            consider(si);
        }
        if (new_idom != undefined && idom_[v] != new_idom) {
          idom_[v] = new_idom;
          changed = true;
        }
      }
    }
  }

  // Immediate post-dominator, or -1 for none (the virtual exit, or a block
  // that cannot reach the exit).
  int ImmediatePostDominator(unsigned b) const {
    if (!live_[b] || idom_[b] == ~0u || idom_[b] == exit_)
      return -1;
    return static_cast<int>(idom_[b]);
  }

private:
  std::vector<bool> live_;
  std::vector<unsigned> idom_;
  unsigned exit_ = 0;
};

} // namespace scalana
