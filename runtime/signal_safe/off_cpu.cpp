// The off-CPU source: where a thread was when it left the CPU, and for how
// long it was off it (docs/contexts.md, "Time off the CPU").
//
// Each thread has a perf software event that counts its context switches,
// one overflow each, signalling by SIGTRAP (attr.sigtrap). The kernel queues
// that signal as task work at the switch out, and task work runs only when
// the thread returns to user mode: after it is back on a CPU and after the
// system call or page fault it blocked in is over. So the handler runs at
// the very instruction the thread blocked at, with its stack, and no call
// of the program is interrupted (no EINTR: measured, 200 nanosleeps of 1 ms
// all complete). The time since its previous return, less the CPU time the
// kernel's account gives for it, is the time it was off; the run delay
// that grew meanwhile is the part it waited for a core.
//
// Hazards, and why they are safe:
//  - Runs in the sampling handler (Sampler().signal is SIGTRAP whenever this
//    source runs): only clock_gettime, a pread of the thread's schedstat
//    (kept open: an open in a handler would shift the numbers the program's
//    other threads open meanwhile) and the table insert of thread_samples.
//  - Inside a wrapped call (MPI, I/O) or an OpenMP wait the time off is the
//    call's or the wait's, already timed: the handler only marks the thread
//    (switch_paused), and the call's or the wait's end measures from there
//    (ResumeOffCpu). The event is never disabled there: after an
//    ioctl(PERF_EVENT_IOC_DISABLE) and ENABLE this kernel (6.18) signalled
//    in the code that ran next (10 sleeps, each followed by the two ioctls:
//    50 of 60 signals came in the compute loop after them, 1 of 11 without).
//  - SIGTRAP is not queued: while the CPU event's is pending, the kernel
//    drops ours. Both would have come at the same instruction, so each CPU
//    sample also looks for time off the CPU since the marks
//    (AfterCpuSample), cheaply first: the wall clock since the marks less
//    the CPU time the samples booked since.
//  - Kernel mode must be counted (a switch happens in the kernel: with
//    exclude_kernel the event never fires), so it needs root, CAP_PERFMON or
//    perf_event_paranoid <= 1; where refused, the source is off and says so.
#include "../runtime.h"
#include "../wall_clock.h"
#include "schedstat.h"
#include "signal_safe_entry.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scalana::rt {

namespace {
// The marks a return to the CPU is measured from: now.
bool MarkSwitchNow(ThreadSamples *t) {
  SchedTimes st;
  if (!ReadSchedTimesFrom(t->schedstat_fd, &st))
    return false;
  t->switch_wall_ns = MonotonicNs();
  t->switch_on_cpu_ns = st.on_cpu_ns;
  t->switch_delay_ns = st.run_delay_ns;
  t->switch_sampled_ns = 0;
  return true;
}
} // namespace

bool OpenSwitchEvent(ThreadSamples *t, int *err) {
  // Opened enabled (no ioctl: see the top).
  *err = 0;
  if (!TakeDescriptors(t, 2)) // the event and the thread's schedstat
    return false;
  struct perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  a.sample_period = 1;
  a.exclude_hv = 1;
  a.sigtrap = 1;
  a.remove_on_exec = 1; // required with sigtrap
  a.sig_data = kSwitchSigData;
  int fd = int(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    *err = errno;
    GiveDescriptors(t, 2);
    return false;
  }
  fd = MovedAboveProgram(fd, true);
  int sched = OpenSchedTimes();
  if (sched >= 0)
    sched = MovedAboveProgram(sched, true);
  t->schedstat_fd = sched;
  if (sched < 0 || !MarkSwitchNow(t)) { // no schedstat: nothing to measure from
    *err = ENOENT;
    if (sched >= 0)
      close(sched);
    t->schedstat_fd = -1;
    close(fd);
    GiveDescriptors(t, 2);
    return false;
  }
  MarkOwnDescriptor(sched, true);
  t->switch_fd = fd;
  MarkOwnDescriptor(fd, true);
  return true;
}

void CloseSwitchEvent(ThreadSamples *t) {
  int fd = t->switch_fd;
  if (fd < 0)
    return;
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  t->switch_fd = -1; // before close: a late signal no longer matches it
  CloseOwnDescriptor(fd);
  CloseOwnDescriptor(t->schedstat_fd);
  t->schedstat_fd = -1;
  GiveDescriptors(t, 2);
}

void OnReturnToCpu(ThreadSamples *t, uintptr_t pc, uintptr_t sp) {
  if (t->mpi_frames_length || t->omp_wait || t->switch_paused) {
    // The call's or the wait's time: measured from its end (see the top).
    t->switch_paused = 1;
    return;
  }
  const uint64_t wall0 = t->switch_wall_ns, cpu0 = t->switch_on_cpu_ns, delay0 = t->switch_delay_ns;
  if (!MarkSwitchNow(t))
    return;
  const uint64_t wall = t->switch_wall_ns - wall0;
  const uint64_t cpu = t->switch_on_cpu_ns > cpu0 ? t->switch_on_cpu_ns - cpu0 : 0;
  const uint64_t off = wall > cpu ? wall - cpu : 0;
  uint64_t delay = t->switch_delay_ns > delay0 ? t->switch_delay_ns - delay0 : 0;
  if (delay > off)
    delay = off;
  if (!off)
    return;
  // Pending while the program had SIGTRAP blocked: delivered where it
  // unblocked, not where the time went.
  if (t->mask_changing || !g_sampling_enabled.load(std::memory_order_relaxed) ||
      !RecordOffCpu(t, pc, sp, off - delay, delay))
    t->off_cpu_unplaced_ns += off;
}

void AfterCpuSample(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t cpu_ns) {
  t->switch_sampled_ns += cpu_ns;
  // The samples book whole periods, so up to one period of CPU time is not
  // in switch_sampled_ns yet, and the kernel's account of a running thread
  // lags by up to a scheduler tick (4 ms at 250 Hz): only more off than two
  // periods and a tick is looked at.
  constexpr uint64_t kTickNs = 4000000;
  const uint64_t wall = MonotonicNs() - t->switch_wall_ns;
  if (wall > t->switch_sampled_ns + 2 * SamplePeriodNs() + kTickNs)
    OnReturnToCpu(t, pc, sp);
}

void ResumeSwitchEvent(ThreadSamples *t) {
  // The marks first: a switch between the two is then measured from here.
  MarkSwitchNow(t);
  t->switch_paused = 0;
}

} // namespace scalana::rt
