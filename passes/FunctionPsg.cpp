// One function's local PSG: loops from LoopInfo, branches from the CFG and a
// post-dominator tree over the blocks that can return, call and MPI vertices
// from call sites, all ordered by a loop-aware reverse post-order
// (docs/psg.md). FunctionPsgBuilder does it in named stages.
#include "MpiNames.h"
#include "PostDominators.h"
#include "ScalanaOmp.h"
#include "ScalanaPsg.h"
#include "scalana/ids.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

using namespace llvm;

namespace scalana {
namespace {

std::string LinkageName(const Function &f) {
  if (f.hasLocalLinkage())
    return "internal";
  if (f.hasLinkOnceLinkage())
    return "linkonce";
  if (f.hasWeakLinkage() || f.hasCommonLinkage() || f.hasExternalWeakLinkage())
    return "weak";
  return "external";
}

// A location in the function's own code (not from an inlined callee).
const DILocation *OwnLocation(const Instruction &inst) {
  const DILocation *loc = inst.getDebugLoc().get();
  if (!loc || loc->getLine() == 0 || loc->getInlinedAt())
    return nullptr;
  return loc;
}

// The source path as the analyzer will open it. docs/formats.md makes relative
// names relative to the record's comp_dir, but a DIFile may carry a directory
// of its own (clang shortens sources under its working directory to a name
// relative to that directory, which need not be the compilation directory):
// keep it whenever it is not comp_dir.
std::string SourcePath(const DIFile *file, StringRef comp_dir) {
  if (!file)
    return "";
  StringRef name = file->getFilename(), dir = file->getDirectory();
  if (name.empty() || sys::path::is_absolute(name) || dir.empty() || dir == comp_dir)
    return name.str();
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path.str());
}

// DIFiles are uniqued, but one file may still appear with and without a
// checksum: compare by name and directory when the pointers differ.
bool SameFile(const DIFile *a, const DIFile *b) {
  return a == b ||
         (a && b && a->getFilename() == b->getFilename() && a->getDirectory() == b->getDirectory());
}

std::string FileOf(const DISubprogram *sp) {
  if (!sp || !sp->getFile())
    return "";
  return SourcePath(sp->getFile(), sp->getUnit() ? sp->getUnit()->getDirectory() : "");
}

// Line range of a set of blocks, restricted to locations in `file`.
struct LineRange {
  uint32_t first = 0, last = 0;
  void Add(uint32_t line) {
    if (line == 0)
      return;
    if (first == 0 || line < first)
      first = line;
    if (line > last)
      last = line;
  }
};

struct Item {
  unsigned block;
  unsigned position; // instruction index in the block
  CallBase *call;
  bool is_mpi;
  std::string callee_key, op;
  bool indirect = false;
  std::vector<std::string> candidates;
  std::string signature;
  int64_t vtable_slot = -1;
  OmpRegion region = OmpRegion::None; // a call starting an OpenMP construct
  uint32_t directive_line = 0;
};

// A structural region: the function, a loop or a branch.
struct Region {
  VertexKind kind;
  unsigned head; // function: entry, loop: header, branch: the branching block
  BitVector blocks;
  std::vector<int8_t> arm_of_block; // branch: arm index per block, -1 outside
  Loop *loop = nullptr;
  Worksharing worksharing = Worksharing::None;
  unsigned nesting = 0; // number of other regions holding the head
  size_t size = 0;
};

// clang runs a parallel region whose `if` clause is false on the encountering
// thread alone, calling the outlined function directly next to the fork.
// That call is the same region: the fork's vertex stands for both, and the
// body keeps one call site, where the other threads' contexts start.
void DropSerializedRegionCalls(std::vector<Item> &items, BitVector &has_item) {
  StringSet<> forked;
  for (const Item &it : items)
    if (it.region == OmpRegion::Parallel || it.region == OmpRegion::Teams)
      forked.insert(it.callee_key);
  if (forked.empty())
    return;
  erase_if(items, [&](const Item &it) {
    return it.region == OmpRegion::None && !it.is_mpi && !it.indirect &&
           forked.contains(it.callee_key);
  });
  has_item.reset();
  for (const Item &it : items)
    has_item.set(it.block);
}

// Builds one function's local PSG in stages, each a method over the state
// the earlier ones left: blocks numbered, loop bodies as the source has
// them, a loop-aware reverse post-order, the call sites, the regions (the
// function, loops, branches guarding structure), their nesting, the vertex
// tree, and the vertices with their source ranges.
class FunctionPsgBuilder {
public:
  FunctionPsgBuilder(Function &f, const CallClassifier &classifier)
      : f_(f), classifier_(classifier), dt_(f), li_(dt_) {}

  FunctionPsg Build() {
    NameFunction();
    NumberBlocks();
    ExtendLoopBodies();
    OrderBlocks();
    CollectCallSites();
    regions_.push_back(Region{VertexKind::Function, 0, BitVector(n_, true), {}, nullptr});
    AddLoopRegions();
    AddBranchRegions();
    NestRegions();
    BuildTree();
    WriteVertices();
    return std::move(psg_);
  }

private:
  void NameFunction() {
    psg_.key = classifier_.FunctionKey(f_);
    psg_.hash = scalana_function_hash(psg_.key.data(), psg_.key.size());
    psg_.linkage = LinkageName(f_);
    psg_.outlined = classifier_.OutlinedKind(f_);
    DemangledName d = Demangle(f_.getName());
    const DISubprogram *sp = f_.getSubprogram();
    if (d.ok)
      psg_.name = d.full;
    else if (sp && !sp->getName().empty())
      psg_.name = sp->getName().str();
    else
      psg_.name = f_.getName().str();
    psg_.file = FileOf(sp);
    // Locations are compared by DIFile, paths written via SourcePath.
    fn_file_ = sp ? sp->getFile() : nullptr;
    comp_dir_ = sp && sp->getUnit() ? sp->getUnit()->getDirectory() : StringRef();
    psg_.line = sp ? sp->getLine() : 0;
  }

  void NumberBlocks() {
    for (BasicBlock &bb : f_) {
      index_[&bb] = blocks_.size();
      blocks_.push_back(&bb);
    }
    n_ = blocks_.size();
  }

  // Adds to SET every block reachable from SEEDS through blocks that ADMIT
  // accepts, seeds included.
  template <typename Admit>
  void Flood(BitVector &set, ArrayRef<unsigned> seeds, Admit admit) const {
    std::vector<unsigned> work;
    auto visit = [&](unsigned b) {
      if (!set.test(b) && admit(b)) {
        set.set(b);
        work.push_back(b);
      }
    };
    for (unsigned b : seeds)
      visit(b);
    while (!work.empty()) {
      unsigned y = work.back();
      work.pop_back();
      for (BasicBlock *sb : successors(blocks_[y]))
        visit(index_.lookup(sb));
    }
  }

  // Loop bodies as the source has them. A natural loop excludes the blocks
  // of a `break` or `return` path (they cannot reach the back edge), yet the
  // source puts that code in the loop. A loop's extended body adds the blocks
  // dominated by its header that are reached from a side exit before the
  // code that follows the loop (what the header's or latch's own exit leads
  // to).
  void ExtendLoopBodies() {
    ext_loop_of_.assign(n_, nullptr);
    for (Loop *l : li_.getLoopsInPreorder()) {
      BitVector &bv = body_[l];
      bv.resize(n_);
      for (BasicBlock *bb : l->blocks())
        bv.set(index_.lookup(bb));
      SmallVector<std::pair<BasicBlock *, BasicBlock *>, 8> exits;
      l->getExitEdges(exits);
      SmallVector<BasicBlock *, 4> latches;
      l->getLoopLatches(latches);
      BitVector after_loop(n_);
      SmallVector<unsigned, 4> main_exits, all_exits;
      for (auto &[from, to] : exits) {
        all_exits.push_back(index_.lookup(to));
        if (from == l->getHeader() || is_contained(latches, from))
          main_exits.push_back(index_.lookup(to));
      }
      Flood(after_loop, main_exits, [](unsigned) { return true; });
      if (!main_exits.empty())
        Flood(bv, all_exits, [&](unsigned b) {
          return !after_loop.test(b) && dt_.dominates(l->getHeader(), blocks_[b]);
        });
      // Pre-order: inner loops come later and overwrite.
      for (unsigned b : bv.set_bits())
        ext_loop_of_[b] = l;
    }
  }

  bool InLoop(const Loop *l, unsigned b) const { return body_.find(l)->second.test(b); }
  bool Reachable(unsigned b) const { return rpo_number_[b] != ~0u; }

  // DFS visiting the successors that leave the current innermost loop first:
  // they finish first and so come after the loop body in reverse post-order,
  // which puts a loop's blocks before the code that follows the loop.
  void OrderBlocks() {
    rpo_number_.assign(n_, ~0u);
    std::vector<unsigned> post;
    auto ordered_succs = [&](unsigned b) {
      std::vector<unsigned> in_loop_succs, leaving;
      Loop *l = ext_loop_of_[b];
      for (BasicBlock *s : successors(blocks_[b])) {
        unsigned si = index_.lookup(s);
        (l && !InLoop(l, si) ? leaving : in_loop_succs).push_back(si);
      }
      // The stack pops from the back: in-loop successors are visited last,
      // in successor order.
      std::vector<unsigned> out(in_loop_succs.rbegin(), in_loop_succs.rend());
      out.insert(out.end(), leaving.rbegin(), leaving.rend());
      return out;
    };
    AppendPostOrder(0, n_, ordered_succs, post);
    for (unsigned i = 0; i < post.size(); ++i)
      rpo_number_[post[post.size() - 1 - i]] = i;
  }

  void CollectCallSites() {
    has_item_.resize(n_);
    for (unsigned b = 0; b < n_; ++b) {
      if (!Reachable(b))
        continue;
      unsigned pos = 0;
      for (Instruction &inst : *blocks_[b]) {
        ++pos;
        auto *call = dyn_cast<CallBase>(&inst);
        if (!call || isa<CallBrInst>(call))
          continue;
        Item item{b, pos, call, false, "", ""};
        // An OpenMP construct: the runtime call stands for its outlined body.
        if (OmpCall omp = ClassifyOmpCall(*call); omp.region != OmpRegion::None) {
          construct_calls_.push_back(call);
          if (!omp.body->isDeclaration() && !classifier_.IsLibraryDefinition(*omp.body)) {
            item.callee_key = classifier_.FunctionKey(*omp.body);
            item.region = omp.region;
            item.directive_line = omp.directive_line;
            items_.push_back(std::move(item));
            has_item_.set(b);
          }
          continue;
        } else if (omp.worksharing != Worksharing::None) {
          worksharing_inits_.push_back({call, omp});
          construct_calls_.push_back(call);
          continue;
        }
        CallRole role = classifier_.Classify(*call, &item.callee_key, &item.op);
        if (role == CallRole::Library)
          continue;
        item.is_mpi = role == CallRole::Mpi;
        item.indirect = role == CallRole::User && item.callee_key.empty();
        if (item.indirect) {
          item.candidates = classifier_.IndirectCandidates(*call);
          item.signature = SignatureOf(call->getFunctionType());
          if (std::optional<uint64_t> slot = VirtualSlot(*call))
            item.vtable_slot = int64_t(*slot);
        }
        items_.push_back(std::move(item));
        has_item_.set(b);
      }
    }
    DropSerializedRegionCalls(items_, has_item_);
  }

  void AddLoopRegions() {
    loop_header_.resize(n_);
    worksharing_.emplace(worksharing_inits_, li_, dt_);
    for (Loop *l : li_.getLoopsInPreorder()) {
      unsigned h = index_.lookup(l->getHeader());
      if (!Reachable(h) || worksharing_->IsChunkLoop(l))
        continue;
      Region r{VertexKind::Loop, h, BitVector(n_), {}, l};
      r.blocks = body_[l];
      r.worksharing = worksharing_->KindOf(l);
      loop_header_.set(h);
      regions_.push_back(std::move(r));
    }
  }

  // Where the arms of the branch at B meet: its immediate post-dominator in
  // the function, or for a branch in loop L within L's body (a branch in a
  // loop merges inside the loop, its `break` arms being early exits).
  int MergePoint(unsigned b, Loop *l) {
    if (!function_pdom_) {
      std::vector<unsigned> all_blocks;
      for (unsigned x = 0; x < n_; ++x)
        if (Reachable(x))
          all_blocks.push_back(x);
      function_pdom_ = std::make_unique<ScopePostDominators>(
          blocks_, index_, all_blocks, [](unsigned, unsigned) { return true; },
          [&](unsigned x) { return isa<ReturnInst>(blocks_[x]->getTerminator()); });
    }
    if (!l)
      return function_pdom_->ImmediatePostDominator(b);
    auto &pd = loop_pdom_[l];
    if (!pd) {
      std::vector<unsigned> members;
      for (unsigned m : body_[l].set_bits())
        members.push_back(m);
      BasicBlock *header = l->getHeader();
      pd = std::make_unique<ScopePostDominators>(
          blocks_, index_, members,
          [&, l, header](unsigned, unsigned s) { return blocks_[s] != header && InLoop(l, s); },
          [&, header](unsigned x) { return is_contained(successors(blocks_[x]), header); });
    }
    return pd->ImmediatePostDominator(b);
  }

  void AddBranchRegions() {
    for (unsigned b = 0; b < n_; ++b) {
      if (!Reachable(b))
        continue;
      Instruction *term = blocks_[b]->getTerminator();
      if ((isa<BranchInst>(term) || isa<SwitchInst>(term)) && term->getNumSuccessors() >= 2)
        AddBranchRegion(b, term);
    }
  }

  void AddBranchRegion(unsigned b, Instruction *term) {
    Loop *l = ext_loop_of_[b];
    bool loop_control = false;
    std::vector<std::pair<unsigned, unsigned>> arms; // (arm index, entry block)
    SmallPtrSet<BasicBlock *, 4> distinct;
    for (unsigned s = 0; s < term->getNumSuccessors(); ++s) {
      BasicBlock *succ = term->getSuccessor(s);
      // Loop tests and latches are the loop's own control, not a branch.
      if (l && (!InLoop(l, index_.lookup(succ)) || succ == l->getHeader()))
        loop_control = true;
      if (distinct.insert(succ).second)
        arms.push_back({s, index_.lookup(succ)});
    }
    if (loop_control || arms.size() < 2)
      return;
    int merge = MergePoint(b, l);
    unsigned loop_header_block = l ? index_.lookup(l->getHeader()) : ~0u;
    auto inside = [&](unsigned y) {
      return y != b && static_cast<int>(y) != merge && y != loop_header_block &&
             (!l || InLoop(l, y)) && Reachable(y);
    };
    Region r{VertexKind::Branch, b, BitVector(n_), std::vector<int8_t>(n_, -1), nullptr};
    // Each arm keeps its own entry block; blocks reachable from several arms
    // (switch fall-through, gotos) go to the first arm that reaches them.
    for (auto [arm, entry] : arms)
      if (inside(entry) && r.arm_of_block[entry] < 0) {
        r.arm_of_block[entry] = static_cast<int8_t>(std::min(arm, 127u));
        r.blocks.set(entry);
      }
    for (auto [arm, entry] : arms) {
      if (!inside(entry) || r.arm_of_block[entry] != static_cast<int8_t>(std::min(arm, 127u)))
        continue;
      std::vector<unsigned> work{entry};
      while (!work.empty()) {
        unsigned y = work.back();
        work.pop_back();
        for (BasicBlock *s : successors(blocks_[y])) {
          unsigned si = index_.lookup(s);
          if (!inside(si) || r.blocks.test(si))
            continue;
          r.blocks.set(si);
          r.arm_of_block[si] = r.arm_of_block[entry];
          work.push_back(si);
        }
      }
    }
    // Only branches guarding structure are vertices, and of the program.
    bool guards = false;
    for (unsigned y : r.blocks.set_bits())
      if (has_item_.test(y) || loop_header_.test(y)) {
        guards = true;
        break;
      }
    if (guards && IsConstructControl(*term, construct_calls_, [&](const BasicBlock *bb) {
          return r.blocks.test(index_.lookup(bb));
        }))
      guards = false;
    if (guards)
      regions_.push_back(std::move(r));
  }

  // A region's depth is the number of regions holding its head.
  void NestRegions() {
    for (Region &r : regions_)
      r.size = r.blocks.count();
    for (unsigned i = 1; i < regions_.size(); ++i)
      for (unsigned j = 0; j < regions_.size(); ++j)
        if (i != j && regions_[j].blocks.test(regions_[i].head))
          ++regions_[i].nesting;
  }

  // The innermost region holding BLOCK (the deepest one), EXCLUDE aside.
  unsigned Innermost(unsigned block, unsigned exclude) const {
    unsigned best = 0;
    for (unsigned j = 1; j < regions_.size(); ++j) {
      if (j == exclude || !regions_[j].blocks.test(block))
        continue;
      const Region &c = regions_[j], &b = regions_[best];
      if (best == 0 || c.nesting > b.nesting || (c.nesting == b.nesting && c.size < b.size))
        best = j;
    }
    return best;
  }

  int ArmIn(unsigned parent_region, unsigned block) const {
    const Region &p = regions_[parent_region];
    return p.kind == VertexKind::Branch ? p.arm_of_block[block] : -1;
  }

  // The vertex tree. Nodes are regions (by index) then items; children in
  // (arm, block order, position) order; local ids in pre-order, so that ids
  // read top-down like the source.
  void BuildTree() {
    num_regions_ = regions_.size();
    num_nodes_ = num_regions_ + items_.size();
    node_parent_.assign(num_nodes_, -1);
    node_key_.resize(num_nodes_);
    node_children_.resize(num_nodes_);
    for (unsigned i = 1; i < num_regions_; ++i) {
      unsigned p = Innermost(regions_[i].head, i);
      node_parent_[i] = p;
      unsigned pos =
          regions_[i].kind == VertexKind::Loop ? 0 : blocks_[regions_[i].head]->size() + 1;
      node_key_[i] = {ArmIn(p, regions_[i].head), rpo_number_[regions_[i].head], pos};
    }
    for (unsigned k = 0; k < items_.size(); ++k) {
      unsigned p = Innermost(items_[k].block, ~0u);
      node_parent_[num_regions_ + k] = p;
      node_key_[num_regions_ + k] = {ArmIn(p, items_[k].block), rpo_number_[items_[k].block],
                                     items_[k].position};
    }
    for (unsigned i = 1; i < num_nodes_; ++i)
      node_children_[node_parent_[i]].push_back(i);
    for (auto &c : node_children_)
      std::sort(c.begin(), c.end(),
                [&](unsigned a, unsigned b) { return node_key_[a] < node_key_[b]; });

    // A function too large to number is recorded as its function vertex alone.
    if (num_nodes_ > SCALANA_MAX_LOCAL_VERTICES) {
      for (auto &c : node_children_)
        c.clear();
      items_.clear();
    }

    node_vertex_.assign(num_nodes_, 0);
    std::vector<unsigned> stack{0};
    while (!stack.empty()) {
      unsigned v = stack.back();
      stack.pop_back();
      node_vertex_[v] = order_.size();
      order_.push_back(v);
      for (auto it = node_children_[v].rbegin(); it != node_children_[v].rend(); ++it)
        stack.push_back(*it);
    }
  }

  // The return (and the load of the return value feeding it) carries the
  // closing brace's line at -O1 and above but not always at -O0; lifetime
  // markers exist only when optimising. Leave them out so that ranges agree
  // at every level: ranges end at the last statement.
  static bool IsEpilogue(const Instruction &inst) {
    if (isa<ReturnInst>(inst) || isa<IntrinsicInst>(inst))
      return true;
    return isa<LoadInst>(inst) && inst.hasOneUse() && isa<ReturnInst>(*inst.user_begin());
  }

  void AddBlockLines(LineRange &range, unsigned b) const {
    for (Instruction &inst : *blocks_[b])
      if (IsEpilogue(inst))
        continue;
      else if (const DILocation *loc = OwnLocation(inst))
        if (SameFile(loc->getFile(), fn_file_))
          range.Add(loc->getLine());
  }

  void WriteVertices() {
    LineRange fn_range;
    for (unsigned b = 0; b < n_; ++b)
      if (Reachable(b))
        AddBlockLines(fn_range, b);
    if (psg_.line == 0)
      psg_.line = fn_range.first;
    psg_.end_line = std::max(psg_.line, fn_range.last);

    psg_.vertices.resize(order_.size());
    for (unsigned v : order_) {
      PsgVertex &vx = psg_.vertices[node_vertex_[v]];
      if (v != 0)
        vx.parent = node_vertex_[node_parent_[v]];
      for (unsigned c : node_children_[v])
        vx.children.push_back(node_vertex_[c]);
      if (v != 0 && std::get<0>(node_key_[v]) >= 0)
        vx.arm = std::get<0>(node_key_[v]);
      if (v == 0) {
        vx.kind = VertexKind::Function;
        vx.line = psg_.line;
        vx.end_line = psg_.end_line;
      } else if (v < num_regions_) {
        WriteRegionVertex(regions_[v], vx);
      } else {
        WriteCallVertex(items_[v - num_regions_], vx);
      }
    }
  }

  void WriteRegionVertex(const Region &r, PsgVertex &vx) const {
    vx.kind = r.kind;
    LineRange range;
    if (r.kind == VertexKind::Branch)
      if (const DILocation *loc = OwnLocation(*blocks_[r.head]->getTerminator()))
        if (SameFile(loc->getFile(), fn_file_))
          range.first = range.last = loc->getLine();
    for (unsigned b : r.blocks.set_bits())
      AddBlockLines(range, b);
    if (r.kind == VertexKind::Branch && range.first == 0)
      AddBlockLines(range, r.head);
    vx.line = range.first;
    vx.end_line = range.last;
    if (r.kind == VertexKind::Loop) {
      vx.depth = worksharing_->DepthOf(r.loop);
      vx.worksharing = r.worksharing;
    }
  }

  void WriteCallVertex(const Item &it, PsgVertex &vx) const {
    vx.kind = it.is_mpi ? VertexKind::Mpi : VertexKind::Call;
    if (const DILocation *loc = OwnLocation(*it.call)) {
      vx.line = loc->getLine();
      vx.col = loc->getColumn();
      if (!SameFile(loc->getFile(), fn_file_))
        vx.file = SourcePath(loc->getFile(), comp_dir_);
    }
    if (it.is_mpi) {
      vx.op = it.op;
      vx.mpi_class = ClassifyMpiOperation(it.op);
      return;
    }
    vx.callee = it.callee_key;
    vx.indirect = it.indirect;
    vx.candidates = it.candidates;
    vx.signature = it.signature;
    vx.vtable_slot = it.vtable_slot;
    vx.region = it.region;
    if (it.directive_line != vx.line)
      vx.directive_line = it.directive_line;
  }

  Function &f_;
  const CallClassifier &classifier_;
  FunctionPsg psg_;
  const DIFile *fn_file_ = nullptr;
  StringRef comp_dir_;
  DominatorTree dt_;
  LoopInfo li_;
  // Blocks, numbered.
  std::vector<BasicBlock *> blocks_;
  DenseMap<const BasicBlock *, unsigned> index_;
  unsigned n_ = 0;
  // Loops: extended bodies, the innermost extended loop of each block.
  DenseMap<const Loop *, BitVector> body_;
  std::vector<Loop *> ext_loop_of_;
  std::vector<unsigned> rpo_number_; // ~0u: unreachable
  // Call sites, and the OpenMP runtime calls that are constructs.
  std::vector<Item> items_;
  BitVector has_item_;
  std::vector<std::pair<const CallBase *, OmpCall>> worksharing_inits_;
  std::vector<const CallBase *> construct_calls_; // OpenMP region and worksharing calls
  // Regions: [0] the function, then loops, then branches.
  std::vector<Region> regions_;
  BitVector loop_header_;
  std::optional<WorksharingLoops> worksharing_;
  std::unique_ptr<ScopePostDominators> function_pdom_;
  std::map<Loop *, std::unique_ptr<ScopePostDominators>> loop_pdom_;
  // The vertex tree.
  unsigned num_regions_ = 0, num_nodes_ = 0;
  std::vector<int> node_parent_;
  std::vector<std::tuple<int, unsigned, unsigned>> node_key_; // arm, rpo, pos
  std::vector<std::vector<unsigned>> node_children_;
  std::vector<uint32_t> node_vertex_;
  std::vector<unsigned> order_;
};

} // namespace

FunctionPsg BuildFunctionPsg(Function &f, const CallClassifier &classifier) {
  return FunctionPsgBuilder(f, classifier).Build();
}

} // namespace scalana
