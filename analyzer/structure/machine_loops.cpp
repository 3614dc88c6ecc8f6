// Loops from machine code (docs/psg.md, "Structure from the binary"), as
// hpcstruct recovers them: basic blocks from the jumps, dominators over
// their graph (Cooper, Harvey and Kennedy's iteration), and for every edge
// to a block that dominates its source the natural loop it closes: the
// blocks from which the edge is reached without passing its target, the
// header. A jump back to a block that does not dominate it (GCC's shared
// exit paths, placed before the code that reaches them) is no loop. An
// indirect jump (a switch's table) has no known successors: a block nothing
// is seen to reach is a root of its own, so the loops of a switch's cases
// are still found.
#include "structure_internal.h"

#include <algorithm>
#include <map>

namespace scalana::structure {

void LineSpan::Add(const std::string &file, uint32_t line) {
  auto it =
      std::find_if(by_file.begin(), by_file.end(), [&](const auto &f) { return f.first == file; });
  if (it == by_file.end())
    it = by_file.insert(by_file.end(), {file, Range{}});
  Range &r = it->second;
  ++r.rows;
  r.first = std::min(r.first, line);
  r.last = std::max(r.last, line);
}

std::pair<std::string, LineSpan::Range> LineSpan::Own() const {
  std::pair<std::string, Range> best;
  for (const auto &f : by_file)
    if (f.second.rows > best.second.rows)
      best = f;
  return best;
}

bool Loop::Contains(uint64_t addr) const {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), std::make_pair(addr, UINT64_MAX));
  return it != ranges.begin() && addr < std::prev(it)->second;
}

namespace {

struct Block {
  size_t first = 0, last = 0; // instruction indices, inclusive
  std::vector<size_t> preds;
};

} // namespace

std::vector<Loop> FindLoops(const std::vector<Insn> &code, const std::vector<Chain> &chains,
                            uint64_t begin, uint64_t end) {
  if (code.empty())
    return {};
  // Leaders: the first instruction, every jump target inside, and every
  // instruction after a jump or a return.
  std::map<uint64_t, size_t> index; // address -> instruction
  for (size_t i = 0; i < code.size(); ++i)
    index[code[i].addr] = i;
  std::vector<bool> leader(code.size(), false);
  leader[0] = true;
  for (size_t i = 0; i < code.size(); ++i) {
    const Insn &in = code[i];
    if ((in.branch || in.ret) && i + 1 < code.size())
      leader[i + 1] = true;
    if (in.branch && in.has_target && in.target >= begin && in.target < end)
      if (auto it = index.find(in.target); it != index.end())
        leader[it->second] = true;
  }
  std::vector<Block> blocks;
  std::vector<size_t> block_of(code.size());
  for (size_t i = 0; i < code.size(); ++i) {
    if (leader[i])
      blocks.push_back({i, i, {}});
    blocks.back().last = i;
    block_of[i] = blocks.size() - 1;
  }
  // Edges. Alignment padding (no-ops nothing jumps to, after a jump or a
  // return) leads nowhere: falling into the next block from it would make
  // that block a second entry of its function, and no loop would have a
  // header that dominates it.
  auto padding = [&](const Block &bl) {
    for (size_t i = bl.first; i <= bl.last; ++i)
      if (!code[i].nop)
        return false;
    return bl.first > 0;
  };
  std::vector<std::vector<size_t>> succs(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (padding(blocks[b]))
      continue;
    const Insn &in = code[blocks[b].last];
    auto add = [&](size_t to) {
      blocks[to].preds.push_back(b);
      succs[b].push_back(to);
    };
    if (in.branch && in.has_target)
      if (auto it = index.find(in.target); it != index.end())
        add(block_of[it->second]);
    if (!in.ret && (!in.branch || in.conditional) && b + 1 < blocks.size())
      add(b + 1);
  }
  // Dominators from a virtual root (index N) over the entry and every block
  // without a predecessor seen.
  const size_t n = blocks.size(), root = n;
  std::vector<size_t> order, rpo_of(n + 1, SIZE_MAX);
  {
    std::vector<bool> seen(n, false);
    std::vector<std::pair<size_t, size_t>> stack; // (block, next successor)
    auto visit = [&](size_t start) {
      if (seen[start])
        return;
      seen[start] = true;
      stack.emplace_back(start, 0);
      while (!stack.empty()) {
        auto &[b, next] = stack.back();
        if (next < succs[b].size()) {
          size_t s2 = succs[b][next++];
          if (!seen[s2]) {
            seen[s2] = true;
            stack.emplace_back(s2, 0);
          }
        } else {
          order.push_back(b);
          stack.pop_back();
        }
      }
    };
    visit(0);
    for (size_t b = 1; b < n; ++b)
      if (blocks[b].preds.empty() && !padding(blocks[b]))
        visit(b);
    for (size_t b = 0; b < n; ++b) // cycles nothing enters (unreachable code)
      visit(b);
    std::reverse(order.begin(), order.end());
    for (size_t i = 0; i < order.size(); ++i)
      rpo_of[order[i]] = i + 1;
    rpo_of[root] = 0;
  }
  std::vector<size_t> idom(n + 1, SIZE_MAX);
  idom[root] = root;
  auto intersect = [&](size_t a, size_t b) {
    while (a != b) {
      while (rpo_of[a] > rpo_of[b])
        a = idom[a];
      while (rpo_of[b] > rpo_of[a])
        b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b : order) {
      size_t d = b == 0 || (blocks[b].preds.empty() && !padding(blocks[b])) ? root : SIZE_MAX;
      for (size_t p : blocks[b].preds)
        if (idom[p] != SIZE_MAX)
          d = d == SIZE_MAX ? p : intersect(p, d);
      if (d != SIZE_MAX && idom[b] != d)
        idom[b] = d, changed = true;
    }
  }
  auto dominates = [&](size_t h, size_t b) {
    for (size_t x = b; idom[x] != SIZE_MAX; x = idom[x]) {
      if (x == h)
        return true;
      if (x == root)
        return false;
    }
    return false;
  };
  std::vector<std::pair<size_t, size_t>> back; // (latch block, header block)
  for (size_t b = 0; b < n; ++b)
    for (size_t h : succs[b])
      if (dominates(h, b))
        back.emplace_back(b, h);
  // One loop per header: the union of its back edges' natural loops.
  std::map<size_t, std::vector<bool>> members;
  // header -> its first and last latch block (a rotated loop's latch, the
  // test its entry jumps to, may come before its header)
  std::map<size_t, size_t> first_latch, last_latch;
  for (auto [latch, header] : back) {
    size_t &l = last_latch[header];
    l = std::max({l, latch, header});
    auto [f, fresh] = first_latch.try_emplace(header, latch);
    f->second = std::min(f->second, latch);
    std::vector<bool> &in = members.try_emplace(header, blocks.size(), false).first->second;
    in[header] = true;
    std::vector<size_t> work{latch};
    while (!work.empty()) {
      size_t b = work.back();
      work.pop_back();
      if (in[b])
        continue;
      in[b] = true;
      for (size_t p : blocks[b].preds)
        work.push_back(p);
    }
  }
  std::vector<Loop> loops;
  for (const auto &[header, in] : members) {
    Loop l;
    l.header = code[blocks[header].first].addr;
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (!in[b])
        continue;
      const Insn &last = code[blocks[b].last];
      uint64_t s = code[blocks[b].first].addr, e = last.addr + last.size;
      if (!l.ranges.empty() && l.ranges.back().second == s)
        l.ranges.back().second = e;
      else
        l.ranges.emplace_back(s, e);
      l.bytes += e - s;
    }
    // It belongs to the deepest function every instruction's chain shares
    // (a loop of an inlined function is that function's); its lines are
    // those of its instructions at that level. Only the blocks from the
    // header to its latches tell: cold blocks placed far away (a
    // library call's slow path) carry lines the line table continues from
    // whatever code precedes them (LULESH under GCC: a loop of
    // CalcSoundSpeedForElems took the injected loop's line from its sqrt
    // path, and the injected loop's samples with it).
    std::vector<bool> hot(blocks.size(), false);
    for (size_t b = std::min(header, first_latch[header]); b <= last_latch[header]; ++b)
      hot[b] = in[b];
    const Chain *first = nullptr;
    size_t common = 0;
    for (size_t b = 0; b < blocks.size(); ++b)
      for (size_t i = blocks[b].first; hot[b] && i <= blocks[b].last; ++i) {
        const Chain &c = chains[i];
        if (c.empty())
          continue;
        if (!first) {
          first = &c;
          common = c.size();
          continue;
        }
        size_t k = 0;
        while (k < common && k < c.size() && c[k].name == (*first)[k].name)
          ++k;
        common = k;
      }
    if (!first || common == 0)
      continue;
    l.level = common - 1;
    l.fn = (*first)[l.level].name;
    LineSpan span;
    for (size_t b = 0; b < blocks.size(); ++b)
      for (size_t i = blocks[b].first; hot[b] && i <= blocks[b].last; ++i)
        if (chains[i].size() > l.level)
          span.Add(chains[i][l.level].file, chains[i][l.level].line);
    l.line = span.Own().second.first;
    l.end_line = span.Own().second.last;
    loops.push_back(std::move(l));
  }
  // Nesting: outer loops first (larger first); each loop's parent is the
  // smallest larger loop of its function and level holding its header.
  std::sort(loops.begin(), loops.end(),
            [](const Loop &a, const Loop &b) { return a.bytes > b.bytes; });
  for (size_t i = 0; i < loops.size(); ++i)
    for (size_t j = i; j-- > 0;)
      if (loops[j].fn == loops[i].fn && loops[j].level == loops[i].level &&
          loops[j].Contains(loops[i].header)) {
        loops[i].parent = int(j);
        break;
      }
  return loops;
}

} // namespace scalana::structure
