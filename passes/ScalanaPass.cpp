// The ScalAna pass plugin: builds each function's local PSG, embeds the
// module's record in section `scalana_psg`, and instruments the code to keep
// `__scalana_ctx` (include/scalana/context.h) up to date.
//
// Registered at the pipeline-start extension point, so it sees the code as
// the front end emitted it (before inlining and loop transformations) and the
// structure is the same at every -O level.
#include "ScalanaPsg.h"

#include "scalana/context.h"
#include "scalana/ids.h"

#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

using namespace llvm;

namespace scalana {
namespace {

// Every environment variable the pass reads.
struct EnvVarSpec {
  const char *name, *type, *default_value, *help;
};
constexpr EnvVarSpec kPassEnvironment[] = {
    {"SCALANA_PSG_DUMP", "path", "(unset)",
     "also append each module's PSG record, one function and one vertex per line, to this "
     "file ('-' = standard output); for tests and debugging"},
    {"SCALANA_INSTRUMENT", "bool", "1",
     "0: embed the PSG but insert no context stores (the runtime can then attribute nothing); "
     "to measure what the instrumentation costs"},
};

const char *EnvValue(const char *name) {
  for (const EnvVarSpec &v : kPassEnvironment)
    if (!std::strcmp(v.name, name))
      return std::getenv(name);
  return nullptr; // not declared: never read
}

constexpr const char *kRecordGlobal = "__scalana_psg_record";

class ScalanaPass : public PassInfoMixin<ScalanaPass> {
public:
  explicit ScalanaPass(int opt_level) : opt_level_(opt_level) {}
  static bool isRequired() { return true; } // also for optnone functions at -O0

  PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
    // The pass may be scheduled twice (plugin given twice, LTO): one record.
    if (m.getNamedGlobal(kRecordGlobal))
      return PreservedAnalyses::all();
    TargetLibraryInfoImpl tlii{Triple(m.getTargetTriple())};
    std::vector<FunctionPsg> psgs;
    std::vector<Function *> fns;
    {
      // TargetLibraryInfo is built per function; the classifier only uses
      // name and prototype recognition, which is the same for all.
      Function *any = nullptr;
      for (Function &f : m)
        if (!f.isDeclaration())
          any = &f;
      if (!any)
        return PreservedAnalyses::all();
      TargetLibraryInfo tli(tlii, any);
      CallClassifier classifier(m, tli);
      for (Function &f : m) {
        if (f.isDeclaration() || f.hasAvailableExternallyLinkage() ||
            f.hasFnAttribute(Attribute::Naked))
          continue;
        if (classifier.IsLibraryDefinition(f))
          continue;
        psgs.push_back(BuildFunctionPsg(f, classifier));
        fns.push_back(&f);
      }
    }
    if (psgs.empty())
      return PreservedAnalyses::all();
    GlobalVariable *ctx = ContextGlobal(m);
    const char *instrument = EnvValue("SCALANA_INSTRUMENT");
    if (!instrument || std::strcmp(instrument, "0") != 0) {
      SmallPtrSet<const Function *, 16> silent;
      for (size_t i = 0; i < psgs.size(); ++i)
        if (IsSilentLeaf(*fns[i], psgs[i]))
          silent.insert(fns[i]);
      for (size_t i = 0; i < psgs.size(); ++i)
        if (!silent.count(fns[i]))
          Instrument(*fns[i], psgs[i], ctx, silent);
    }
    // Source order in the record, whatever order the front end emitted.
    std::stable_sort(psgs.begin(), psgs.end(), [](const FunctionPsg &a, const FunctionPsg &b) {
      return std::tie(a.file, a.line, a.key) < std::tie(b.file, b.line, b.key);
    });
    EmbedRecord(m, ModuleRecordJson(m, psgs, opt_level_, false));
    if (const char *dump = EnvValue("SCALANA_PSG_DUMP"); dump && *dump)
      Dump(dump, ModuleRecordJson(m, psgs, opt_level_, true));
    return PreservedAnalyses::none();
  }

private:
  // linkonce_odr + comdat: every instrumented object defines it and the
  // linker keeps one; default visibility so the wrapper can export it.
  static GlobalVariable *ContextGlobal(Module &m) {
    LLVMContext &c = m.getContext();
    StructType *type = StructType::getTypeByName(c, "struct.ScalanaThreadContext");
    if (!type)
      type = StructType::create(c,
                                {Type::getInt64Ty(c), Type::getInt32Ty(c), Type::getInt32Ty(c),
                                 ArrayType::get(Type::getInt64Ty(c), SCALANA_CTX_STACK_CAP)},
                                "struct.ScalanaThreadContext");
    if (GlobalVariable *g = m.getNamedGlobal(SCALANA_CTX_SYMBOL))
      return g;
    auto *g = new GlobalVariable(m, type, false, GlobalValue::LinkOnceODRLinkage,
                                 Constant::getNullValue(type), SCALANA_CTX_SYMBOL, nullptr,
                                 GlobalValue::GeneralDynamicTLSModel);
    g->setAlignment(Align(8));
    g->setComdat(m.getOrInsertComdat(SCALANA_CTX_SYMBOL));
    return g;
  }

  static void EmbedRecord(Module &m, const std::string &json) {
    Constant *bytes = ConstantDataArray::getString(m.getContext(), json, /*AddNull=*/true);
    auto *g = new GlobalVariable(m, bytes->getType(), true, GlobalValue::PrivateLinkage, bytes,
                                 kRecordGlobal);
    g->setSection("scalana_psg");
    g->setAlignment(Align(1)); // records concatenate without padding
    appendToUsed(m, {g});      // survives -O2 and --gc-sections
  }

  static void Dump(const char *path, const std::string &json) {
    if (!std::strcmp(path, "-")) {
      outs() << json;
      outs().flush();
      return;
    }
    std::error_code ec;
    raw_fd_ostream os(path, ec, sys::fs::OF_Append | sys::fs::OF_Text);
    if (ec) {
      errs() << "scalana: cannot write SCALANA_PSG_DUMP file " << path << ": " << ec.message()
             << "\n";
      return;
    }
    os << json;
  }

  // A leaf (local PSG = the function vertex alone: no loop, user call or MPI
  // call) is always contracted into its caller's computation, so it needs no
  // vertex of its own at run time: it gets no stores at all. Samples in it
  // then read as the caller's call site (pushed by a caller in another
  // module: an "uninstrumented callee"; see CallsSilentLeaf for callers in
  // this module), which resolves to the Comp holding that call.
  // Hazard: code entered without an instrumented call site must still set
  // the vertex, else its samples have no context: main (and the Fortran
  // main program), and anything whose address is taken here (callbacks,
  // thread routines, OpenMP outlined functions, constructors).
  static bool IsSilentLeaf(const Function &f, const FunctionPsg &psg) {
    if (psg.vertices.size() != 1)
      return false;
    StringRef name = f.getName();
    if (name == "main" || name == "MAIN__" || name == "_QQmain")
      return false;
    return !f.hasAddressTaken(nullptr, /*IgnoreCallbackUses=*/false,
                              /*IgnoreAssumeLikeCalls=*/true, /*IgnoreLLVMUsed=*/true);
  }

  // A call in this module to a silent leaf whose body here is the one that
  // runs (not interposable: weak or plain linkonce could be replaced at link
  // time by another module's non-leaf variant that sets its own vertex and
  // needs the pushed call site; linkonce_odr is fine by the ODR). Such a call
  // only needs `vertex = C` around it, like an MPI call: the context then
  // ends in C, which resolves exactly as the pushed form (C's Comp).
  static bool CallsSilentLeaf(const CallBase &call,
                              const SmallPtrSetImpl<const Function *> &silent) {
    auto *callee = dyn_cast<Function>(call.getCalledOperand()->stripPointerCasts());
    return callee && silent.count(callee) && !callee->isInterposable();
  }

  // Stores of the protocol in include/scalana/context.h. The call-site depth
  // is read once at function entry: every callee restores it, and using the
  // entry value also repairs it after an exception or longjmp into this frame.
  void Instrument(Function &f, const FunctionPsg &psg, GlobalVariable *ctx,
                  const SmallPtrSetImpl<const Function *> &silent) {
    LLVMContext &c = f.getContext();
    Type *i64 = Type::getInt64Ty(c), *i32 = Type::getInt32Ty(c);
    auto id = [&](uint32_t local) {
      return ConstantInt::get(i64, scalana_vertex_id(psg.hash, local));
    };
    const InstrumentationPlan &plan = psg.plan;
    // Snapshot the CFG before splitting edges changes it.
    std::vector<std::pair<BasicBlock *, std::vector<BasicBlock *>>> cfg;
    for (BasicBlock &bb : f)
      if (plan.block_vertex.count(&bb))
        cfg.push_back({&bb, {succ_begin(&bb), succ_end(&bb)}});

    BasicBlock &entry = f.getEntryBlock();
    IRBuilder<> b(&entry, entry.getFirstInsertionPt());
    // Skip the entry allocas so they stay together at the top.
    while (isa<AllocaInst>(&*b.GetInsertPoint()))
      b.SetInsertPoint(b.GetInsertPoint()->getNextNode());
    Value *ctx_addr = b.CreateThreadLocalAddress(ctx);
    Value *vertex_ptr = b.CreateStructGEP(ctx->getValueType(), ctx_addr, 0, "scalana.vertex");
    // Every store this function gets, so the clean-up below knows its own.
    SmallPtrSet<Instruction *, 32> ours;
    auto store = [&](IRBuilder<> &at, Value *value, Value *ptr) {
      ours.insert(at.CreateStore(value, ptr, /*isVolatile=*/true));
    };
    store(b, id(0), vertex_ptr);
    // The call-site stack is touched only by pushing calls and landing pads.
    auto pushes = [&](const InstrumentationPlan::Site &s) {
      return !s.is_mpi && !CallsSilentLeaf(*s.call, silent);
    };
    bool needs_depth = std::any_of(plan.sites.begin(), plan.sites.end(), pushes);
    for (auto &[bb, succs] : cfg)
      needs_depth |= bb->isLandingPad();
    Value *depth_ptr = nullptr, *depth = nullptr, *depth_next = nullptr, *slot_ptr = nullptr;
    if (needs_depth) {
      depth_ptr = b.CreateStructGEP(ctx->getValueType(), ctx_addr, 1, "scalana.depth");
      Value *stack_ptr = b.CreateStructGEP(ctx->getValueType(), ctx_addr, 3, "scalana.sites");
      depth = b.CreateLoad(i32, depth_ptr, /*isVolatile=*/true, "scalana.d");
      depth_next = b.CreateAdd(depth, ConstantInt::get(i32, 1));
      Value *slot =
          b.CreateZExt(b.CreateAnd(depth, ConstantInt::get(i32, SCALANA_CTX_STACK_CAP - 1)), i64);
      slot_ptr = b.CreateInBoundsGEP(ArrayType::get(i64, SCALANA_CTX_STACK_CAP), stack_ptr,
                                     {ConstantInt::get(i64, 0), slot}, "scalana.slot");
    }

    // Region changes along CFG edges: entering a loop or branch arm, and
    // leaving it. Stores go where they run once per edge traversal, never in
    // a block that also runs on a path with no change (no per-iteration
    // store in a loop without structural children).
    SmallPtrSet<BasicBlock *, 16> stored_at_start;
    for (auto &[from, succs] : cfg) {
      uint32_t v_from = plan.block_vertex.lookup(from);
      for (BasicBlock *to : succs) {
        auto it = plan.block_vertex.find(to);
        if (it == plan.block_vertex.end() || it->second == v_from)
          continue;
        uint32_t v_to = it->second;
        Instruction *at = nullptr;
        if (to->isEHPad() || to->getSinglePredecessor() == from ||
            std::all_of(pred_begin(to), pred_end(to), [&](BasicBlock *p) {
              auto pi = plan.block_vertex.find(p);
              return pi == plan.block_vertex.end() || pi->second != v_to;
            })) {
          if (!stored_at_start.insert(to).second)
            continue;
          if (to->getFirstNonPHI()->isEHPad() && !isa<LandingPadInst>(to->getFirstNonPHI()))
            continue; // funclet pads (Windows EH): nothing can precede them
          at = &*to->getFirstInsertionPt();
        } else if (from->getTerminator()->getNumSuccessors() == 1) {
          at = from->getTerminator();
        } else if (isa<BranchInst>(from->getTerminator()) ||
                   isa<SwitchInst>(from->getTerminator())) {
          BasicBlock *mid = SplitEdge(from, to);
          at = mid->getTerminator();
        } else {
          continue; // indirectbr/callbr edges cannot be split; rare
        }
        IRBuilder<> s(at);
        store(s, id(v_to), vertex_ptr);
      }
    }
    // Call and MPI sites.
    for (const InstrumentationPlan::Site &site : plan.sites) {
      CallBase *call = site.call;
      uint32_t parent = plan.block_vertex.lookup(call->getParent());
      const bool push = pushes(site);
      IRBuilder<> before(call);
      if (push) {
        store(before, id(site.vertex), slot_ptr);
        store(before, depth_next, depth_ptr);
      }
      store(before, id(site.vertex), vertex_ptr);
      auto restore = [&](IRBuilder<> &after) {
        if (push)
          store(after, depth, depth_ptr);
        store(after, id(parent), vertex_ptr);
      };
      if (auto *inv = dyn_cast<InvokeInst>(call)) {
        BasicBlock *normal = inv->getNormalDest();
        if (!normal->getSinglePredecessor())
          normal = SplitEdge(inv->getParent(), normal);
        IRBuilder<> after(normal, normal->getFirstInsertionPt());
        restore(after);
      } else if (auto *ci = dyn_cast<CallInst>(call); ci && !ci->isMustTailCall()) {
        IRBuilder<> after(call->getNextNode());
        restore(after);
      }
    }

    // Landing pads: an exception skipped the callee's restores.
    for (auto &[bb, succs] : cfg) {
      (void)succs;
      if (!bb->isLandingPad())
        continue;
      IRBuilder<> s(&*bb->getFirstInsertionPt());
      store(s, depth, depth_ptr);
      store(s, id(plan.block_vertex.lookup(bb)), vertex_ptr);
    }
    RemoveRedundantVertexStores(f, ours, vertex_ptr);
  }

  // Structural boundaries often meet: a call's restore `vertex = parent`
  // right before the edge store `vertex = region` of the block's exit, or a
  // region entry store just before a call site's `vertex = C`. A vertex
  // store that the next non-instrumentation instruction overwrites, or one
  // that stores the value the vertex already holds (no call since the last
  // store on every path into it), changes nothing any sample can see: drop
  // it. Only our own stores are moved or removed, so attribution is exact.
  static void RemoveRedundantVertexStores(Function &f, SmallPtrSetImpl<Instruction *> &ours,
                                          Value *vertex_ptr) {
    auto is_vertex_store = [&](Instruction &i) {
      return ours.count(&i) && cast<StoreInst>(i).getPointerOperand() == vertex_ptr;
    };
    // Overwritten before anything else runs.
    for (BasicBlock &bb : f) {
      StoreInst *pending = nullptr;
      for (Instruction &i : make_early_inc_range(bb)) {
        if (is_vertex_store(i)) {
          if (pending) {
            ours.erase(pending);
            pending->eraseFromParent();
          }
          pending = cast<StoreInst>(&i);
        } else if (!ours.count(&i) && !isa<DbgInfoIntrinsic>(i)) {
          pending = nullptr;
        }
      }
    }
    // Value already held. Only a store of ours or a call (the callee sets
    // its own vertices and restores none) changes `vertex`; a block with one
    // predecessor starts with what that predecessor ended with, when known.
    DenseMap<const BasicBlock *, Value *> held_at_end;
    ReversePostOrderTraversal<Function *> rpo(&f);
    for (BasicBlock *bb : rpo) {
      Value *held = nullptr;
      if (const BasicBlock *pred = bb->getSinglePredecessor())
        held = held_at_end.lookup(pred); // null when not yet visited (a back edge)
      if (bb->isEHPad())
        held = nullptr;
      for (Instruction &i : make_early_inc_range(*bb)) {
        if (is_vertex_store(i)) {
          Value *value = cast<StoreInst>(i).getValueOperand();
          if (value == held) {
            ours.erase(&i);
            i.eraseFromParent();
          }
          held = value;
        } else if (auto *call = dyn_cast<CallBase>(&i); call && !isa<DbgInfoIntrinsic>(call)) {
          held = nullptr;
        }
      }
      held_at_end[bb] = held;
    }
  }

  int opt_level_;
};

// After optimisation, code that separated two boundary stores is often gone
// (folded, hoisted, sunk, a loop unrolled so that one iteration's exit store
// meets the next one's entry store), leaving `vertex` stores that nothing
// can observe. This pass, at the end of the optimisation pipeline, drops
//   - a vertex store followed (before any other code) by another one, also
//     across an unconditional branch into a block starting with one;
//   - a vertex store of the value the vertex already holds (no call since the
//     last store on every path: only a callee or our stores change it).
// Code between stores is never reattributed, so attribution stays exact; a
// sample that lands on the branch instruction itself may see either value.
class ScalanaCleanupPass : public PassInfoMixin<ScalanaCleanupPass> {
public:
  static bool isRequired() { return true; }

  PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
    GlobalVariable *ctx = m.getNamedGlobal(SCALANA_CTX_SYMBOL);
    if (!ctx)
      return PreservedAnalyses::all();
    bool changed = false;
    for (Function &f : m)
      if (!f.isDeclaration())
        changed |= CleanUp(f, ctx);
    if (!changed)
      return PreservedAnalyses::all();
    PreservedAnalyses kept;
    kept.preserveSet<CFGAnalyses>(); // only stores are removed
    return kept;
  }

private:
  static bool IsContextBase(const Value *p, const GlobalVariable *ctx) {
    p = p->stripPointerCasts();
    if (p == ctx)
      return true;
    auto *call = dyn_cast<IntrinsicInst>(p);
    return call && call->getIntrinsicID() == Intrinsic::threadlocal_address &&
           call->getArgOperand(0)->stripPointerCasts() == ctx;
  }
  // `vertex` is the context's first field: its stores go to the base itself.
  static bool IsVertexStore(const Instruction &i, const GlobalVariable *ctx) {
    auto *st = dyn_cast<StoreInst>(&i);
    return st && st->isVolatile() && st->getValueOperand()->getType()->isIntegerTy(64) &&
           IsContextBase(st->getPointerOperand(), ctx);
  }
  // The low half only, written by NarrowStores.
  static bool IsNarrowVertexStore(const Instruction &i, const GlobalVariable *ctx) {
    auto *st = dyn_cast<StoreInst>(&i);
    return st && st->isVolatile() && st->getValueOperand()->getType()->isIntegerTy(32) &&
           IsContextBase(st->getPointerOperand(), ctx);
  }
  // Instructions that emit no code a sample could land in, or are our own
  // accesses to the context (depth, call-site slots).
  static bool IsTransparent(const Instruction &i, const GlobalVariable *ctx) {
    if (isa<DbgInfoIntrinsic>(i) || i.isLifetimeStartOrEnd())
      return true;
    if (auto *ii = dyn_cast<IntrinsicInst>(&i))
      return ii->getIntrinsicID() == Intrinsic::threadlocal_address;
    const Value *ptr = nullptr;
    if (auto *st = dyn_cast<StoreInst>(&i); st && st->isVolatile()) {
      // A narrowed vertex store (below) relies on the store before it:
      // never look through one.
      if (IsNarrowVertexStore(i, ctx))
        return false;
      ptr = st->getPointerOperand();
    } else if (auto *ld = dyn_cast<LoadInst>(&i); ld && ld->isVolatile())
      ptr = ld->getPointerOperand();
    else if (auto *gep = dyn_cast<GetElementPtrInst>(&i))
      ptr = gep; // address arithmetic on the context: folded into the access
    if (!ptr)
      return false;
    while (auto *gep = dyn_cast<GEPOperator>(ptr->stripPointerCasts()))
      ptr = gep->getPointerOperand();
    return IsContextBase(ptr, ctx);
  }

  // The first vertex store of BB when nothing else runs before it.
  static bool StartsWithVertexStore(BasicBlock &bb, const GlobalVariable *ctx) {
    for (Instruction &i : bb) {
      if (isa<PHINode>(i) || (IsTransparent(i, ctx) && !IsVertexStore(i, ctx)))
        continue;
      return IsVertexStore(i, ctx);
    }
    return false;
  }

  static bool CleanUp(Function &f, const GlobalVariable *ctx) {
    SmallVector<Instruction *, 16> dead;
    for (BasicBlock &bb : f) {
      Instruction *pending = nullptr;
      for (Instruction &i : bb) {
        if (IsVertexStore(i, ctx)) {
          if (pending)
            dead.push_back(pending);
          pending = &i;
        } else if (!IsTransparent(i, ctx)) {
          auto *br = dyn_cast<BranchInst>(&i);
          if (pending && br && br->isUnconditional() && br->getSuccessor(0) != &bb &&
              !br->getSuccessor(0)->isEHPad() && StartsWithVertexStore(*br->getSuccessor(0), ctx))
            dead.push_back(pending);
          pending = nullptr;
        }
      }
    }
    for (Instruction *i : dead)
      i->eraseFromParent();
    bool changed = !dead.empty();
    dead.clear();

    DenseMap<const BasicBlock *, Value *> held_at_end;
    ReversePostOrderTraversal<Function *> rpo(&f);
    for (BasicBlock *bb : rpo) {
      Value *held = nullptr;
      if (const BasicBlock *pred = bb->getSinglePredecessor(); pred && !bb->isEHPad())
        held = held_at_end.lookup(pred); // null when not visited yet (a back edge)
      for (Instruction &i : *bb) {
        if (IsVertexStore(i, ctx)) {
          Value *value = cast<StoreInst>(i).getValueOperand();
          if (value == held)
            dead.push_back(&i);
          held = value;
        } else if (IsNarrowVertexStore(i, ctx) || (isa<CallBase>(i) && !isa<IntrinsicInst>(i))) {
          held = nullptr; // a callee sets its own vertices
        }
      }
      held_at_end[bb] = held;
    }
    for (Instruction *i : dead)
      i->eraseFromParent();
    changed |= !dead.empty();
    return NarrowStores(f, ctx) || changed;
  }

  // A vertex id is <function hash, local index>; within one function's code
  // (inlined callees included) most stores find the high 32 bits already
  // holding the value they would write. Those become 32-bit stores of the
  // low half: one instruction with an immediate instead of materialising a
  // 64-bit constant, and the same value in memory, so readers see no
  // difference. Known by a forward data flow over the CFG: the high half is
  // known after a 64-bit store, unknown at entry, at landing pads and after
  // any call that is not an intrinsic (a callee, or a library routine calling
  // back into instrumented code, leaves its own vertex; setjmp may return
  // from a longjmp).
  static bool NarrowStores(Function &f, const GlobalVariable *ctx) {
    constexpr int64_t kTop = -2, kUnknown = -1; // else the known high half
    auto meet = [&](int64_t a, int64_t b) {
      return a == kTop ? b : b == kTop ? a : a == b ? a : kUnknown;
    };
    auto transfer = [&](Instruction &i, int64_t state) {
      if (IsVertexStore(i, ctx)) {
        if (auto *v = dyn_cast<ConstantInt>(cast<StoreInst>(i).getValueOperand()))
          return int64_t(v->getZExtValue() >> 32);
        return kUnknown;
      }
      if (isa<CallBase>(i) && !isa<IntrinsicInst>(i))
        return kUnknown;
      return state; // a narrowed store keeps the high half
    };
    DenseMap<const BasicBlock *, int64_t> at_end;
    auto state_in = [&](BasicBlock *bb) {
      if (bb->isEntryBlock() || bb->isEHPad())
        return kUnknown;
      int64_t state = kTop;
      for (BasicBlock *pred : predecessors(bb)) {
        auto it = at_end.find(pred);
        state = meet(state, it == at_end.end() ? kTop : it->second);
      }
      return state;
    };
    ReversePostOrderTraversal<Function *> rpo(&f);
    // States only move down (unvisited, known, unknown): this terminates.
    for (bool again = true; again;) {
      again = false;
      for (BasicBlock *bb : rpo) {
        int64_t state = state_in(bb);
        for (Instruction &i : *bb)
          state = transfer(i, state);
        auto it = at_end.find(bb);
        if (it == at_end.end() || it->second != state) {
          at_end[bb] = state;
          again = true;
        }
      }
    }
    bool changed = false;
    Type *i32 = Type::getInt32Ty(f.getContext());
    for (BasicBlock *bb : rpo) {
      int64_t state = state_in(bb);
      for (Instruction &i : make_early_inc_range(*bb)) {
        int64_t next = transfer(i, state);
        auto *v = IsVertexStore(i, ctx)
                      ? dyn_cast<ConstantInt>(cast<StoreInst>(i).getValueOperand())
                      : nullptr;
        if (v && state >= 0 && uint64_t(state) == v->getZExtValue() >> 32) {
          auto *st = cast<StoreInst>(&i);
          auto *low = new StoreInst(ConstantInt::get(i32, v->getZExtValue() & 0xffffffffu),
                                    st->getPointerOperand(), /*isVolatile=*/true, Align(8),
                                    st->getIterator());
          low->setDebugLoc(st->getDebugLoc());
          st->eraseFromParent();
          changed = true;
        }
        state = next;
      }
    }
    return changed;
  }
};

} // namespace
} // namespace scalana

extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "ScalanaPass", "0.1", [](PassBuilder &pb) {
            pb.registerPipelineStartEPCallback([](ModulePassManager &mpm, OptimizationLevel level) {
              mpm.addPass(scalana::ScalanaPass(static_cast<int>(level.getSpeedupLevel())));
            });
            // -O0 keeps the stores as placed (the pass already merged those
            // adjacent in the front end's code).
            pb.registerOptimizerLastEPCallback([](ModulePassManager &mpm, OptimizationLevel level) {
              if (level != OptimizationLevel::O0)
                mpm.addPass(scalana::ScalanaCleanupPass());
            });
            // `opt -load-pass-plugin ScalanaPass.so -passes=scalana-psg`
            pb.registerPipelineParsingCallback(
                [](StringRef name, ModulePassManager &mpm, ArrayRef<PassBuilder::PipelineElement>) {
                  if (name == "scalana-psg")
                    mpm.addPass(scalana::ScalanaPass(0));
                  else if (name == "scalana-cleanup")
                    mpm.addPass(scalana::ScalanaCleanupPass());
                  else
                    return false;
                  return true;
                });
          }};
}
