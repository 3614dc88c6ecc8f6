// The whole-program Program Structure Graph, as the analyzer uses it.
//
// Built from the per-function records the pass embeds in the binary
// (docs/formats.md section 2). Calling contexts are materialised lazily: the
// graph starts as main's local PSG, and a call vertex is expanded into a copy
// of its callee the first time a context needs it (Resolve) or when the whole
// graph is asked for (ExpandAll). This keeps the graph near-linear in code
// size while every calling context still gets its own vertices.
#pragma once

#include "scalana/profile.h" // scalana::Error
#include "scalana/psg_format.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace scalana {

struct SourceLoc {
  std::string file;
  uint32_t line = 0, end_line = 0, column = 0;
};

// One function's PSG, as recorded by the pass.
struct LocalVertex {
  uint32_t local = 0;
  VertexKind kind = VertexKind::Comp;
  int32_t parent = -1;
  std::vector<uint32_t> children;
  int32_t arm = -1;
  SourceLoc loc;
  std::string callee; // call: function key of a direct call
  bool indirect = false;
  // Indirect call: keys of its possible targets, from the whole program
  // (ParsePsgSection joins what every TU records, docs/psg.md).
  std::vector<std::string> candidates;
  std::string signature;    // indirect call: LLVM function type ("" in older records)
  int64_t vtable_slot = -1; // indirect call: slot of a C++ virtual call
  std::string mpi_op;       // mpi: "MPI_Send"
  MpiClass mpi_class = MpiClass::None;
  uint32_t loop_depth = 0;
  // OpenMP (docs/psg.md, "OpenMP regions"): a call starting a construct, whose
  // callee is its outlined body; the directive's line where the call's own
  // location (what frames match) is another; a worksharing loop.
  OmpRegion region = OmpRegion::None;
  uint32_t directive_line = 0;
  Worksharing worksharing = Worksharing::None;
};

struct LocalPsg {
  std::string key, name, linkage, module, language;
  // The file (executable or shared object) the record came from, as given
  // to ParsePsgSections; "" from ParsePsgSection.
  std::string object;
  // The record's compilation directory: relative file names start here ("" if
  // the object had no debug info).
  std::string comp_dir;
  uint64_t hash = 0; // function hash (ids.h)
  SourceLoc loc;
  OmpRegion outlined = OmpRegion::None; // the OpenMP construct it is the outlined body of
  std::vector<LocalVertex> vertices;    // vertices[0] is the function vertex
};

// Parses the concatenated records of a `scalana_psg` section. Throws Error.
std::vector<LocalPsg> ParsePsgSection(const std::vector<uint8_t> &bytes);
// Same; non-fatal findings (conflicting duplicate records of one key) are
// appended to *warnings.
std::vector<LocalPsg> ParsePsgSection(const std::vector<uint8_t> &bytes,
                                      std::vector<std::string> *warnings);
// The `scalana_psg` sections of several modules (the executable and the
// shared objects it loaded), joined as the linker joins those of its TUs:
// calls from one module to another resolve like calls between files, and
// every record keeps the OBJECT it came from. Errors name the object.
struct PsgSection {
  std::string object;
  std::vector<uint8_t> bytes;
};
std::vector<LocalPsg> ParsePsgSections(const std::vector<PsgSection> &sections,
                                       std::vector<std::string> *warnings);
// "0x" + 16 hex digits of FNV-1a 64 over the bytes: the PSG identity the
// runtime writes as meta.psg_id.
std::string PsgIdOf(const std::vector<uint8_t> &section_bytes);

// Contexts with more call sites than this are truncated: only their last id
// (the vertex) is trusted.
inline constexpr size_t kMaxContextCallSites = 128;

using VertexId = int32_t; // index into Psg::vertices()
inline constexpr VertexId kNoVertex = -1;

struct Vertex {
  VertexKind kind = VertexKind::Comp;
  VertexId parent = kNoVertex;
  std::vector<VertexId> children; // execution order
  int32_t arm = -1;               // set on children of a branch
  SourceLoc loc;
  int32_t function = -1; // index into Psg::functions() of the code it is in
  uint32_t local = 0;    // local index of the (first) raw vertex it stands for
  std::string label;     // mpi: op; call: callee name; loop/branch/comp: empty
  MpiClass mpi_class = MpiClass::None;
  bool recursive = false;                      // call closing a recursion cycle
  bool indirect = false;                       // call resolved (or not) at run time
  bool expanded = false;                       // call: children hold the callee's copy
  VertexId recursion_target = kNoVertex;       // recursive call: the copy it loops back to
  OmpRegion region = OmpRegion::None;          // call: the OpenMP construct it starts
  Worksharing worksharing = Worksharing::None; // loop
};

// One step of a vertex's calling context (Psg::CallSites).
struct CallSite {
  std::string function;        // as shown to the reader
  SourceLoc loc;               // the call's location; empty for the entry
  VertexId vertex = kNoVertex; // the expanded call (or the root) holding the function's copy
};

struct PsgOptions {
  uint32_t max_loop_depth = 10;
  bool contract = true;
  // Guard for ExpandAll on call graphs whose context tree explodes.
  size_t max_vertices = 20'000'000;
};

// Text spellings of the writers (docs/psg.md).
enum class PsgFormat { Text, Json, Dot };

struct PsgStats {
  uint64_t vertices_before = 0; // fully expanded, before contraction (saturating)
  uint64_t vertices_after = 0;  // after contraction
  uint64_t loops = 0, branches = 0, comps = 0, mpis = 0, calls = 0;
  uint64_t regions = 0; // OpenMP constructs (parallel, teams, task)
  uint64_t functions = 0;
  uint64_t expanded_calls = 0; // hidden call vertices holding callee copies (after)
};

class Psg {
public:
  // Throws Error.
  static Psg Build(std::vector<LocalPsg> functions, const PsgOptions &opts = {});
  // Reads the `scalana_psg` section of BINARY. Throws Error, with a message
  // saying how to rebuild when the binary has no PSG.
  static Psg LoadFromBinary(const std::string &binary, const PsgOptions &opts = {});
  // The whole program: BINARY and the shared objects built with the
  // wrappers that its runs loaded (meta.modules). Its psg_id and build_id
  // stay the executable's. Throws Error naming the file at fault.
  static Psg LoadFromObjects(const std::string &binary, const std::vector<std::string> &libraries,
                             const PsgOptions &opts = {});
  // BINARY's structure from RECORDS in the section's format, recovered from
  // the binary itself (analyzer/structure/) where it has no PSG; SOURCE says
  // so for the reports (structure_source()). Its psg_id is "", as the
  // runtime records for such a binary. Throws Error.
  static Psg LoadFromRecords(const std::string &binary, const std::string &build_id,
                             const std::vector<uint8_t> &records, const std::string &source,
                             const PsgOptions &opts = {});

  const std::vector<Vertex> &vertices() const;
  const Vertex &vertex(VertexId v) const;
  VertexId root() const; // main's function vertex
  const std::vector<LocalPsg> &functions() const;
  const std::string &psg_id() const; // FNV-1a of the section bytes, "0x…"

  // The vertex of a run-time context (docs/formats.md: contexts), expanding
  // calls on the way; samples in uninstrumented callees land on the call
  // site's vertex; indirect call sites are bound to the callee seen. Returns
  // kNoVertex when the context does not fit this PSG (counted by the caller).
  // Adds vertices (ids already handed out stay valid): not thread-safe.
  // docs/psg.md lists the cases (truncated contexts, OpenMP regions, ...).
  VertexId Resolve(const Context &ctx);

  // For a context Resolve cannot place (a chain of calls the PSG does not
  // know: a call through a pointer into code reached another way, frames of
  // a runtime the program called back from): the largest part of it that
  // fits. Either its inner part, placed where its first function starts on
  // its own (the line the time is spent on is kept; preferred on a tie), or
  // its outer call sites, the time landing on the last one kept (as in a
  // callee without a record). *CUT: how many ids were left out. kNoVertex
  // only when no part names a vertex of this PSG.
  VertexId ResolveNearest(const Context &ctx, size_t *cut);

  void ExpandAll(); // throws Error past PsgOptions::max_vertices
  PsgStats Stats() const;

  // The functions from the program's entry down to the one holding v, each
  // with the call site it was called from (the first, the entry, has none):
  // what a report prints as "main > solve (cg.f:120) > conj_grad (cg.f:88)".
  // Names are the reader's: flang's program unit `_QQmain` (and flang's
  // generated C main calling it) is "main". A target bound under an
  // indirect call is named by itself at the indirect call's line. An OpenMP
  // construct's outlined body is one step, "parallel region" (or "teams
  // region", "task") at the directive's line.
  std::vector<CallSite> CallSites(VertexId v) const;
  // The names of CallSites(v): {"main", "solve", "conj_grad"}.
  std::vector<std::string> CallPath(VertexId v) const;
  // The reader's name of the function holding v (the last of CallPath, and
  // "main" for flang's program unit); "" for a vertex of no function.
  std::string FunctionName(VertexId v) const;
  // An indirect call site's possible targets as its record lists them
  // (`candidates`, docs/formats.md section 2), by name where the target has
  // a record, else by key; empty for other vertices and for the targets
  // Resolve bound under a site.
  std::vector<std::string> CandidatesOf(VertexId v) const;
  const LocalPsg &FunctionOf(VertexId v) const;

  // Roots of contexts that do not start in main and have no unique call site
  // (OpenMP outlined functions, thread start routines), made by Resolve.
  const std::vector<VertexId> &extra_roots() const;
  const std::string &build_id() const;               // GNU build id of the binary, hex ("" if none)
  const std::string &binary() const;                 // as given to LoadFromBinary ("" after Build)
  const std::vector<std::string> &libraries() const; // as given to LoadFromObjects
  // Their build and PSG ids, as read when loaded (same order).
  const std::vector<ModuleInfo> &library_ids() const;
  const std::vector<std::string> &warnings() const;
  // How the structure was obtained where not from the pass's records: a
  // sentence for the reports ("" for the PSG the wrappers recorded).
  const std::string &structure_source() const;
  const PsgOptions &options() const;
  // flang's generated C `main` (index into functions()), which only calls the
  // program unit `_QQmain`: the graph starts at the program unit, and
  // contexts need not (but may) start with main's call of it.
  bool IsGeneratedEntry(int32_t function) const;
  // The function record of a raw id's function hash, or nullptr.
  const LocalPsg *FunctionOfId(uint64_t raw_id) const;

  // Writers used by `scalana psg`.
  std::string ToText() const;
  std::string ToJson() const;
  std::string ToDot() const;
  std::string Write(PsgFormat format) const;

  Psg();
  ~Psg();
  Psg(Psg &&) noexcept;
  Psg &operator=(Psg &&) noexcept;

private:
  // The sections' records parsed and built for BINARY; WHEN_EMPTY ends the
  // error for sections without a function.
  static Psg BuildFromSections(const std::string &binary, const std::vector<PsgSection> &sections,
                               const PsgOptions &opts, const char *when_empty);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace scalana
