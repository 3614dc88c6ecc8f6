// The perf source's per-thread event and the descriptor budget it draws on.
// Async-signal-safe (system calls, atomics and stores only; no allocation):
// besides thread start, the sampling handler itself opens an event here for
// a thread the scheduler tick starves (tick_rescue.cpp).
#include "../runtime.h"
#include "signal_safe_entry.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace scalana::rt {

namespace {
// Descriptors held by every thread's perf event and counters together.
std::atomic<int> g_fds_held{0};
} // namespace

int DescriptorBudget() {
  // A sixteenth of the soft limit: the program's own open() must never fail
  // because of us (a thousand threads at `ulimit -n 1024` leave it 960).
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return 64;
  return int(lim.rlim_cur / 16 < (rlim_t(1) << 20) ? lim.rlim_cur / 16 : rlim_t(1) << 20);
}

bool TakeDescriptors(ThreadSamples *t, int n) {
  int budget = DescriptorBudget();
  int held = g_fds_held.load();
  do {
    if (held + n > budget)
      return false;
  } while (!g_fds_held.compare_exchange_weak(held, held + n));
  t->fds_held += n;
  return true;
}

void GiveDescriptors(ThreadSamples *t, int n) {
  g_fds_held.fetch_sub(n);
  t->fds_held -= n;
}

namespace {
void FillAttr(struct perf_event_attr *a, uint64_t period_ns, bool sigtrap) {
  std::memset(a, 0, sizeof *a);
  a->size = sizeof *a;
  a->type = PERF_TYPE_SOFTWARE;
  a->config = PERF_COUNT_SW_TASK_CLOCK; // this thread's CPU time, in ns
  a->sample_period = period_ns;
  a->disabled = 1;
  // Kernel-mode time (syscalls, sched_yield in MPI's waits) is CPU time too:
  // excluding it drops the samples that land there.
  a->exclude_kernel = Sampler().perf_exclude_kernel;
  a->exclude_hv = 1;
  if (sigtrap) {
    // The kernel sends SIGTRAP to the thread itself on its way back to user
    // mode (task work), where O_ASYNC goes through an interrupt-context
    // wakeup (irq_work) first: measured here, 20 us a sample against 44, the
    // difference between perf record's cost and twice it (docs/contexts.md).
    // The event also stays armed, so no ioctl per sample re-arms it.
    a->sigtrap = 1;
    a->remove_on_exec = 1; // required with sigtrap; exec() ends our sampling anyway
    a->sig_data = kPerfSigData;
  }
}

int OpenEvent(struct perf_event_attr *a) {
  int fd = int(syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0 && !a->exclude_kernel && (errno == EACCES || errno == EPERM)) {
    Sampler().perf_exclude_kernel = true; // perf_event_paranoid: user mode only
    a->exclude_kernel = 1;
    fd = int(syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  }
  return fd;
}
} // namespace

bool PerfSigtrapWorks() {
  // Before Linux 5.19 a SIGTRAP the program had blocked was forced through,
  // with the default action: the end of the process.
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2 ||
      major * 100 + minor < 519)
    return false;
  struct perf_event_attr a;
  FillAttr(&a, 1000000, true);
  int fd = OpenEvent(&a); // disabled: it never fires
  if (fd < 0)
    return false;
  close(fd);
  return true;
}

// One event for the process, inherited by its threads (inherit_thread: not
// by the processes it forks), instead of one per thread: the kernel then
// switches between two threads of the process by swapping their event
// contexts, which are clones, where with an event of its own each thread's
// hrtimer is cancelled and started again at every switch. Measured: one
// rank's two OpenMP threads sharing its core, a 4,096-element parallel loop
// a region, 4.6 us a region plain, 24 us with an event per thread, 5.1 under
// `perf record -g` (which inherits). A share of an inherited event cannot be
// read on its own (read() sums them all), so a sample stands for one period
// of its thread's CPU time; that holds only while every overflow becomes a
// sample, hence only where kernel mode is sampled too (with exclude_kernel an
// overflow in a system call is dropped and its period lost).
bool OpenProcessPerfEvent(ThreadSamples *t) {
  if (!Sampler().perf_sigtrap || Sampler().perf_exclude_kernel)
    return false;
  struct perf_event_attr a;
  FillAttr(&a, SamplePeriodNs(), true);
  a.inherit = 1;
  a.inherit_thread = 1;
  int fd = OpenEvent(&a);
  if (fd < 0 || a.exclude_kernel) { // kernel mode refused just now (paranoid)
    if (fd >= 0)
      close(fd);
    return false;
  }
  fd = MovedAboveProgram(fd, true);
  t->perf_inherited = 1;
  Sampler().perf_process_fd = fd;
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    Sampler().perf_process_fd = -1;
    t->perf_inherited = 0;
    close(fd);
    return false;
  }
  MarkOwnDescriptor(fd, true);
  return true;
}

void StopProcessPerfEvent() {
  int fd = Sampler().perf_process_fd;
  if (fd < 0)
    return;
  // On the parent, for every thread's share (the ioctl applies to its
  // children); the descriptor stays, so a late signal still finds the mark.
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

bool OpenPerfEvent(ThreadSamples *t, uint64_t period_ns, PerfFailure *failure) {
  *failure = PerfFailure{};
  if (!TakeDescriptors(t, 1)) {
    failure->call = "descriptor budget spent";
    return false;
  }
  const bool sigtrap = Sampler().perf_sigtrap;
  struct perf_event_attr a;
  FillAttr(&a, period_ns, sigtrap);
  int fd = OpenEvent(&a);
  if (fd < 0) {
    *failure = PerfFailure{"perf_event_open", errno};
    GiveDescriptors(t, 1);
    return false;
  }
  fd = MovedAboveProgram(fd, true);
  struct f_owner_ex owner = {F_OWNER_TID, pid_t(syscall(SYS_gettid))};
  if (!sigtrap && (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, Sampler().signal) != 0 ||
                   fcntl(fd, F_SETOWN_EX, &owner) != 0)) {
    *failure = PerfFailure{"fcntl", errno};
    close(fd);
    GiveDescriptors(t, 1);
    return false;
  }
  t->perf_fd = fd;
  // O_ASYNC: armed for one overflow at a time (the handler re-arms it), so
  // the handler's own time is not sampled; SIGTRAP: armed for good.
  if ((sigtrap ? ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) : ioctl(fd, PERF_EVENT_IOC_REFRESH, 1)) != 0) {
    *failure = PerfFailure{"perf ioctl", errno};
    t->perf_fd = -1;
    close(fd);
    GiveDescriptors(t, 1);
    return false;
  }
  MarkOwnDescriptor(fd, true); // out of the program's close() from here on
  return true;
}

// A perf thread's handler reads the CPU time it books from its own event,
// never from CLOCK_THREAD_CPUTIME_ID: reading the thread's CPU clock updates
// the scheduler's accounting of the running task, and where the task's time
// slice is used up the scheduler ends it right there. The sampled thread was
// then preempted at its samples, and re-armed its event on resuming, at the
// start of a fresh slice: samples fell at fixed CPU offsets from slice starts,
// and code that runs just after a slice starts was seldom sampled. Measured
// with ranks sharing cores (4 per core, polling between short bursts): a
// loop of 8 us bursts got a quarter of its samples, while an independent
// perf event in the same threads saw its whole share (docs/contexts.md,
// "Sampling"). The count is the event's own: the handler's time is in it
// where the event stays armed (SIGTRAP), and left out, as it is left out of
// the sampling period, where the event stops at each overflow until the
// handler re-arms it (O_ASYNC).
uint64_t CpuSinceLastSample(ThreadSamples *t) {
  if (t->perf_inherited) {
    const uint64_t period = SamplePeriodNs();
    t->last_cpu_ns += period; // an estimate of the CPU clock, as below
    return period;
  }
  uint64_t count = 0;
  if (t->perf_fd >= 0 && read(t->perf_fd, &count, sizeof count) == ssize_t(sizeof count)) {
    uint64_t spent = count > t->last_perf_ns ? count - t->last_perf_ns : 0;
    t->last_perf_ns = count;
    t->last_cpu_ns += spent; // an estimate of the CPU clock: the handlers' time is not in it
    return spent;
  }
  uint64_t now = ThreadCpuNs();
  uint64_t spent = now > t->last_cpu_ns ? now - t->last_cpu_ns : 0;
  t->last_cpu_ns = now;
  return spent;
}

void MarkCpuNow(ThreadSamples *t, uint64_t thread_cpu_now) {
  t->last_cpu_ns = thread_cpu_now;
  uint64_t count = 0;
  if (t->perf_fd >= 0 && read(t->perf_fd, &count, sizeof count) == ssize_t(sizeof count))
    t->last_perf_ns = count;
}

} // namespace scalana::rt
