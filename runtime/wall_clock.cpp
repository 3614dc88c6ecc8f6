// WallClock's choice of source and its calibration (wall_clock.h).
#include "wall_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

namespace scalana::rt {

bool KernelKeepsTimeWithTsc() {
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char name[32] = {};
  ssize_t n = read(fd, name, sizeof name - 1);
  close(fd);
  return n >= 3 && strncmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}

void WallClock::Calibrate() {
#if defined(__x86_64__)
  if (!KernelKeepsTimeWithTsc())
    return;
  // Each pair read back to back: the error is two clock reads (~50 ns) over
  // the interval, 5e-5 of it.
  uint64_t ns0 = MonotonicNs(), tsc0 = __rdtsc();
  uint64_t ns1 = ns0, tsc1 = tsc0;
  while (ns1 - ns0 < 1000000) {
    struct timespec nap = {0, long(1000000 - (ns1 - ns0))};
    nanosleep(&nap, nullptr); // interrupted by a signal: the loop goes on
    ns1 = MonotonicNs();
    tsc1 = __rdtsc();
  }
  if (tsc1 <= tsc0)
    return;
  ns_per_tick_q32_ = uint64_t(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0));
  tsc_ = ns_per_tick_q32_ != 0;
#endif
}

} // namespace scalana::rt
