// The kernel's own account of a thread's time (/proc/<pid>/task/<tid>/
// schedstat): nanoseconds on a CPU and nanoseconds runnable but waiting for
// one (run delay: cores shared with other ranks or a noisy node). With the
// thread's lifetime on the wall clock this splits it exactly into on CPU,
// runnable and blocked (docs/runtime.md, "Time accounting").
#pragma once

#include <stdint.h>

namespace scalana::rt {

struct SchedTimes {
  uint64_t on_cpu_ns = 0, run_delay_ns = 0;
};

// Reads the calling thread's times (TID 0) or those of thread TID of this
// process. False when the file is missing (a kernel without schedstats) or
// the thread is gone. Async-signal-safe: open, read and close on a stack
// buffer, no allocation, errno preserved.
bool ReadSchedTimes(int tid, SchedTimes *out);
// The calling thread's schedstat kept open (-1 on failure), and a read of
// it from the start: one pread where ReadSchedTimes opens and closes, and
// no descriptor of the program's numbers taken while it runs (a handler's
// open would shift what the program's other threads open meanwhile).
int OpenSchedTimes();
bool ReadSchedTimesFrom(int fd, SchedTimes *out);

} // namespace scalana::rt
