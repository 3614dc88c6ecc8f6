// WallClock (runtime/wall_clock.h), the OMPT callbacks' clock: its ticks,
// turned into nanoseconds, must agree with CLOCK_MONOTONIC, since the waits
// and loops it times are reported as seconds of wall clock.
#include "wall_clock.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace scalana::rt {
namespace {

uint64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

TEST(WallClock, UsesTheTscExactlyWhereTheKernelDoes) {
  WallClock c;
  c.Calibrate();
  std::string source;
  std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> source;
#if defined(__x86_64__)
  EXPECT_EQ(c.UsesTsc(), source == "tsc") << source;
#else
  EXPECT_FALSE(c.UsesTsc());
#endif
}

TEST(WallClock, IntervalsAgreeWithClockMonotonic) {
  WallClock c;
  c.Calibrate();
  for (long ms : {2L, 50L}) {
    uint64_t ns0 = MonotonicNs(), t0 = c.Now();
    struct timespec nap = {0, ms * 1000000};
    nanosleep(&nap, nullptr);
    uint64_t t1 = c.Now(), ns1 = MonotonicNs();
    double want = double(ns1 - ns0), got = double(c.ToNs(t1 - t0));
    // The readings lie within the monotonic pair, so beyond an error of
    // rate (calibration's is 5e-5) the interval is shorter by the time
    // between paired reads: tens of ns, 20 us allowed for a preemption.
    EXPECT_LE(got, want * 1.001) << ms << " ms";
    EXPECT_GE(got, want * 0.999 - 20000) << ms << " ms";
  }
}

TEST(WallClock, ConversionsRoundTripAndDoNotOverflow) {
  WallClock c;
  c.Calibrate();
  const uint64_t hour_ns = 3600ull * 1000000000u;
  uint64_t ticks = c.FromNs(hour_ns);
  EXPECT_NEAR(double(c.ToNs(ticks)), double(hour_ns), 1e-6 * double(hour_ns));
  EXPECT_GT(c.FromNs(10'000'000), 0u);
}

} // namespace
} // namespace scalana::rt
