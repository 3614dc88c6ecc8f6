// OpenMP constructs in the PSG: regions and tasks from the libomp calls that
// start them, worksharing loops from the calls that split their iterations.
// The entry points are those of LLVM's libomp (kmp.h), which clang-19 and
// flang-new-19 (through OpenMPIRBuilder) both call.
#include "ScalanaOmp.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InstIterator.h"

#include <vector>

using namespace llvm;

namespace scalana {
namespace {

// Calls that run an outlined function on other threads (or later), and the
// argument that names it.
struct RegionEntry {
  const char *name;
  OmpRegion region;
  unsigned body_arg;
};
constexpr RegionEntry kRegionEntries[] = {
    {"__kmpc_fork_call", OmpRegion::Parallel, 2},    // (loc, argc, microtask, ...)
    {"__kmpc_fork_call_if", OmpRegion::Parallel, 2}, // (loc, argc, microtask, cond, args)
    {"__kmpc_fork_teams", OmpRegion::Teams, 2},      // (loc, argc, microtask, ...)
    // (loc, gtid, flags, sizeof_task, sizeof_shareds, task_entry[, device])
    {"__kmpc_omp_task_alloc", OmpRegion::Task, 5},
    {"__kmpc_omp_target_task_alloc", OmpRegion::Task, 5},
};

// Calls that hand a thread its share of a loop's iterations, by name prefix
// (the suffix is the induction variable's type: _4, _4u, _8, _8u).
struct WorksharingEntry {
  const char *prefix;
  Worksharing kind;
};
constexpr WorksharingEntry kWorksharingEntries[] = {
    {"__kmpc_for_static_init_", Worksharing::Static},
    // `distribute parallel for`: the team's part, split among its threads.
    {"__kmpc_dist_for_static_init_", Worksharing::Static},
    {"__kmpc_dispatch_init_", Worksharing::Dynamic},
    {"__kmpc_dist_dispatch_init_", Worksharing::Dynamic},
    {"__kmpc_distribute_static_init_", Worksharing::Distribute},
};

// The line of the source location a runtime call is given: an `ident_t`
// {i32, i32, i32, i32, ptr psource} whose psource reads
// ";file;function;line;column;;" (both front ends, with line tables).
uint32_t DirectiveLine(const Value *loc) {
  const auto *ident = dyn_cast<GlobalVariable>(loc->stripPointerCasts());
  if (!ident || !ident->hasInitializer())
    return 0;
  const auto *fields = dyn_cast<ConstantStruct>(ident->getInitializer());
  if (!fields || fields->getNumOperands() < 5)
    return 0;
  const auto *psource = dyn_cast<GlobalVariable>(fields->getOperand(4)->stripPointerCasts());
  if (!psource || !psource->hasInitializer())
    return 0;
  const auto *text = dyn_cast<ConstantDataSequential>(psource->getInitializer());
  if (!text || !text->isCString())
    return 0;
  // From the end: a file name may hold a ';'.
  StringRef s = text->getAsCString();
  if (!s.consume_back(";;"))
    return 0;
  StringRef line = s.rsplit(';').first.rsplit(';').second;
  uint32_t n = 0;
  if (line.getAsInteger(10, n))
    return 0;
  return n;
}

} // namespace

OmpCall ClassifyOmpCall(const CallBase &call) {
  OmpCall c;
  const auto *callee = dyn_cast<Function>(call.getCalledOperand()->stripPointerCasts());
  if (!callee || !callee->getName().starts_with("__kmpc_"))
    return c;
  StringRef name = callee->getName();
  for (const RegionEntry &e : kRegionEntries) {
    if (name != e.name || call.arg_size() <= e.body_arg)
      continue;
    c.body = dyn_cast<Function>(call.getArgOperand(e.body_arg)->stripPointerCasts());
    if (c.body) {
      c.region = e.region;
      c.directive_line = DirectiveLine(call.getArgOperand(0));
    }
    return c;
  }
  for (const WorksharingEntry &e : kWorksharingEntries) {
    if (!name.starts_with(e.prefix))
      continue;
    c.worksharing = e.kind;
    // (loc, gtid, schedule, ...): libomp's kmp_sched_t, whose high bits are
    // modifiers (monotonic, nonmonotonic). A static schedule with a chunk
    // size is 33 (91 for distribute); every dispatched schedule is chunked.
    c.chunked = e.kind == Worksharing::Dynamic;
    if (const auto *sched =
            call.arg_size() > 2 ? dyn_cast<ConstantInt>(call.getArgOperand(2)) : nullptr) {
      uint64_t kind = sched->getZExtValue() & ((1u << 29) - 1);
      c.chunked = c.chunked || kind == 33 || kind == 91;
    }
    break;
  }
  return c;
}

OmpOutlined::OmpOutlined(const Module &m) {
  std::vector<std::pair<const Function *, OmpRegion>> entries;
  for (const RegionEntry &e : kRegionEntries) {
    const Function *rt = m.getFunction(e.name);
    if (!rt)
      continue;
    for (const User *u : rt->users()) {
      const auto *call = dyn_cast<CallBase>(u);
      if (!call || call->getCalledOperand()->stripPointerCasts() != rt)
        continue;
      OmpCall c = ClassifyOmpCall(*call);
      if (c.body && !c.body->isDeclaration() && kind_.try_emplace(c.body, c.region).second)
        entries.push_back({c.body, c.region});
    }
  }
  // clang's entries are thin: `main.omp_outlined` only calls
  // `main.omp_outlined_debug__` (the body, with the variables' real types
  // for the debugger), `.omp_task_entry.` calls the task's `.omp_outlined.`
  // (whose subprogram has no line). Those are part of the construct, not
  // helpers without source. A user's own `static` function called from the
  // region has a subprogram that is not artificial.
  for (auto [entry, region] : entries)
    for (const Instruction &inst : instructions(*entry)) {
      const auto *call = dyn_cast<CallBase>(&inst);
      if (!call)
        continue;
      const auto *callee = dyn_cast<Function>(call->getCalledOperand()->stripPointerCasts());
      if (!callee || callee->isDeclaration() || !callee->hasLocalLinkage())
        continue;
      const DISubprogram *sp = callee->getSubprogram();
      if (!sp || sp->isArtificial())
        kind_.try_emplace(callee, region);
    }
}

OmpRegion OmpOutlined::KindOf(const Function &f) const {
  auto it = kind_.find(&f);
  return it == kind_.end() ? OmpRegion::None : it->second;
}

bool IsConstructControl(const Instruction &branch, ArrayRef<const CallBase *> construct_calls,
                        function_ref<bool(const BasicBlock *)> guarded) {
  const DILocation *at = branch.getDebugLoc().get();
  if (!at || at->getLine() == 0)
    return false;
  for (const CallBase *call : construct_calls) {
    const DILocation *loc = call->getDebugLoc().get();
    if (loc && loc->getLine() == at->getLine() && loc->getColumn() == at->getColumn() &&
        loc->getFile() == at->getFile() && guarded(call->getParent()))
      return true;
  }
  return false;
}

WorksharingLoops::WorksharingLoops(ArrayRef<std::pair<const CallBase *, OmpCall>> inits,
                                   const LoopInfo &li, const DominatorTree &dt) {
  for (auto [init, omp] : inits) {
    const BasicBlock *bb = init->getParent();
    const Loop *around = li.getLoopFor(bb);
    const std::vector<Loop *> &siblings = around ? around->getSubLoops() : li.getTopLevelLoops();
    const Loop *first = nullptr;
    for (const Loop *l : siblings) {
      if (l->contains(bb) || !dt.dominates(bb, l->getHeader()))
        continue;
      if (!first || dt.dominates(l->getHeader(), first->getHeader()))
        first = l;
    }
    if (!first)
      continue;
    kind_[first] = omp.worksharing;
    if (omp.chunked && first->getSubLoops().size() == 1)
      chunk_loops_.insert(first->getSubLoops().front());
  }
}

Worksharing WorksharingLoops::KindOf(const Loop *l) const {
  auto it = kind_.find(l);
  return it == kind_.end() ? Worksharing::None : it->second;
}

unsigned WorksharingLoops::DepthOf(const Loop *l) const {
  unsigned depth = l->getLoopDepth();
  for (const Loop *p = l->getParentLoop(); p; p = p->getParentLoop())
    depth -= chunk_loops_.count(p);
  return depth;
}

} // namespace scalana
