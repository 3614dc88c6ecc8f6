// What a call is (user code, MPI, a library, an OpenMP construct), the
// indirect calls' candidates, names, and the module's record in the
// scalana_psg section. The local PSG of a function is FunctionPsg.cpp's.
#include "ScalanaPsg.h"

#include "MpiNames.h"
#include "scalana/ids.h"
#include "scalana/io_operations.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

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

} // namespace

CallClassifier::CallClassifier(const Module &m, const TargetLibraryInfo &tli)
    : module_(m), tli_(tli), omp_(m), fortran_with_debug_info_(IsFortranModuleWithDebugInfo(m)) {}

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
  // A POSIX call that moves a file's data: a vertex of its own, like an MPI
  // call, so the time the runtime measures in it (blocked in the kernel,
  // where no CPU sample falls) has its line.
  if (f->isDeclaration() && IsPosixIoOperation(std::string_view(name.data(), name.size()))) {
    *mpi_op = name.str();
    return CallRole::Mpi;
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
