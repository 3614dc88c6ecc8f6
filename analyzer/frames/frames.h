// From recorded frames to PSG contexts: the offline half of calling-context
// attribution (docs/detect.md, "From frames to vertices").
//
// The runtime records each calling context as the program's frames (the
// executable's and those of shared objects built with the wrappers)
// (include/scalana/profile.h). Here every frame is symbolized through the
// binary's line tables, including DWARF inlined-subroutine frames, so code
// the compiler inlined from a call site is credited to that call site's
// context; the frames are then matched to PSG call sites (by function, line
// and column) and the innermost one to its innermost structural vertex.
#pragma once

#include "psg.h"
#include "scalana/profile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace scalana {

// One source-level frame: a function of the program at a line, outermost
// first. Physical frames expand into one of these per inlined call.
struct SourceFrame {
  int32_t function = -1; // index into Psg::functions(), -1: no PSG record
  std::string name;      // linkage name as the debug information gives it
  std::string file;
  uint32_t line = 0, column = 0;
};

struct FrameStats {
  // No lookup found a line (the symbols may still name the functions).
  bool no_line_tables = false;
  // Functions met on stacks with no PSG record (compiled without the
  // wrappers, or library code linked into the executable), by frames seen.
  std::map<std::string, uint64_t> unrecorded_functions;
  // Frames of a shared object the PSG was not loaded with (none when the
  // PSG comes from LoadFromObjects over the profile's meta.modules).
  uint64_t frames_of_unknown_modules = 0;
  // Interrupted instructions on line 0 given the line of the instruction
  // before them (frames.cpp, FillLineZero).
  uint64_t line_zero_filled = 0;
  // MPI call sites whose line holds no call of the operation the wrapper
  // saw (line 0: calls the compiler merged): placed on the function's one
  // call of it; on the first of its several calls of it (approximate); or,
  // when the function has none, where the line tables say.
  uint64_t mpi_sites_by_operation = 0, mpi_sites_merged = 0, mpi_sites_without_vertex = 0;
  // Likewise call sites of the program's own functions on line 0: placed on
  // the function's one call of the next frame's function, or on the first
  // of its several calls of it (approximate).
  uint64_t call_sites_by_callee = 0, call_sites_merged = 0;
  // The child reading the debug information died or stopped answering
  // (debug_reader.h): why, the object it was reading, and what could not be
  // placed: distinct frames, and recorded contexts holding one (summed over
  // the profiles resolved).
  std::string debug_reader_failure, debug_reader_object;
  uint64_t unplaced_frames = 0, unplaced_contexts = 0;
  // Recorded contexts none of whose frames the debug information names (no
  // symbol, no line: a stripped object): they become UnplacedContext(), and
  // their samples are counted here (summed over the profiles resolved).
  uint64_t unnamed_contexts = 0, unnamed_samples = 0;
  // Lookups of addresses in the executable, and those that found neither a
  // name nor a line: when they are all such, it has no symbols.
  uint64_t executable_lookups = 0, executable_unnamed = 0;
  bool NoSymbols() const { return executable_lookups && executable_unnamed == executable_lookups; }
  // An object with a debug or symbol section lying past its end, that
  // section and where (DamagedDebugSection); empty when none.
  std::string damaged_section;
};

// The warning for a failed debug-information reader, or "" when it worked.
std::string DebugReaderWarning(const FrameStats &stats, const std::string &binary);

// The PSG context given to a recorded context whose frames have no symbol:
// its rows are the run's unplaced samples (Run::unplaced_samples), neither
// time outside the program nor a context that does not fit the PSG.
const Context &UnplacedContext();
inline bool IsUnplacedContext(const Context &c) { return c == UnplacedContext(); }

// "OBJECT: damaged or truncated file: section .debug_line (1277 bytes at
// offset 32440) ends past the end of the file (28344 bytes)" for the first
// .debug_*, .zdebug_*, .symtab or .strtab section of OBJECT that does not
// fit in it; "" when all fit (or it is no ELF file: reported elsewhere).
std::string DamagedDebugSection(const std::string &object);

// What the frames' debug information lacked, as warnings for the command
// to print: a damaged section; a binary without symbols ("no symbols: N
// samples could not be placed", with what to rebuild; BUILD_ID, the
// binary's, names its separate debug file); or one without line tables.
std::vector<std::string> DebugInfoWarnings(const FrameStats &stats, const std::string &binary,
                                           const std::string &build_id);

class FrameResolver {
public:
  // Symbolizes against BINARY (the profiled executable) and the shared
  // objects PSG was loaded with (Psg::libraries). Throws Error when it
  // cannot be read.
  FrameResolver(const Psg &psg, const std::string &binary);
  ~FrameResolver();
  FrameResolver(const FrameResolver &) = delete;
  FrameResolver &operator=(const FrameResolver &) = delete;

  // The source frames of a recorded context, outermost first. Frames of
  // shared objects are read as the last profile given to ResolveProfile
  // numbers its modules.
  std::vector<SourceFrame> Symbolize(const Context &frames);
  // The PSG context (call-site raw ids..., vertex raw id) of a recorded
  // context; empty when no frame belongs to a function with a PSG record.
  // MPI_OP: the operation of the MPI row the context is of, if any.
  Context ToPsgContext(const Context &frames, const std::string &mpi_op = {});

  // Replaces PROFILE's recorded contexts by PSG contexts, merging the rows of
  // recorded contexts that map to the same PSG context. A context with no
  // frame of the program becomes the empty context (samples outside the
  // program: MPI progress threads, library start-up).
  void ResolveProfile(Profile &profile);

  const FrameStats &stats() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace scalana
