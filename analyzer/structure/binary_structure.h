// A Program Structure Graph recovered from a binary built without the
// wrappers (docs/psg.md, "Structure from the binary"): functions, inlined
// call chains and lines from DWARF; loops from the machine code's backward
// branches; calls, MPI and I/O call sites from direct calls and the PLT.
// What it lacks against the pass's PSG: branch vertices, OpenMP constructs,
// candidates of indirect calls.
#pragma once

#include "psg.h"

#include <cstdint>
#include <string>
#include <vector>

namespace scalana {

// What RecoverStructure found, for the report to say.
struct RecoveredStructure {
  std::vector<uint8_t> records; // `scalana_psg` records, as the pass writes them
  uint64_t functions = 0, loops = 0, calls = 0, mpi_calls = 0;
  uint64_t functions_without_lines = 0; // symbols of code with no line table
};

// Reads OBJECT (an ELF executable or shared object) in this process: LLVM's
// object, DWARF and disassembler readers, which hostile input can crash.
// Throws Error when it cannot be read or holds no function with lines.
RecoveredStructure RecoverStructureHere(const std::string &object);

// The same in a child process, so a crash or a hang (TIMEOUT_SECONDS) is an
// Error naming what happened, not the end of the analysis.
RecoveredStructure RecoverStructure(const std::string &object, double timeout_seconds = 300);

// The sentence the report prints for a structure recovered so.
std::string RecoveredStructureText(const RecoveredStructure &s);

// BINARY's structure as the tools use it: the PSG the wrappers recorded in
// it and in LIBRARIES (Psg::LoadFromObjects), or, for an executable without
// one whose runs loaded no library with one, the structure recovered from
// the binary (Psg::structure_source() says so). Throws Error.
Psg LoadProgramStructure(const std::string &binary, const std::vector<std::string> &libraries,
                         const PsgOptions &opts = {});

} // namespace scalana
