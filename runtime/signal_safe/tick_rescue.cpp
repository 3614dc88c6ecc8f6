// Moving a thread the scheduler tick starves from the CPU-time timer to the
// perf source (docs/contexts.md, "Sampling"). A POSIX CPU-time timer is
// checked at the tick, for the thread running then; where threads share a
// core and one of them runs in bursts shorter than a tick (an OpenMP worker
// with less work than the master, waiting at each region's barrier), it is
// seldom the one running at the tick and gets a few samples where the others
// get hundreds. Its time is not lost (each sample carries the CPU time since
// the one before), but the evidence of where it went is. The perf event's
// own timer runs while the thread runs, so it is not starved; it costs a
// timer interrupt per sample, so only the starved threads take it, at the
// rate the tick would have given.
//
// Async-signal-safe: called from the sampling handler and from the OMPT
// callbacks, always on the thread itself.
#include "../runtime.h"

#include <atomic>
#include <time.h>

namespace scalana::rt {

namespace {
// The thread's CPU time before its rate is judged: below it, a few samples
// more or less decide nothing.
constexpr uint64_t kJudgeAfterNs = 20'000'000;
// The tick's period on most kernels (250 Hz); the rescued thread's rate is
// the asked one up to it, as the timer would give on an idle core.
constexpr uint64_t kTickNs = 4'000'000;

// The best rate a thread of this process obtained, in samples per 1000 CPU
// seconds; a thread far below it is starved by the tick, one near it is
// merely on a shared machine (then every thread's rate is low together, and
// moving them all to perf would cost its interrupt at every context switch).
std::atomic<uint64_t> g_best_rate{0};
} // namespace

void RescueFromTick(ThreadSamples *t, uint64_t now_cpu_ns) {
  if (!Sampler().tick_rescue || t->tick_rescue != 0 || !t->has_timer || t->perf_fd >= 0 ||
      t->signal_blocked || now_cpu_ns < t->start_cpu_ns + t->blocked_ns)
    return;
  // The time the program had the signal blocked had no chance of a sample:
  // a thread that blocked it is not starved for that.
  uint64_t cpu_ns = now_cpu_ns - t->start_cpu_ns - t->blocked_ns;
  if (cpu_ns < kJudgeAfterNs)
    return;
  // Claimed before judging: a sample arriving while an OMPT callback judges
  // must not open a second event (its handler sees 3 and leaves).
  t->tick_rescue = 3;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint64_t rate = uint64_t(double(t->samples) * 1e12 / double(cpu_ns));
  uint64_t best = g_best_rate.load(std::memory_order_relaxed);
  while (rate > best && !g_best_rate.compare_exchange_weak(best, rate))
    ;
  // Half the best: starved OpenMP workers were measured at 1-83% of their
  // master's rate (1-3% with the cores loaded), while threads that merely
  // share cores with other work are slowed alike.
  if (rate * 2 >= best) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t->tick_rescue = 0;
    return;
  }
  uint64_t period_ns = SamplePeriodNs();
  PerfFailure failure;
  if (!OpenPerfEvent(t, period_ns > kTickNs ? period_ns : kTickNs, &failure)) {
    t->tick_rescue = 2; // stays on the timer; tried once
    return;
  }
  // The perf event is armed: the timer goes. A signal of it still in flight
  // is ours by its tag and counts as a sample like any other.
  timer_t timer = static_cast<timer_t>(t->posix_timer);
  t->has_timer = 0;
  t->posix_timer = nullptr;
  timer_delete(timer);
  t->tick_rescue = 1;
}

} // namespace scalana::rt
