// Names and spellings of the PSG as the pass embeds it in object files.
// The full schema is in docs/formats.md; this header holds what code on both
// sides must spell identically.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace scalana {

// ELF section holding one NUL-terminated JSON record per translation unit.
// The name is a valid C identifier so linkers keep it and define
// __start_/__stop_ symbols; records from all objects are concatenated.
inline constexpr std::string_view kPsgSection = "scalana_psg";
inline constexpr int kPsgSchemaVersion = 1;

enum class VertexKind : uint8_t { Function, Loop, Branch, Call, Mpi, Comp };

enum class MpiClass : uint8_t {
  None,
  P2PBlocking,
  P2PNonBlocking,
  Completion, // Wait/Test family
  Collective, // blocking and non-blocking collectives
  OneSided,
  Other, // init, finalize, comm management, ...
};

// OpenMP constructs (docs/psg.md, "OpenMP regions"). On a call vertex, the
// region the call starts (`region`: its callee is the outlined body); on a
// function record, the region it is the outlined body of (`outlined`).
// Records of older passes have neither: a region is then no vertex at all.
enum class OmpRegion : uint8_t { None, Parallel, Teams, Task };

// On a loop vertex: the loop is an OpenMP worksharing loop, its iterations
// split among the team statically (`omp for` with a static schedule), at
// run time (dynamic, guided, runtime, auto), or among teams (`distribute`).
enum class Worksharing : uint8_t { None, Static, Dynamic, Distribute };

inline constexpr std::string_view ToString(VertexKind k) {
  switch (k) {
  case VertexKind::Function:
    return "function";
  case VertexKind::Loop:
    return "loop";
  case VertexKind::Branch:
    return "branch";
  case VertexKind::Call:
    return "call";
  case VertexKind::Mpi:
    return "mpi";
  case VertexKind::Comp:
    return "comp";
  }
  return "?";
}

inline constexpr std::string_view ToString(MpiClass c) {
  switch (c) {
  case MpiClass::None:
    return "none";
  case MpiClass::P2PBlocking:
    return "p2p_blocking";
  case MpiClass::P2PNonBlocking:
    return "p2p_nonblocking";
  case MpiClass::Completion:
    return "completion";
  case MpiClass::Collective:
    return "collective";
  case MpiClass::OneSided:
    return "one_sided";
  case MpiClass::Other:
    return "other";
  }
  return "?";
}

inline constexpr std::string_view ToString(OmpRegion r) {
  switch (r) {
  case OmpRegion::None:
    return "none";
  case OmpRegion::Parallel:
    return "parallel";
  case OmpRegion::Teams:
    return "teams";
  case OmpRegion::Task:
    return "task";
  }
  return "?";
}

inline constexpr std::string_view ToString(Worksharing w) {
  switch (w) {
  case Worksharing::None:
    return "none";
  case Worksharing::Static:
    return "static";
  case Worksharing::Dynamic:
    return "dynamic";
  case Worksharing::Distribute:
    return "distribute";
  }
  return "?";
}

inline std::optional<VertexKind> ParseVertexKind(std::string_view s) {
  for (auto k : {VertexKind::Function, VertexKind::Loop, VertexKind::Branch, VertexKind::Call,
                 VertexKind::Mpi, VertexKind::Comp})
    if (ToString(k) == s)
      return k;
  return std::nullopt;
}

inline std::optional<MpiClass> ParseMpiClass(std::string_view s) {
  for (auto c : {MpiClass::None, MpiClass::P2PBlocking, MpiClass::P2PNonBlocking,
                 MpiClass::Completion, MpiClass::Collective, MpiClass::OneSided, MpiClass::Other})
    if (ToString(c) == s)
      return c;
  return std::nullopt;
}

inline std::optional<OmpRegion> ParseOmpRegion(std::string_view s) {
  for (auto r : {OmpRegion::None, OmpRegion::Parallel, OmpRegion::Teams, OmpRegion::Task})
    if (ToString(r) == s)
      return r;
  return std::nullopt;
}

inline std::optional<Worksharing> ParseWorksharing(std::string_view s) {
  for (auto w :
       {Worksharing::None, Worksharing::Static, Worksharing::Dynamic, Worksharing::Distribute})
    if (ToString(w) == s)
      return w;
  return std::nullopt;
}

} // namespace scalana
