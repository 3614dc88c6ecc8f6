// Local Program Structure Graphs (docs/formats.md section 2): built from one
// function's CFG, and the module record that embeds them.
#pragma once

#include "ScalanaOmp.h"
#include "scalana/psg_format.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class TargetLibraryInfo;
}

namespace scalana {

struct PsgVertex {
  VertexKind kind = VertexKind::Function;
  int32_t parent = -1;
  std::vector<uint32_t> children;
  int32_t arm = -1;
  std::string file; // only when it differs from the function's
  uint32_t line = 0, end_line = 0, col = 0;
  std::string callee; // call: function key of a direct call
  bool indirect = false;
  std::vector<std::string> candidates; // indirect call: keys of possible targets
  std::string signature;               // indirect call: its LLVM function type
  int64_t vtable_slot = -1;            // indirect call: the slot of a virtual call
  std::string op;                      // mpi
  MpiClass mpi_class = MpiClass::None;
  uint32_t depth = 0; // loop nesting depth, 1 = outermost
  // OpenMP (docs/psg.md, "OpenMP regions"). Call: the region it starts, its
  // callee the outlined body, and the directive's line where the call's own
  // location is another (flang).
  OmpRegion region = OmpRegion::None;
  uint32_t directive_line = 0;
  Worksharing worksharing = Worksharing::None; // loop
};

struct FunctionPsg {
  std::string key, name, linkage, file;
  uint64_t hash = 0;
  uint32_t line = 0, end_line = 0;
  OmpRegion outlined = OmpRegion::None; // the OpenMP construct it is the body of
  std::vector<PsgVertex> vertices;      // vertices[0] is the function vertex
};

// How a call site is seen by the PSG.
enum class CallRole { Library, User, Mpi };

class CallClassifier {
public:
  CallClassifier(const llvm::Module &m, const llvm::TargetLibraryInfo &tli);
  // For User, *callee_key is set for direct calls (empty when indirect);
  // for Mpi, *mpi_op holds the C spelling.
  CallRole Classify(const llvm::CallBase &call, std::string *callee_key, std::string *mpi_op) const;
  // Functions whose body is library code or compiler-generated helpers
  // without source (flang's `__mlir_*`): no PSG, and calls to them are
  // computation.
  bool IsLibraryDefinition(const llvm::Function &f) const;
  // The OpenMP construct F is the outlined body of, if any.
  OmpRegion OutlinedKind(const llvm::Function &f) const { return omp_.KindOf(f); }
  std::string FunctionKey(const llvm::Function &f) const;
  // The user functions of this module an indirect call may reach, as keys,
  // sorted (docs/formats.md section 2, `candidates`): for a C++ virtual call
  // the functions in that slot of the module's vtables, otherwise the
  // functions whose address the module takes, in both cases of the call's
  // function type. Empty past kMaxCandidates: too broad to tell anything.
  std::vector<std::string> IndirectCandidates(const llvm::CallBase &call) const;
  static constexpr size_t kMaxCandidates = 32;

  // What the module makes reachable through indirect calls, for the analyzer
  // to give every indirect call of the program the targets all TUs show
  // (docs/static.md): user functions whose address is taken (declarations
  // included) and the user functions in each vtable slot, with their types.
  struct Target {
    std::string key, signature;
    int64_t slot = -1; // vtable slot; -1: address taken
  };
  std::vector<Target> IndirectTargets() const;

private:
  CallRole ClassifyCallee(const llvm::Function &f, std::string *callee_key,
                          std::string *mpi_op) const;
  bool IsUserFunction(const llvm::Function &f) const;
  void FindAddressTakenFunctions() const;

  const llvm::Module &module_;
  const llvm::TargetLibraryInfo &tli_;
  const OmpOutlined omp_;
  // Functions without a subprogram here are compiler-generated helpers.
  bool fortran_with_debug_info_ = false;
  // Found at the first indirect call: most modules have none.
  mutable bool targets_found_ = false;
  // User functions whose address is taken other than by a vtable.
  mutable std::vector<const llvm::Function *> address_taken_;
  // Per vtable slot (0 = first virtual function), the user functions in it.
  mutable std::vector<std::vector<const llvm::Function *>> vtable_slots_;
};

// The module's source file as keys and records name it.
std::string ModuleSourceName(const llvm::Module &m);

// A C++ name's parts (llvm::ItaniumPartialDemangler); ok false for names
// that are not mangled or do not demangle.
struct DemangledName {
  bool ok = false;
  std::string context, base, full;
};
DemangledName Demangle(llvm::StringRef mangled);

// The vtable slot of a virtual call (obj->f(args) as clang emits it), or
// none for other calls.
std::optional<uint64_t> VirtualSlot(const llvm::CallBase &call);

// Builds the local PSG of F (which must have a body). Does not modify F.
// FunctionPsg.cpp.
FunctionPsg BuildFunctionPsg(llvm::Function &f, const CallClassifier &classifier);

// The LLVM function type as text ("void (ptr, i32)"): equal in every TU for
// the same source type, since pointers are opaque.
std::string SignatureOf(const llvm::FunctionType *type);

// The module record: one JSON object. `pretty` puts each function and vertex
// on its own line (the SCALANA_PSG_DUMP form); otherwise it is compact.
std::string ModuleRecordJson(const llvm::Module &m, const std::vector<FunctionPsg> &functions,
                             const std::vector<CallClassifier::Target> &targets, int opt_level,
                             bool pretty);

} // namespace scalana
