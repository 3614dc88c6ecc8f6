// The wall clock of the OMPT callbacks (ompt_tool.cpp), which read it about
// seven times per parallel region on each thread: on x86-64 the time-stamp
// counter, where the kernel keeps its own time with it (so it runs at a
// constant rate, through sleep states, and in step on all CPUs: a worker's
// reading is compared with the master's). An rdtsc costs 9.5 ns in this
// project's test VM where clock_gettime(CLOCK_MONOTONIC) costs 23 to 38 ns;
// CLOCK_MONOTONIC_COARSE is cheaper still but ticks every 4 ms, longer than
// most waits. Elsewhere, CLOCK_MONOTONIC. Readings are ticks, compared and
// subtracted as they are and turned into nanoseconds only as a difference.
#pragma once

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace scalana::rt {

// CLOCK_MONOTONIC in nanoseconds: the reference of both TSC clocks (the
// OMPT callbacks' and the MPI call clock in recorder.cpp) and their fallback.
inline uint64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Whether the kernel's clocksource is the TSC: it is only if the kernel
// found the counter invariant and synchronised across CPUs (a VM whose host
// cannot promise that gets kvm-clock or hpet). Reads sysfs: not for hot paths.
bool KernelKeepsTimeWithTsc();

class WallClock {
public:
  // Chooses the source and measures the counter's rate against
  // CLOCK_MONOTONIC over about a millisecond (the thread sleeps): once,
  // before the first Now().
  void Calibrate();
  uint64_t Now() const {
#if defined(__x86_64__)
    if (tsc_)
      return __rdtsc();
#endif
    return MonotonicNs();
  }
  uint64_t ToNs(uint64_t ticks) const {
    return tsc_ ? uint64_t((unsigned __int128)ticks * ns_per_tick_q32_ >> 32) : ticks;
  }
  uint64_t FromNs(uint64_t ns) const {
    return tsc_ ? uint64_t(((unsigned __int128)ns << 32) / ns_per_tick_q32_) : ns;
  }
  bool UsesTsc() const { return tsc_; }

private:
  bool tsc_ = false;
  uint64_t ns_per_tick_q32_ = uint64_t(1) << 32; // nanoseconds per tick, times 2^32
};

} // namespace scalana::rt
