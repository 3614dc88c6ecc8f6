// Local PSG construction: loops from LoopInfo, branches from the CFG and a
// post-dominator tree over the blocks that can return, call and MPI vertices
// from call sites, all ordered by a loop-aware reverse post-order.
#include "ScalanaPsg.h"

#include "MpiNames.h"
#include "scalana/ids.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

using namespace llvm;

namespace scalana {
namespace {

// Library functions that TargetLibraryInfo does not know but that are plainly
// not user code (Fig. 3's `rand()` must not become a call vertex).
const StringSet<> &ExtraLibraryNames() {
  static const StringSet<> names = {"rand",
                                    "srand",
                                    "rand_r",
                                    "random",
                                    "srandom",
                                    "drand48",
                                    "srand48",
                                    "lrand48",
                                    "erand48",
                                    "nrand48",
                                    "mrand48",
                                    "jrand48",
                                    "clock",
                                    "time",
                                    "gettimeofday",
                                    "clock_gettime",
                                    "clock_getres",
                                    "usleep",
                                    "sleep",
                                    "nanosleep",
                                    "exit",
                                    "_exit",
                                    "abort",
                                    "atexit",
                                    "getpid",
                                    "getppid",
                                    "gethostname",
                                    "sysconf",
                                    "mmap",
                                    "munmap",
                                    "open",
                                    "close",
                                    "read",
                                    "write",
                                    "lseek",
                                    "posix_memalign",
                                    "aligned_alloc",
                                    "__errno_location",
                                    "sched_yield",
                                    "sched_getcpu",
                                    "getrusage",
                                    "times",
                                    "signal",
                                    "sigaction",
                                    "raise",
                                    "kill",
                                    "setjmp",
                                    "_setjmp",
                                    "longjmp",
                                    "_longjmp",
                                    "sigsetjmp",
                                    "siglongjmp",
                                    "__sigsetjmp",
                                    "strerror",
                                    "perror",
                                    "isatty",
                                    "fileno",
                                    "dlopen",
                                    "dlsym",
                                    "dlclose",
                                    "getopt",
                                    "getopt_long",
                                    "memalign",
                                    "pvalloc",
                                    "valloc",
                                    "__isoc99_sscanf",
                                    "__isoc99_scanf",
                                    "__isoc99_fscanf",
                                    "localtime",
                                    "gmtime",
                                    "strftime",
                                    "difftime",
                                    "mktime",
                                    "asctime",
                                    "ctime",
                                    "getcwd",
                                    "__ctype_b_loc",
                                    "__ctype_tolower_loc",
                                    "__ctype_toupper_loc",
                                    "sincos",
                                    "sincosf",
                                    "__sincos"};
  return names;
}

// Name prefixes of runtime-support code emitted or called by compilers.
constexpr const char *kLibraryPrefixes[] = {
    "llvm.",      "__cxa_",    "_Unwind_",       "__kmpc_",     "omp_",           "__omp_",
    "_gfortran_", "_Fortran",  "__assert",       "__stack_chk", "__gxx_",         "__clang_",
    "__ubsan_",   "__asan_",   "__tsan_",        "__msan_",     "__sanitizer",    "__builtin_",
    "pthread_",   "__scalana", "__cudaRegister", "__llvm_",     "__dynamic_cast", "__stdio_",
    "__libc_",    "_ZdlPv",    "_ZdaPv",         "_Znwm",       "_Znam",          "__mlir_"};

// Namespaces whose functions are library code even when their (inline,
// template) bodies are in the module. `MPI::` holds the deprecated C++
// bindings, which wrap the C functions.
bool IsLibraryContext(StringRef context) {
  for (StringRef ns : {"std", "__gnu_cxx", "__cxxabiv1", "MPI", "ompi_", "__pstl"})
    if (context == ns || context.starts_with((ns + "::").str()))
      return true;
  return false;
}

struct DemangledName {
  bool ok = false;
  std::string context, base, full;
};

DemangledName Demangle(StringRef mangled) {
  DemangledName d;
  if (!mangled.starts_with("_Z"))
    return d;
  ItaniumPartialDemangler demangler;
  std::string m = mangled.str();
  if (demangler.partialDemangle(m.c_str()))
    return d; // true means failure
  auto take = [](char *buf) {
    std::string s = buf ? buf : "";
    std::free(buf);
    return s;
  };
  size_t n = 0;
  d.context = take(demangler.getFunctionDeclContextName(nullptr, &n));
  n = 0;
  d.base = take(demangler.getFunctionBaseName(nullptr, &n));
  n = 0;
  d.full = take(demangler.getFunctionName(nullptr, &n));
  d.ok = !d.full.empty();
  return d;
}

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

// Iterative depth-first post-order of the nodes reachable from `start`
// (recursion would overflow the stack on generated code with huge CFGs).
// `succs(v)` lists v's successors; the last one listed is visited first.
template <typename Succs>
void AppendPostOrder(unsigned start, unsigned num_nodes, Succs succs, std::vector<unsigned> &out) {
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
  ScopePostDominators(const std::vector<BasicBlock *> &blocks,
                      const DenseMap<const BasicBlock *, unsigned> &index,
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
      for (BasicBlock *p : predecessors(blocks[b])) {
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
        for (BasicBlock *p : predecessors(blocks[v])) {
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
        for (BasicBlock *s : successors(blocks[v])) {
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

// Code the compiler made up, with no source of its own: flang's MLIR
// lowering defines helpers such as `__mlir_math_ipowi_i32` (integer `**`) in
// every module that needs them, with no subprogram in the debug info. Their
// loops and branches are not the program's structure: the helpers get no
// PSG and calls to them are part of the caller's computation. Every
// procedure flang compiles from source has a subprogram (the wrappers always
// ask for line tables), so in a Fortran module with debug info a function
// without one is generated. In any language, a subprogram marked artificial
// at line 0 has no source either.
bool IsCompilerGenerated(const Function &f, bool fortran_with_debug_info) {
  if (f.getName().starts_with("__mlir_"))
    return true;
  const DISubprogram *sp = f.getSubprogram();
  if (!sp)
    return fortran_with_debug_info && !f.isDeclaration();
  return sp->isArtificial() && sp->getLine() == 0;
}

std::string LanguageOf(const Module &m);

bool IsFortranModuleWithDebugInfo(const Module &m) { return LanguageOf(m) == "fortran"; }

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

} // namespace

CallClassifier::CallClassifier(const Module &m, const TargetLibraryInfo &tli)
    : module_(m), tli_(tli), omp_(m), fortran_with_debug_info_(IsFortranModuleWithDebugInfo(m)) {}

std::string ModuleSourceName(const Module &m) {
  // flang names every module "FIRModule": the compile unit knows the file.
  StringRef name = m.getSourceFileName();
  if (name.empty() || name == "FIRModule")
    for (const DICompileUnit *cu : m.debug_compile_units())
      if (!cu->getFilename().empty())
        return cu->getFilename().str();
  return name.str();
}

std::string CallClassifier::FunctionKey(const Function &f) const {
  if (f.hasLocalLinkage())
    return ModuleSourceName(module_) + ":" + f.getName().str();
  return f.getName().str();
}

bool CallClassifier::IsLibraryDefinition(const Function &f) const {
  StringRef name = f.getName();
  if (MpiOperationOfSymbol(name))
    return true; // a PMPI wrapper library, not the program
  // A task's body has an artificial subprogram at line 0, yet it is the
  // code of the program's task.
  if (omp_.KindOf(f) != OmpRegion::None)
    return false;
  if (IsCompilerGenerated(f, fortran_with_debug_info_))
    return true;
  for (const char *p : kLibraryPrefixes)
    if (name.starts_with(p))
      return true;
  DemangledName d = Demangle(name);
  return d.ok && IsLibraryContext(d.context);
}

CallRole CallClassifier::Classify(const CallBase &call, std::string *callee_key,
                                  std::string *mpi_op) const {
  if (call.isInlineAsm())
    return CallRole::Library;
  const Function *f = dyn_cast<Function>(call.getCalledOperand()->stripPointerCasts());
  if (!f) {
    callee_key->clear();
    return CallRole::User; // indirect
  }
  return ClassifyCallee(*f, callee_key, mpi_op);
}

CallRole CallClassifier::ClassifyCallee(const Function &fn, std::string *callee_key,
                                        std::string *mpi_op) const {
  const Function *f = &fn;
  if (f->isIntrinsic())
    return CallRole::Library;
  StringRef name = f->getName();
  if (auto op = MpiOperationOfSymbol(name)) {
    *mpi_op = *op;
    return CallRole::Mpi;
  }
  // The C++ bindings (MPI::Comm::Send ...) wrap the C functions: name the
  // vertex after the wrapped function when it is one we know.
  DemangledName d = Demangle(name);
  if (d.ok && (d.context == "MPI" || StringRef(d.context).starts_with("MPI::"))) {
    std::string op = "MPI_" + d.base;
    if (ClassifyMpiOperation(op) != MpiClass::Other) {
      *mpi_op = op;
      return CallRole::Mpi;
    }
    return CallRole::Library;
  }
  if (!f->isDeclaration() && !f->hasAvailableExternallyLinkage()) {
    if (IsLibraryDefinition(*f))
      return CallRole::Library;
    *callee_key = FunctionKey(*f);
    return CallRole::User;
  }
  // External declarations: library when we recognise them, user code (maybe
  // in another translation unit) otherwise.
  for (const char *p : kLibraryPrefixes)
    if (name.starts_with(p))
      return CallRole::Library;
  LibFunc lf;
  if (tli_.getLibFunc(*f, lf) || ExtraLibraryNames().contains(name))
    return CallRole::Library;
  if (d.ok && IsLibraryContext(d.context))
    return CallRole::Library;
  *callee_key = FunctionKey(*f);
  return CallRole::User;
}

bool CallClassifier::IsUserFunction(const Function &f) const {
  std::string key, op;
  return ClassifyCallee(f, &key, &op) == CallRole::User;
}

namespace {

bool IsVtable(const GlobalVariable &g) {
  // _ZTV: a class's vtable group; _ZTC: construction vtables (virtual bases).
  return g.getName().starts_with("_ZTV") || g.getName().starts_with("_ZTC");
}

// Is the address of `v` (a function, or a constant holding it) used other
// than to call it, to fill a vtable, to be listed in llvm.used or
// llvm.global_ctors, or to be handed to library code (atexit, qsort,
// pthread_create: the library calls it, not the program's indirect calls)?
bool AddressUsed(const Value &v, const CallClassifier &classifier, unsigned depth) {
  if (depth > 8)
    return true;
  for (const Use &u : v.uses()) {
    const User *user = u.getUser();
    if (const auto *call = dyn_cast<CallBase>(user)) {
      if (call->isCallee(&u))
        continue;
      std::string key, op;
      if (classifier.Classify(*call, &key, &op) != CallRole::User)
        continue;
      return true;
    }
    if (const auto *g = dyn_cast<GlobalVariable>(user)) {
      if (IsVtable(*g) || g->getName().starts_with("llvm."))
        continue;
      return true;
    }
    if (isa<Constant>(user)) {
      if (AddressUsed(*user, classifier, depth + 1))
        return true;
      continue;
    }
    return true; // stored, compared, passed through a phi or select...
  }
  return false;
}

// obj->f(args) as clang emits it: the vtable pointer loaded from the object,
// the slot loaded from the vtable (through a GEP with a constant index, but
// for slot 0) and the object passed as an argument. A call through a table
// of function pointers does not pass the table.
std::optional<uint64_t> VirtualSlot(const CallBase &call) {
  const auto *slot_load = dyn_cast<LoadInst>(call.getCalledOperand());
  if (!slot_load)
    return std::nullopt;
  const Value *p = slot_load->getPointerOperand();
  uint64_t slot = 0;
  if (const auto *gep = dyn_cast<GetElementPtrInst>(p)) {
    const auto *index =
        gep->getNumIndices() == 1 ? dyn_cast<ConstantInt>(gep->getOperand(1)) : nullptr;
    if (!index || !gep->getSourceElementType()->isPointerTy())
      return std::nullopt;
    slot = index->getZExtValue();
    p = gep->getPointerOperand();
  }
  const auto *vtable_load = dyn_cast<LoadInst>(p);
  if (!vtable_load)
    return std::nullopt;
  for (const Use &arg : call.args())
    if (arg.get() == vtable_load->getPointerOperand())
      return slot;
  return std::nullopt;
}

} // namespace

void CallClassifier::FindAddressTakenFunctions() const {
  targets_found_ = true;
  for (const Function &f : module_)
    if (!f.isIntrinsic() && IsUserFunction(f) && AddressUsed(f, *this, 0))
      address_taken_.push_back(&f);
  // Vtables with a body here (not the available_externally copies clang
  // adds only when optimising: -O0 and -O2 see the same candidates). Each
  // array of a vtable group starts with offsets and the RTTI pointer; its
  // virtual functions begin at the first function.
  for (const GlobalVariable &g : module_.globals()) {
    if (!IsVtable(g) || !g.hasInitializer() || g.hasAvailableExternallyLinkage())
      continue;
    const Constant *init = g.getInitializer();
    std::vector<const ConstantArray *> arrays;
    if (const auto *a = dyn_cast<ConstantArray>(init))
      arrays.push_back(a);
    else if (const auto *st = dyn_cast<ConstantStruct>(init))
      for (const Use &op : st->operands())
        if (const auto *a = dyn_cast<ConstantArray>(op.get()))
          arrays.push_back(a);
    for (const ConstantArray *a : arrays) {
      int first = -1;
      for (unsigned i = 0; i < a->getNumOperands(); ++i) {
        const auto *f = dyn_cast<Function>(a->getOperand(i)->stripPointerCasts());
        if (!f)
          continue;
        if (first < 0)
          first = int(i);
        size_t slot = i - unsigned(first);
        if (!IsUserFunction(*f))
          continue;
        if (vtable_slots_.size() <= slot)
          vtable_slots_.resize(slot + 1);
        if (!is_contained(vtable_slots_[slot], f))
          vtable_slots_[slot].push_back(f);
      }
    }
  }
}

std::string SignatureOf(const FunctionType *type) {
  std::string out;
  raw_string_ostream os(out);
  type->print(os);
  return out;
}

std::vector<CallClassifier::Target> CallClassifier::IndirectTargets() const {
  if (!targets_found_)
    FindAddressTakenFunctions();
  std::vector<Target> out;
  for (const Function *f : address_taken_)
    out.push_back({FunctionKey(*f), SignatureOf(f->getFunctionType()), -1});
  for (size_t slot = 0; slot < vtable_slots_.size(); ++slot)
    for (const Function *f : vtable_slots_[slot])
      out.push_back({FunctionKey(*f), SignatureOf(f->getFunctionType()), int64_t(slot)});
  std::sort(out.begin(), out.end(), [](const Target &a, const Target &b) {
    return std::tie(a.slot, a.key) < std::tie(b.slot, b.key);
  });
  return out;
}

std::vector<std::string> CallClassifier::IndirectCandidates(const CallBase &call) const {
  if (!targets_found_)
    FindAddressTakenFunctions();
  const FunctionType *type = call.getFunctionType();
  std::vector<std::string> keys;
  auto add = [&](const std::vector<const Function *> &fns) {
    for (const Function *f : fns)
      if (f->getFunctionType() == type)
        keys.push_back(FunctionKey(*f));
  };
  if (std::optional<uint64_t> slot = VirtualSlot(call)) {
    if (*slot < vtable_slots_.size())
      add(vtable_slots_[*slot]);
  } else {
    add(address_taken_);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() > kMaxCandidates)
    keys.clear();
  return keys;
}

FunctionPsg BuildFunctionPsg(Function &f, const CallClassifier &classifier) {
  FunctionPsg psg;
  psg.key = classifier.FunctionKey(f);
  psg.hash = scalana_function_hash(psg.key.data(), psg.key.size());
  psg.linkage = LinkageName(f);
  psg.outlined = classifier.OutlinedKind(f);
  DemangledName d = Demangle(f.getName());
  const DISubprogram *sp = f.getSubprogram();
  if (d.ok)
    psg.name = d.full;
  else if (sp && !sp->getName().empty())
    psg.name = sp->getName().str();
  else
    psg.name = f.getName().str();
  psg.file = FileOf(sp);
  // Locations are compared by DIFile, paths written via SourcePath.
  const DIFile *fn_file = sp ? sp->getFile() : nullptr;
  StringRef comp_dir = sp && sp->getUnit() ? sp->getUnit()->getDirectory() : StringRef();
  psg.line = sp ? sp->getLine() : 0;

  // --- Blocks, numbered; loop-aware reverse post-order.
  DominatorTree dt(f);
  LoopInfo li(dt);
  std::vector<BasicBlock *> blocks;
  DenseMap<const BasicBlock *, unsigned> index;
  for (BasicBlock &bb : f) {
    index[&bb] = blocks.size();
    blocks.push_back(&bb);
  }
  const unsigned n = blocks.size();

  // Adds to `set` every block reachable from `seeds` through blocks that
  // `admit` accepts, seeds included.
  auto flood = [&](BitVector &set, ArrayRef<unsigned> seeds, auto admit) {
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
      for (BasicBlock *sb : successors(blocks[y]))
        visit(index.lookup(sb));
    }
  };
  // Loop bodies as the source has them. A natural loop excludes the blocks
  // of a `break` or `return` path (they cannot reach the back edge), yet the
  // source puts that code in the loop. A loop's extended body adds the blocks
  // dominated by its header that are reached from a side exit before the
  // code that follows the loop (what the header's or latch's own exit leads
  // to).
  DenseMap<const Loop *, BitVector> body;
  std::vector<Loop *> ext_loop_of(n, nullptr); // innermost extended loop of each block
  for (Loop *l : li.getLoopsInPreorder()) {
    BitVector &bv = body[l];
    bv.resize(n);
    for (BasicBlock *bb : l->blocks())
      bv.set(index.lookup(bb));
    SmallVector<std::pair<BasicBlock *, BasicBlock *>, 8> exits;
    l->getExitEdges(exits);
    SmallVector<BasicBlock *, 4> latches;
    l->getLoopLatches(latches);
    BitVector after_loop(n);
    SmallVector<unsigned, 4> main_exits, all_exits;
    for (auto &[from, to] : exits) {
      all_exits.push_back(index.lookup(to));
      if (from == l->getHeader() || is_contained(latches, from))
        main_exits.push_back(index.lookup(to));
    }
    flood(after_loop, main_exits, [](unsigned) { return true; });
    if (!main_exits.empty())
      flood(bv, all_exits, [&](unsigned b) {
        return !after_loop.test(b) && dt.dominates(l->getHeader(), blocks[b]);
      });
    // Pre-order: inner loops come later and overwrite.
    for (unsigned b : bv.set_bits())
      ext_loop_of[b] = l;
  }
  auto in_loop = [&](const Loop *l, unsigned b) { return body.find(l)->second.test(b); };
  // DFS visiting the successors that leave the current innermost loop first:
  // they finish first and so come after the loop body in reverse post-order,
  // which puts a loop's blocks before the code that follows the loop.
  std::vector<unsigned> rpo_number(n, ~0u);
  {
    std::vector<unsigned> post;
    auto ordered_succs = [&](unsigned b) {
      std::vector<unsigned> in_loop_succs, leaving;
      Loop *l = ext_loop_of[b];
      for (BasicBlock *s : successors(blocks[b])) {
        unsigned si = index.lookup(s);
        (l && !in_loop(l, si) ? leaving : in_loop_succs).push_back(si);
      }
      // The stack pops from the back: in-loop successors are visited last,
      // in successor order.
      std::vector<unsigned> out(in_loop_succs.rbegin(), in_loop_succs.rend());
      out.insert(out.end(), leaving.rbegin(), leaving.rend());
      return out;
    };
    AppendPostOrder(0, n, ordered_succs, post);
    for (unsigned i = 0; i < post.size(); ++i)
      rpo_number[post[post.size() - 1 - i]] = i;
  }
  auto reachable = [&](unsigned b) { return rpo_number[b] != ~0u; };

  // --- Call sites.
  std::vector<Item> items;
  BitVector has_item(n);
  std::vector<std::pair<const CallBase *, OmpCall>> worksharing_inits;
  std::vector<const CallBase *> construct_calls; // OpenMP region and worksharing calls
  for (unsigned b = 0; b < n; ++b) {
    if (!reachable(b))
      continue;
    unsigned pos = 0;
    for (Instruction &inst : *blocks[b]) {
      ++pos;
      auto *call = dyn_cast<CallBase>(&inst);
      if (!call || isa<CallBrInst>(call))
        continue;
      Item item{b, pos, call, false, "", ""};
      // An OpenMP construct: the runtime call stands for its outlined body.
      if (OmpCall omp = ClassifyOmpCall(*call); omp.region != OmpRegion::None) {
        construct_calls.push_back(call);
        if (!omp.body->isDeclaration() && !classifier.IsLibraryDefinition(*omp.body)) {
          item.callee_key = classifier.FunctionKey(*omp.body);
          item.region = omp.region;
          item.directive_line = omp.directive_line;
          items.push_back(std::move(item));
          has_item.set(b);
        }
        continue;
      } else if (omp.worksharing != Worksharing::None) {
        worksharing_inits.push_back({call, omp});
        construct_calls.push_back(call);
        continue;
      }
      CallRole role = classifier.Classify(*call, &item.callee_key, &item.op);
      if (role == CallRole::Library)
        continue;
      item.is_mpi = role == CallRole::Mpi;
      item.indirect = role == CallRole::User && item.callee_key.empty();
      if (item.indirect) {
        item.candidates = classifier.IndirectCandidates(*call);
        item.signature = SignatureOf(call->getFunctionType());
        if (std::optional<uint64_t> slot = VirtualSlot(*call))
          item.vtable_slot = int64_t(*slot);
      }
      items.push_back(std::move(item));
      has_item.set(b);
    }
  }
  DropSerializedRegionCalls(items, has_item);

  // --- Regions: function, loops, branches.
  std::vector<Region> regions;
  {
    Region fn{VertexKind::Function, 0, BitVector(n, true), {}, nullptr};
    regions.push_back(std::move(fn));
  }
  BitVector loop_header(n);
  const WorksharingLoops worksharing(worksharing_inits, li, dt);
  for (Loop *l : li.getLoopsInPreorder()) {
    unsigned h = index.lookup(l->getHeader());
    if (!reachable(h) || worksharing.IsChunkLoop(l))
      continue;
    Region r{VertexKind::Loop, h, BitVector(n), {}, l};
    r.blocks = body[l];
    r.worksharing = worksharing.KindOf(l);
    loop_header.set(h);
    regions.push_back(std::move(r));
  }
  // Post-dominators of the function, and of each loop body (a branch in a
  // loop merges inside the loop, its `break` arms being early exits).
  std::vector<unsigned> all_blocks;
  for (unsigned b = 0; b < n; ++b)
    if (reachable(b))
      all_blocks.push_back(b);
  ScopePostDominators function_pdom(
      blocks, index, all_blocks, [](unsigned, unsigned) { return true; },
      [&](unsigned b) { return isa<ReturnInst>(blocks[b]->getTerminator()); });
  std::map<Loop *, std::unique_ptr<ScopePostDominators>> loop_pdom;
  auto merge_point = [&](unsigned b, Loop *l) -> int {
    if (!l)
      return function_pdom.ImmediatePostDominator(b);
    auto &pd = loop_pdom[l];
    if (!pd) {
      std::vector<unsigned> members;
      for (unsigned m : body[l].set_bits())
        members.push_back(m);
      BasicBlock *header = l->getHeader();
      pd = std::make_unique<ScopePostDominators>(
          blocks, index, members,
          [&, l, header](unsigned, unsigned s) { return blocks[s] != header && in_loop(l, s); },
          [&, header](unsigned x) { return is_contained(successors(blocks[x]), header); });
    }
    return pd->ImmediatePostDominator(b);
  };
  for (unsigned b = 0; b < n; ++b) {
    if (!reachable(b))
      continue;
    Instruction *term = blocks[b]->getTerminator();
    if (!isa<BranchInst>(term) && !isa<SwitchInst>(term))
      continue;
    if (term->getNumSuccessors() < 2)
      continue;
    Loop *l = ext_loop_of[b];
    bool loop_control = false;
    std::vector<std::pair<unsigned, unsigned>> arms; // (arm index, entry block)
    SmallPtrSet<BasicBlock *, 4> distinct;
    for (unsigned s = 0; s < term->getNumSuccessors(); ++s) {
      BasicBlock *succ = term->getSuccessor(s);
      // Loop tests and latches are the loop's own control, not a branch.
      if (l && (!in_loop(l, index.lookup(succ)) || succ == l->getHeader()))
        loop_control = true;
      if (distinct.insert(succ).second)
        arms.push_back({s, index.lookup(succ)});
    }
    if (loop_control || arms.size() < 2)
      continue;
    int merge = merge_point(b, l);
    unsigned loop_header_block = l ? index.lookup(l->getHeader()) : ~0u;
    auto inside = [&](unsigned y) {
      return y != b && static_cast<int>(y) != merge && y != loop_header_block &&
             (!l || in_loop(l, y)) && reachable(y);
    };
    Region r{VertexKind::Branch, b, BitVector(n), std::vector<int8_t>(n, -1), nullptr};
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
        for (BasicBlock *s : successors(blocks[y])) {
          unsigned si = index.lookup(s);
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
      if (has_item.test(y) || loop_header.test(y)) {
        guards = true;
        break;
      }
    if (guards && IsConstructControl(*term, construct_calls, [&](const BasicBlock *bb) {
          return r.blocks.test(index.lookup(bb));
        }))
      guards = false;
    if (guards)
      regions.push_back(std::move(r));
  }

  // --- Nesting: a region's depth is the number of regions holding its head;
  // the innermost region holding a block is the deepest one.
  for (Region &r : regions)
    r.size = r.blocks.count();
  for (unsigned i = 1; i < regions.size(); ++i)
    for (unsigned j = 0; j < regions.size(); ++j)
      if (i != j && regions[j].blocks.test(regions[i].head))
        ++regions[i].nesting;
  auto innermost = [&](unsigned block, unsigned exclude) {
    unsigned best = 0;
    for (unsigned j = 1; j < regions.size(); ++j) {
      if (j == exclude || !regions[j].blocks.test(block))
        continue;
      const Region &c = regions[j], &b = regions[best];
      if (best == 0 || c.nesting > b.nesting || (c.nesting == b.nesting && c.size < b.size))
        best = j;
    }
    return best;
  };

  // --- Vertex tree. Nodes are regions (by index) then items.
  const unsigned num_regions = regions.size();
  const unsigned num_nodes = num_regions + items.size();
  std::vector<int> node_parent(num_nodes, -1);
  std::vector<std::tuple<int, unsigned, unsigned>> node_key(num_nodes); // arm, rpo, pos
  std::vector<std::vector<unsigned>> node_children(num_nodes);
  auto arm_in = [&](unsigned parent_region, unsigned block) -> int {
    const Region &p = regions[parent_region];
    return p.kind == VertexKind::Branch ? p.arm_of_block[block] : -1;
  };
  for (unsigned i = 1; i < num_regions; ++i) {
    unsigned p = innermost(regions[i].head, i);
    node_parent[i] = p;
    unsigned pos = regions[i].kind == VertexKind::Loop ? 0 : blocks[regions[i].head]->size() + 1;
    node_key[i] = {arm_in(p, regions[i].head), rpo_number[regions[i].head], pos};
  }
  for (unsigned k = 0; k < items.size(); ++k) {
    unsigned p = innermost(items[k].block, ~0u);
    node_parent[num_regions + k] = p;
    node_key[num_regions + k] = {arm_in(p, items[k].block), rpo_number[items[k].block],
                                 items[k].position};
  }
  for (unsigned i = 1; i < num_nodes; ++i)
    node_children[node_parent[i]].push_back(i);
  for (auto &c : node_children)
    std::sort(c.begin(), c.end(),
              [&](unsigned a, unsigned b) { return node_key[a] < node_key[b]; });

  // A function too large to number is recorded as its function vertex alone.
  if (num_nodes > SCALANA_MAX_LOCAL_VERTICES) {
    for (auto &c : node_children)
      c.clear();
    items.clear();
  }

  // Local ids in pre-order, so that ids read top-down like the source.
  std::vector<uint32_t> node_vertex(num_nodes, 0);
  std::vector<unsigned> order;
  {
    std::vector<unsigned> stack{0};
    while (!stack.empty()) {
      unsigned v = stack.back();
      stack.pop_back();
      node_vertex[v] = order.size();
      order.push_back(v);
      for (auto it = node_children[v].rbegin(); it != node_children[v].rend(); ++it)
        stack.push_back(*it);
    }
  }

  // --- Source ranges.
  // The return (and the load of the return value feeding it) carries the
  // closing brace's line at -O1 and above but not always at -O0; lifetime
  // markers exist only when optimising. Leave them out so that ranges agree
  // at every level: ranges end at the last statement.
  auto is_epilogue = [](const Instruction &inst) {
    if (isa<ReturnInst>(inst) || isa<IntrinsicInst>(inst))
      return true;
    return isa<LoadInst>(inst) && inst.hasOneUse() && isa<ReturnInst>(*inst.user_begin());
  };
  auto add_block_lines = [&](LineRange &range, unsigned b) {
    for (Instruction &inst : *blocks[b])
      if (is_epilogue(inst))
        continue;
      else if (const DILocation *loc = OwnLocation(inst))
        if (SameFile(loc->getFile(), fn_file))
          range.Add(loc->getLine());
  };
  LineRange fn_range;
  for (unsigned b = 0; b < n; ++b)
    if (reachable(b))
      add_block_lines(fn_range, b);
  if (psg.line == 0)
    psg.line = fn_range.first;
  psg.end_line = std::max(psg.line, fn_range.last);

  psg.vertices.resize(order.size());
  for (unsigned v : order) {
    PsgVertex &vx = psg.vertices[node_vertex[v]];
    if (v != 0)
      vx.parent = node_vertex[node_parent[v]];
    for (unsigned c : node_children[v])
      vx.children.push_back(node_vertex[c]);
    if (v != 0 && std::get<0>(node_key[v]) >= 0)
      vx.arm = std::get<0>(node_key[v]);
    if (v == 0) {
      vx.kind = VertexKind::Function;
      vx.line = psg.line;
      vx.end_line = psg.end_line;
    } else if (v < num_regions) {
      const Region &r = regions[v];
      vx.kind = r.kind;
      LineRange range;
      if (r.kind == VertexKind::Branch)
        if (const DILocation *loc = OwnLocation(*blocks[r.head]->getTerminator()))
          if (SameFile(loc->getFile(), fn_file))
            range.first = range.last = loc->getLine();
      for (unsigned b : r.blocks.set_bits())
        add_block_lines(range, b);
      if (r.kind == VertexKind::Branch && range.first == 0)
        add_block_lines(range, r.head);
      vx.line = range.first;
      vx.end_line = range.last;
      if (r.kind == VertexKind::Loop) {
        vx.depth = worksharing.DepthOf(r.loop);
        vx.worksharing = r.worksharing;
      }
    } else {
      const Item &it = items[v - num_regions];
      vx.kind = it.is_mpi ? VertexKind::Mpi : VertexKind::Call;
      if (const DILocation *loc = OwnLocation(*it.call)) {
        vx.line = loc->getLine();
        vx.col = loc->getColumn();
        if (!SameFile(loc->getFile(), fn_file))
          vx.file = SourcePath(loc->getFile(), comp_dir);
      }
      if (it.is_mpi) {
        vx.op = it.op;
        vx.mpi_class = ClassifyMpiOperation(it.op);
      } else {
        vx.callee = it.callee_key;
        vx.indirect = it.indirect;
        vx.candidates = it.candidates;
        vx.signature = it.signature;
        vx.vtable_slot = it.vtable_slot;
        vx.region = it.region;
        if (it.directive_line != vx.line)
          vx.directive_line = it.directive_line;
      }
    }
  }
  return psg;
}

namespace {

std::string HexId(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string LanguageOf(const Module &m) {
  for (const DICompileUnit *cu : m.debug_compile_units()) {
    unsigned lang = cu->getSourceLanguage();
    switch (lang) {
    case dwarf::DW_LANG_C:
    case dwarf::DW_LANG_C89:
    case dwarf::DW_LANG_C99:
    case dwarf::DW_LANG_C11:
    case dwarf::DW_LANG_C17:
      return "c";
    case dwarf::DW_LANG_C_plus_plus:
    case dwarf::DW_LANG_C_plus_plus_03:
    case dwarf::DW_LANG_C_plus_plus_11:
    case dwarf::DW_LANG_C_plus_plus_14:
    case dwarf::DW_LANG_C_plus_plus_17:
    case dwarf::DW_LANG_C_plus_plus_20:
      return "c++";
    case dwarf::DW_LANG_Fortran77:
    case dwarf::DW_LANG_Fortran90:
    case dwarf::DW_LANG_Fortran95:
    case dwarf::DW_LANG_Fortran03:
    case dwarf::DW_LANG_Fortran08:
    case dwarf::DW_LANG_Fortran18:
      return "fortran";
    default:
      break;
    }
  }
  // No debug info: guess from the file name.
  StringRef src = m.getSourceFileName();
  std::string ext = src.rsplit('.').second.lower();
  if (ext == "c")
    return "c";
  if (ext == "cc" || ext == "cpp" || ext == "cxx" || ext == "c++" || ext == "C")
    return "c++";
  if (ext == "f" || ext == "f90" || ext == "f95" || ext == "f03" || ext == "f08" || ext == "for")
    return "fortran";
  return "unknown";
}

std::string CompilationDir(const Module &m) {
  for (const DICompileUnit *cu : m.debug_compile_units())
    return cu->getDirectory().str();
  return "";
}

void WriteVertex(json::OStream &j, uint32_t id, const PsgVertex &v) {
  j.object([&] {
    j.attribute("id", id);
    j.attribute("kind", std::string(ToString(v.kind)));
    if (v.parent >= 0)
      j.attribute("parent", v.parent);
    if (v.arm >= 0)
      j.attribute("arm", v.arm);
    if (!v.file.empty())
      j.attribute("file", v.file);
    j.attribute("line", v.line);
    if (v.kind == VertexKind::Function || v.kind == VertexKind::Loop ||
        v.kind == VertexKind::Branch)
      j.attribute("end_line", v.end_line);
    if (v.kind == VertexKind::Call || v.kind == VertexKind::Mpi)
      j.attribute("col", v.col);
    if (v.kind == VertexKind::Loop)
      j.attribute("depth", v.depth);
    if (v.kind == VertexKind::Loop && v.worksharing != Worksharing::None)
      j.attribute("worksharing", std::string(ToString(v.worksharing)));
    if (v.kind == VertexKind::Call) {
      if (v.indirect)
        j.attribute("indirect", true);
      else
        j.attribute("callee", v.callee);
      if (v.region != OmpRegion::None)
        j.attribute("region", std::string(ToString(v.region)));
      if (v.directive_line)
        j.attribute("directive_line", v.directive_line);
      if (!v.candidates.empty())
        j.attributeArray("candidates", [&] {
          for (const std::string &k : v.candidates)
            j.value(k);
        });
      if (v.indirect) {
        j.attribute("sig", v.signature);
        if (v.vtable_slot >= 0)
          j.attribute("slot", v.vtable_slot);
      }
    }
    if (v.kind == VertexKind::Mpi) {
      j.attribute("op", v.op);
      j.attribute("class", std::string(ToString(v.mpi_class)));
    }
    if (!v.children.empty())
      j.attributeArray("children", [&] {
        for (uint32_t c : v.children)
          j.value(c);
      });
  });
}

} // namespace

std::string ModuleRecordJson(const Module &m, const std::vector<FunctionPsg> &functions,
                             const std::vector<CallClassifier::Target> &targets, int opt_level,
                             bool pretty) {
  std::string out;
  raw_string_ostream os(out);
  auto scalar = [&](auto &&value) {
    json::OStream j(os);
    j.value(value);
  };
  const char *nl = pretty ? "\n" : "";
  os << "{\"scalana_psg\":1,\"producer\":";
  scalar("scalana-pass 0.1 (LLVM " LLVM_VERSION_STRING ")");
  os << ",\"module\":";
  scalar(ModuleSourceName(m));
  os << ",\"comp_dir\":";
  scalar(CompilationDir(m));
  os << ",\"language\":";
  scalar(LanguageOf(m));
  os << ",\"opt_level\":" << opt_level << "," << nl << "\"functions\":[";
  for (size_t i = 0; i < functions.size(); ++i) {
    const FunctionPsg &f = functions[i];
    os << (i ? "," : "") << nl << (pretty ? " " : "") << "{\"key\":";
    scalar(f.key);
    os << ",\"name\":";
    scalar(f.name);
    os << ",\"hash\":\"" << HexId(f.hash) << "\",\"linkage\":\"" << f.linkage << "\",\"file\":";
    scalar(f.file);
    os << ",\"line\":" << f.line << ",\"end_line\":" << f.end_line;
    if (f.outlined != OmpRegion::None)
      os << ",\"outlined\":\"" << ToString(f.outlined) << "\"";
    os << ",\"vertices\":[";
    for (size_t v = 0; v < f.vertices.size(); ++v) {
      os << (v ? "," : "") << nl << (pretty ? "  " : "");
      json::OStream j(os);
      WriteVertex(j, v, f.vertices[v]);
    }
    os << "]}";
  }
  os << "]";
  if (!targets.empty()) {
    os << "," << nl << "\"targets\":[";
    for (size_t i = 0; i < targets.size(); ++i) {
      os << (i ? "," : "") << nl << (pretty ? " " : "");
      json::OStream j(os);
      j.object([&] {
        j.attribute("key", targets[i].key);
        j.attribute("sig", targets[i].signature);
        if (targets[i].slot >= 0)
          j.attribute("slot", targets[i].slot);
      });
    }
    os << "]";
  }
  os << "}" << nl;
  return out;
}

} // namespace scalana
