// Hand-built local PSGs for the PSG tests.
#pragma once

#include "psg.h"
#include "scalana/ids.h"

#include <sstream>
#include <string>
#include <vector>

namespace scalana::test {

// Builds one function's local PSG vertex by vertex; vertex 0 is the function.
class Fn {
public:
  Fn(const std::string &key, const std::string &file, uint32_t line, uint32_t end_line) {
    f_.key = key;
    f_.name = key;
    f_.linkage = "external";
    f_.module = file;
    f_.language = "c";
    f_.hash = scalana_function_hash(key.data(), key.size());
    f_.loc = {file, line, end_line, 0};
    LocalVertex root;
    root.kind = VertexKind::Function;
    root.loc = f_.loc;
    f_.vertices.push_back(root);
  }
  uint32_t Loop(uint32_t parent, uint32_t line, uint32_t end_line, int32_t arm = -1) {
    return Add(VertexKind::Loop, parent, line, end_line, arm);
  }
  uint32_t Branch(uint32_t parent, uint32_t line, uint32_t end_line, int32_t arm = -1) {
    return Add(VertexKind::Branch, parent, line, end_line, arm);
  }
  uint32_t Mpi(uint32_t parent, const std::string &op, uint32_t line, int32_t arm = -1,
               MpiClass cls = MpiClass::Collective) {
    uint32_t v = Add(VertexKind::Mpi, parent, line, line, arm);
    f_.vertices[v].mpi_op = op;
    f_.vertices[v].mpi_class = cls;
    return v;
  }
  uint32_t Call(uint32_t parent, const std::string &callee, uint32_t line, int32_t arm = -1) {
    uint32_t v = Add(VertexKind::Call, parent, line, line, arm);
    f_.vertices[v].callee = callee;
    return v;
  }
  // An OpenMP construct's call of its outlined body (DIRECTIVE: the
  // directive's line where the call has another, as flang's).
  uint32_t Region(uint32_t parent, OmpRegion region, const std::string &body, uint32_t line,
                  uint32_t directive = 0) {
    uint32_t v = Call(parent, body, line);
    f_.vertices[v].region = region;
    f_.vertices[v].directive_line = directive;
    return v;
  }
  // Marks the function the outlined body of a construct.
  Fn &Outlined(OmpRegion region) {
    f_.outlined = region;
    return *this;
  }
  Fn &Worksharing(uint32_t loop, scalana::Worksharing kind) {
    f_.vertices[loop].worksharing = kind;
    return *this;
  }
  uint32_t Indirect(uint32_t parent, uint32_t line, int32_t arm = -1) {
    uint32_t v = Add(VertexKind::Call, parent, line, line, arm);
    f_.vertices[v].indirect = true;
    return v;
  }
  uint64_t Id(uint32_t local) const { return scalana_vertex_id(f_.hash, local); }
  const LocalPsg &psg() const { return f_; }
  operator LocalPsg() const { return f_; }

private:
  uint32_t Add(VertexKind k, uint32_t parent, uint32_t line, uint32_t end_line, int32_t arm) {
    LocalVertex v;
    v.local = uint32_t(f_.vertices.size());
    v.kind = k;
    v.parent = int32_t(parent);
    v.arm = arm;
    v.loc = {"", line, end_line, 0};
    uint32_t depth = 0;
    for (int32_t p = int32_t(parent); p >= 0; p = f_.vertices[size_t(p)].parent)
      if (f_.vertices[size_t(p)].kind == VertexKind::Loop)
        ++depth;
    v.loop_depth = k == VertexKind::Loop ? depth + 1 : 0;
    f_.vertices[parent].children.push_back(v.local);
    f_.vertices.push_back(v);
    return v.local;
  }
  LocalPsg f_;
};

// The tree lines of ToText: without the header and the summary line.
inline std::string Tree(const Psg &psg) {
  std::istringstream in(psg.ToText());
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("PSG of ", 0) != 0 && line.rfind("summary: ", 0) != 0)
      out += line + "\n";
  return out;
}

inline std::string SummaryLine(const Psg &psg) {
  std::istringstream in(psg.ToText());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("summary: ", 0) == 0)
      return line;
  return "";
}

// The paper's Fig. 4(c): the Fig. 3 program contracted with MaxLoopDepth=1,
// whether its PSG was built in memory or parsed from section bytes.
inline constexpr const char *kFig3MaxLoopDepth1 = "Root main fig3.c:20-36\n"
                                                  "  MPI MPI_Init fig3.c:22\n"
                                                  "  Loop fig3.c:25-34\n"
                                                  "    Comp fig3.c:27-30\n"
                                                  "    Branch fig3.c:12-15 (in foo)\n"
                                                  "      MPI MPI_Send fig3.c:13 (arm 0) (in foo)\n"
                                                  "      MPI MPI_Recv fig3.c:15 (arm 1) (in foo)\n"
                                                  "    MPI MPI_Bcast fig3.c:32\n"
                                                  "  MPI MPI_Finalize fig3.c:35\n";

} // namespace scalana::test
