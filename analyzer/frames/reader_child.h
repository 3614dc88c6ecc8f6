// A child process for a reader of untrusted files (the binary a profile
// names): LLVM's object, DWARF and disassembler readers are not built for
// hostile input, so they run where a crash or a hang ends only the child
// (debug_reader.cpp, analyzer/structure/structure_child.cpp).
#pragma once

#include <llvm/DebugInfo/Symbolize/Symbolize.h>

#include <sys/types.h>

#include <string>

namespace scalana {

// fork() with every signal blocked across it (a handler that allocates
// while fork holds the allocator's locks would deadlock), and in the child:
// death with the parent, the fault signals at their defaults (a fault in
// LLVM ends the child, whatever handlers the parent installed), no core
// file, no sanitizer death callback. The result is fork's.
pid_t ForkReaderChild();

// "was killed by signal 11 (Segmentation fault)", "exited with status 3".
std::string DescribeChildStatus(int status);

// The symbolizer both readers use, so that the lines and names the
// structure is recovered with are those recorded frames are matched with.
llvm::symbolize::LLVMSymbolizer::Options ReaderSymbolizerOptions();

} // namespace scalana
