// What the structure recovery reads from one function of the binary: its
// decoded instructions, each one's chain of inlined frames, and the loops
// its branches close (binary_structure.cpp, machine_loops.cpp).
#pragma once

#include "binary_structure.h"
#include "scalana/psg_format.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scalana::structure {

struct Insn {
  uint64_t addr = 0, target = 0;
  uint32_t size = 0;
  bool call = false;
  bool branch = false;      // a jump (not a call or return)
  bool conditional = false; // a jump that may fall through
  bool ret = false;         // a return (no successor in the function)
  bool has_target = false;  // target known (a direct call or jump)
  bool nop = false;         // a no-op (alignment padding)
};

struct Frame {
  std::string name, file;
  uint32_t line = 0, column = 0;
};

// Line ranges of one function's code by file, of which the one with the
// most rows is the function's own: GCC leaves rows of code it inlined
// without an inlined-subroutine entry (LULESH's SQRT, lulesh.h:45, inside
// EvalEOSForElems), which would stretch a range over the file. (The
// symbolizer gives no declaration file for GCC's DWARF 5.)
struct LineSpan {
  struct Range {
    uint64_t rows = 0;
    uint32_t first = UINT32_MAX, last = 0;
  };
  std::vector<std::pair<std::string, Range>> by_file;
  void Add(const std::string &file, uint32_t line);
  // The own file and its range (empty file when nothing was added).
  std::pair<std::string, Range> Own() const;
};
using Chain = std::vector<Frame>; // outermost first

struct Loop {
  uint64_t header = 0;                               // the back edges' target
  std::vector<std::pair<uint64_t, uint64_t>> ranges; // its blocks' [start, end), sorted
  uint64_t bytes = 0;                                // their total size
  size_t level = 0; // index in the chains of the function it belongs to
  std::string fn;
  uint32_t line = UINT32_MAX, end_line = 0;
  int parent = -1; // index of the enclosing loop of the same function and level
  int vertex = -1; // its vertex in the function's record
  bool Contains(uint64_t addr) const;
};

// One vertex of a function's record, as the pass writes it.
struct RecVertex {
  VertexKind kind = VertexKind::Loop;
  int parent = 0;
  uint32_t line = 0, end_line = 0, column = 0, depth = 0;
  std::string callee, op;
  MpiClass cls = MpiClass::None;
  bool indirect = false;
  std::vector<int> children;
};

struct Record {
  std::string language = "unknown";
  LineSpan lines;
  std::vector<RecVertex> v{RecVertex{VertexKind::Function, -1}};
  std::map<std::string, int> seen; // dedup key -> vertex
};

// The records of every function, as the `scalana_psg` section holds them
// (one per language), appended to OUT's records; OBJECT names their module.
void WriteRecords(std::map<std::string, Record> &records, const std::string &object,
                  RecoveredStructure *out);

// The natural loops of the function [BEGIN, END) whose instructions are CODE
// (in address order) with CHAINS (one per instruction, empty: no line).
std::vector<Loop> FindLoops(const std::vector<Insn> &code, const std::vector<Chain> &chains,
                            uint64_t begin, uint64_t end);

} // namespace scalana::structure
