#include "time_lines.h"

#include <algorithm>
#include <cstdio>

namespace scalana {

void PrintRankTime(const RankData &r) {
  if (r.on_cpu > 0 || r.run_delay > 0) {
    double blocked = std::max(0.0, r.wall_time - r.on_cpu - r.run_delay);
    std::printf("   time      main thread: on a CPU %.3f s, runnable but not running %.3f s, "
                "blocked %.3f s (the kernel's account of its %.3f s wall)",
                r.on_cpu, r.run_delay, blocked, r.wall_time);
    if (r.cores > 0)
      std::printf("; host CPUs %d", r.cores);
    std::printf("\n");
  } else {
    std::printf("   time      main thread: not measured (no /proc schedstat, or a profile "
                "written before it was kept)\n");
  }
  if (r.thread_info.empty())
    return;
  std::printf("   %-7s %4s %9s %9s %11s %9s\n", "thread", "omp", "samples", "cpu s",
              "run delay s", "wall s");
  for (const ThreadInfo &t : r.thread_info) {
    char omp[16] = "-";
    if (t.omp_thread >= 0)
      std::snprintf(omp, sizeof omp, "%d", t.omp_thread);
    std::printf("   %-7u %4s %9llu %9.3f %11.3f %9.3f\n", t.index, omp,
                (unsigned long long)t.samples, t.cpu_seconds, t.run_delay, t.wall_seconds);
  }
}

} // namespace scalana
