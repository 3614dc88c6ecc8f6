// OpenMP as clang-19 and flang-new-19 lower it, seen by the PSG: both front
// ends outline a construct's body into a function of its own and hand that
// function to libomp (`__kmpc_fork_call(loc, n, body, ...)`), which runs it
// on the team's threads. The call names the body, so the PSG can make the
// body a child of the construct, where the source has it (docs/psg.md,
// "OpenMP regions").
#pragma once

#include "scalana/psg_format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"

#include <cstdint>
#include <utility>

namespace llvm {
class DominatorTree;
class Loop;
class LoopInfo;
} // namespace llvm

namespace scalana {

// What a call is to OpenMP: the start of a region (its outlined body), the
// start of a worksharing loop, or nothing.
struct OmpCall {
  OmpRegion region = OmpRegion::None;
  const llvm::Function *body = nullptr; // region: the function libomp runs
  Worksharing worksharing = Worksharing::None;
  // Worksharing: chunks are handed out one by one (a dynamic schedule, or a
  // static one with a chunk size), so the loop holds a loop over one chunk.
  bool chunked = false;
  // The directive's line, from the source location libomp is given
  // (`ident_t`, ";file;function;line;column;;"); 0 when it names none.
  // flang puts the fork call itself at another line.
  uint32_t directive_line = 0;
};

OmpCall ClassifyOmpCall(const llvm::CallBase &call);

// The module's outlined functions and the construct each is the body of:
// the functions handed to libomp (`main.omp_outlined`, `.omp_task_entry.`,
// flang's `_QQmain..omp_par`), and the compiler-made functions such an entry
// calls to run the body (clang's `main.omp_outlined_debug__`, a task's
// `.omp_outlined.`: internal, with an artificial subprogram).
class OmpOutlined {
public:
  explicit OmpOutlined(const llvm::Module &m);
  OmpRegion KindOf(const llvm::Function &f) const;

private:
  llvm::DenseMap<const llvm::Function *, OmpRegion> kind_;
};

// Whether BRANCH is an OpenMP construct's own test rather than the
// program's: clang tests an `omp for`'s trip count before its worksharing
// call, and a parallel region's `if` clause before the fork, both at the
// directive's location, the one the runtime call they guard has.
// CONSTRUCT_CALLS: the function's region and worksharing calls; GUARDED(bb):
// the block is in one of the branch's arms.
bool IsConstructControl(const llvm::Instruction &branch,
                        llvm::ArrayRef<const llvm::CallBase *> construct_calls,
                        llvm::function_ref<bool(const llvm::BasicBlock *)> guarded);

// A function's worksharing loops, from its worksharing calls
// (`__kmpc_for_static_init_4`, ...): each starts the first loop after it at
// its own loop depth. Where chunks are handed out, that is the loop asking
// for chunks, and its only inner loop runs one chunk: the source has one
// loop, so the chunk's loop is no vertex (its code is the worksharing
// loop's).
class WorksharingLoops {
public:
  WorksharingLoops(llvm::ArrayRef<std::pair<const llvm::CallBase *, OmpCall>> inits,
                   const llvm::LoopInfo &li, const llvm::DominatorTree &dt);
  Worksharing KindOf(const llvm::Loop *l) const;
  bool IsChunkLoop(const llvm::Loop *l) const { return chunk_loops_.count(l) != 0; }
  // The loop's depth in the PSG: chunk loops around it do not count.
  unsigned DepthOf(const llvm::Loop *l) const;

private:
  llvm::DenseMap<const llvm::Loop *, Worksharing> kind_;
  llvm::SmallPtrSet<const llvm::Loop *, 4> chunk_loops_;
};

} // namespace scalana
