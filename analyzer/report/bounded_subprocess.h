// Runs another program under a time limit and with its output bounded: the
// program is named by the user's environment (SCALANA_DOT) and may hang, loop
// or print without end; the analysis must finish all the same.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace scalana {

struct SubprocessLimits {
  double timeout_seconds = 30;       // from the start to its exit
  size_t max_output_bytes = 8 << 20; // of its standard output
};

struct SubprocessResult {
  enum class End { Exited, Signaled, TimedOut, OutputTooLarge, NotStarted };
  End end = End::NotStarted;
  int code = 0;        // the exit status (Exited) or the signal (Signaled)
  std::string output;  // its standard output; empty unless it Exited
  std::string error;   // why it did not start (NotStarted)
  int start_errno = 0; // and the errno that said so, when one did

  bool ok() const { return end == End::Exited && code == 0; }
};

// Runs ARGV (ARGV[0] looked up on PATH) with INPUT on its standard input,
// standard error discarded, in a process group of its own. After
// LIMITS.timeout_seconds, or as soon as its output passes
// LIMITS.max_output_bytes, the whole group is killed (SIGKILL): no child it
// started outlives it either. It is killed too when this process dies
// (PR_SET_PDEATHSIG; so call it from a thread that lives until it returns).
SubprocessResult RunBoundedSubprocess(const std::vector<std::string> &argv,
                                      const std::string &input, const SubprocessLimits &limits);

// "exit code 3", "killed by signal 9 (Killed)", "gave no answer in 30 s",
// "printed more than 8388608 bytes", or why it did not start.
std::string DescribeSubprocessEnd(const SubprocessResult &r, const SubprocessLimits &limits);

} // namespace scalana
