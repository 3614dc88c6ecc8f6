// The sampling signal handlers. Hazards and why they are safe:
//  - They may interrupt any code, including malloc, stdio and lock holders in
//    this very thread: they call only RecordSample (libunwind's local
//    unwinder and plain stores into the thread's pre-mapped table; see
//    thread_samples.cpp), timer_getoverrun (a syscall) and PAPI_read (reads
//    the thread's counters; PAPI's own overflow dispatch runs it in signal
//    context too).
//  - errno is saved and restored: the interrupted code may be between a
//    failing call and its errno check.
//  - The thread's table is found through initial-exec TLS, which is a plain
//    %fs-relative load (general-dynamic TLS may call __tls_get_addr, which can
//    allocate on first use).
#include "../runtime.h"
#include "signal_safe_entry.h"

#include <cerrno>
#include <papi.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>

namespace scalana::rt {

namespace {
// The interrupted instruction, from the signal's saved registers.
uintptr_t InterruptedPc(void *ucontext) {
  if (!ucontext)
    return 0;
  const auto *uc = static_cast<const ucontext_t *>(ucontext);
#if defined(__x86_64__)
  return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uintptr_t(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}
} // namespace

__thread ThreadSamples *tls_samples __attribute__((tls_model("initial-exec"))) = nullptr;

void ItimerSignalHandler(int, siginfo_t *, void *ucontext) {
  int saved_errno = errno;
  ThreadSamples *t = tls_samples;
  if (t && g_sampling_enabled.load(std::memory_order_relaxed)) {
    // CPU-time timers fire at kernel ticks; overruns say how many periods
    // elapsed since the last delivery, so CPU time stays right when capped.
    int overrun = t->posix_timer ? timer_getoverrun(static_cast<timer_t>(t->posix_timer)) : 0;
    RecordSample(t, InterruptedPc(ucontext), 1 + uint64_t(overrun > 0 ? overrun : 0), nullptr);
  }
  errno = saved_errno;
}

void PapiOverflowHandler(int event_set, void *address, long long, void *) {
  int saved_errno = errno;
  ThreadSamples *t = tls_samples;
  if (t && g_sampling_enabled.load(std::memory_order_relaxed)) {
    const long long *deltas = nullptr;
    if (t->counter_count > 0 && PAPI_read(event_set, t->read_buffer) == PAPI_OK) {
      // Deltas in place: read_buffer becomes the delta, last_counters the reading.
      for (int c = 0; c < t->counter_count; ++c) {
        long long now = t->read_buffer[c];
        t->read_buffer[c] = now - t->last_counters[c];
        t->last_counters[c] = now;
      }
      deltas = t->read_buffer;
    }
    RecordSample(t, uintptr_t(address), 1, deltas);
  }
  errno = saved_errno;
}

} // namespace scalana::rt
