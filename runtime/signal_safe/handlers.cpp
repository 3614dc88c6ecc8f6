// The sampling signal handler. Hazards and why they are safe:
//  - It may interrupt any code, including malloc, stdio and lock holders in
//    this very thread: it calls only RecordSample (libunwind's local unwinder
//    and plain stores into the thread's pre-mapped table; see
//    thread_samples.cpp), clock_gettime, read, ioctl (syscalls) and PAPI_read
//    (reads the thread's counting event set; PAPI's own overflow dispatch
//    runs it in signal context too).
//  - errno is saved and restored: the interrupted code may be between a
//    failing call and its errno check.
//  - The thread's table is found through initial-exec TLS, which is a plain
//    %fs-relative load (general-dynamic TLS may call __tls_get_addr, which can
//    allocate on first use).
//  - The signal number may also be the program's: a signal that is not one
//    of our timer's or our perf event's goes to the program's own handler.
#include "../runtime.h"
#include "signal_safe_entry.h"

#include <cerrno>
#include <linux/perf_event.h>
#include <papi.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <ucontext.h>

#ifndef TRAP_PERF
#define TRAP_PERF 6 // linux/asm-generic/siginfo.h, Linux 5.13
#endif

namespace scalana::rt {

namespace {
// The interrupted stack pointer, from the signal's saved registers; 0 where
// unknown.
uintptr_t InterruptedSp(void *ucontext) {
  if (!ucontext)
    return 0;
  const auto *uc = static_cast<const ucontext_t *>(ucontext);
#if defined(__x86_64__)
  return uintptr_t(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return uintptr_t(uc->uc_mcontext.sp);
#else
  (void)uc;
  return 0;
#endif
}

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

// A signal of ours carries proof of where it came from: our POSIX timer's
// value, our perf event's descriptor (O_ASYNC) or its sig_data (SIGTRAP).
// kill(), sigqueue() and the program's own timers on the same number carry
// neither.
enum class Origin { Ours, Switch, Late, Program };
Origin OriginOf(int sig, const ThreadSamples *t, const siginfo_t *si) {
  if (!si)
    return Origin::Program;
  if (si->si_code == SI_TIMER && si->si_value.sival_ptr == SamplingTimerTag())
    return t ? Origin::Ours : Origin::Late;
  if (sig == SIGTRAP && si->si_code == TRAP_PERF && PerfSigData(si) == kPerfSigData)
    // Our perf event's mark: never the program's, even once the event is gone.
    return t && (t->perf_fd >= 0 || t->perf_inherited) ? Origin::Ours : Origin::Late;
  if (sig == SIGTRAP && si->si_code == TRAP_PERF && PerfSigData(si) == kSwitchSigData)
    // The off-CPU source's: the thread is back on a CPU (off_cpu.cpp).
    return t && t->switch_fd >= 0 ? Origin::Switch : Origin::Late;
  // SIGTRAP's codes share numbers with the poll ones (TRAP_BRKPT is POLL_IN):
  // a SIGTRAP not marked as ours above is the program's.
  if (sig != SIGTRAP && (si->si_code == POLL_HUP || si->si_code == POLL_IN)) {
    if (t && t->perf_fd >= 0 && si->si_fd == t->perf_fd)
      return Origin::Ours;
    // An event closed while its signal was in flight: the program never
    // asked for this number unless it handles it, so it cannot be its own,
    // and its default action would end the process.
    if (!ProgramHandlesSamplingSignal())
      return Origin::Late;
  }
  return Origin::Program;
}

const long long *CounterDeltas(ThreadSamples *t) {
  if (t->counter_count <= 0 || PAPI_read(t->papi_eventset, t->read_buffer) != PAPI_OK)
    return nullptr;
  // Deltas in place: read_buffer becomes the delta, last_counters the reading.
  for (int c = 0; c < t->counter_count; ++c) {
    long long now = t->read_buffer[c];
    t->read_buffer[c] = now - t->last_counters[c];
    t->last_counters[c] = now;
  }
  return t->read_buffer;
}
} // namespace

__thread ThreadSamples *tls_samples __attribute__((tls_model("initial-exec"))) = nullptr;

void SampleSignalHandler(int sig, siginfo_t *si, void *ucontext) {
  int saved_errno = errno;
  ThreadSamples *t = tls_samples;
  Origin origin = OriginOf(sig, t, si);
  if (origin == Origin::Switch) {
    t->in_handler = 1;
    OnReturnToCpu(t, InterruptedPc(ucontext), InterruptedSp(ucontext));
    t->in_handler = 0;
    errno = saved_errno;
    return;
  }
  if (origin != Origin::Ours) {
    if (origin == Origin::Program)
      ForwardToProgram(sig, si, ucontext);
    errno = saved_errno;
    return;
  }
  if (g_sampling_enabled.load(std::memory_order_relaxed)) {
    uint64_t spent = CpuSinceLastSample(t); // not the CPU clock where perf samples: see there
    if (t->mask_changing)
      ++t->blocked_samples; // pending since the program blocked it: see blocked_samples
    else {
      t->in_handler = 1;
      RecordSample(t, InterruptedPc(ucontext), InterruptedSp(ucontext), spent, CounterDeltas(t));
      if (t->switch_fd >= 0)
        AfterCpuSample(t, InterruptedPc(ucontext), InterruptedSp(ucontext), spent);
      t->in_handler = 0;
    }
  }
  // An O_ASYNC perf event disables itself at each overflow
  // (PERF_EVENT_IOC_REFRESH with 1): re-armed here, so the handler's own
  // time is not sampled. A SIGTRAP one stays armed.
  if (t->perf_fd >= 0) {
    if (!Sampler().perf_sigtrap)
      ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
  } else if (t->has_timer && g_sampling_enabled.load(std::memory_order_relaxed))
    RescueFromTick(t, t->last_cpu_ns); // after the re-arm: its event comes armed
  errno = saved_errno;
}

} // namespace scalana::rt
