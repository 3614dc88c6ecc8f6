// The line tables and inlined-subroutine frames of the profiled objects, read
// in a child process (docs/detect.md, section 1).
//
// The binary a profile names is input like any file, and LLVM's object and
// DWARF readers are not built for hostile input: a flipped bit in
// .debug_line can crash them, a section header pointing past the end of the
// file ends in report_fatal_error (abort). So one child per reader holds the
// symbolizer and answers lookups over a pipe; if it dies or stops answering,
// the reader says why and every later lookup finds nothing, and the analysis
// goes on with the frames it could not place counted.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scalana {

// One frame of a looked-up address, innermost first as the symbolizer gives
// them; empty strings where the debug information has no name or file.
struct DebugFrame {
  std::string name, file;
  uint32_t line = 0, column = 0;
};

class DebugReader {
public:
  // OBJECTS: the files addresses are looked up in (index = object number).
  // TIMEOUT_SECONDS: how long one batch may go without an answer.
  explicit DebugReader(std::vector<std::string> objects, double timeout_seconds = 60);
  ~DebugReader();
  DebugReader(const DebugReader &) = delete;
  DebugReader &operator=(const DebugReader &) = delete;

  // The frames of each (object, address), in order. After the child failed
  // (failed()), the lookups it did not answer are empty.
  std::vector<std::vector<DebugFrame>>
  Lookup(const std::vector<std::pair<uint32_t, uint64_t>> &addresses);

  bool failed() const { return !failure_.empty(); }
  // Why the child stopped: "killed by signal 11 (Segmentation fault)",
  // LLVM's last message, "no answer in 60 s"... Empty while it works.
  const std::string &failure() const { return failure_; }
  // The object the child was reading when it failed (empty when unknown).
  const std::string &failed_object() const { return failed_object_; }
  uint64_t unanswered() const { return unanswered_; }

private:
  void Start();
  void Fail(const std::string &why, uint32_t object);
  bool ReadAll(void *buf, size_t n);

  std::vector<std::string> objects_;
  double timeout_;
  pid_t child_ = -1;
  int to_child_ = -1, from_child_ = -1, child_stderr_ = -1;
  std::string failure_, failed_object_;
  uint64_t unanswered_ = 0;
};

// The child's side, exposed for the fuzz target: answers requests read from
// IN on OUT until IN ends. Returns the exit status.
int ServeDebugLookups(const std::vector<std::string> &objects, int in, int out);

} // namespace scalana
