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

} // namespace scalana
