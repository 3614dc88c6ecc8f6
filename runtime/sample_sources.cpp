// The sampling sources, started and stopped per thread, and PAPI's counting
// event sets. Chosen in sampler.cpp; docs/contexts.md ("Sampling") gives the
// costs measured that decided between them.
#include "runtime.h"
#include "signal_safe/signal_safe_entry.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scalana::rt {

namespace {
// Descriptors held by every thread's perf event and counters together.
std::atomic<int> g_fds_held{0};

long PeriodNs() { return long(1e9 / Sampler().hz); }

// Takes N descriptors from the budget, or none when they would exceed it.
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
} // namespace

int DescriptorBudget() {
  // A sixteenth of the soft limit: the program's own open() must never fail
  // because of us (a thousand threads at `ulimit -n 1024` leave it 960).
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return 64;
  return int(std::min<rlim_t>(lim.rlim_cur / 16, 1 << 20));
}

bool StartTimer(ThreadSamples *t, std::string *why) {
  struct sigevent sev;
  std::memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = Sampler().signal;
  sev.sigev_value.sival_ptr = SamplingTimerTag(); // tells our signals from the program's
  sev._sigev_un._tid = pid_t(syscall(SYS_gettid));
  timer_t timer;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) {
    if (why)
      *why = std::string("timer_create: ") + std::strerror(errno);
    return false;
  }
  long period_ns = PeriodNs();
  struct itimerspec spec;
  spec.it_interval.tv_sec = period_ns / 1000000000;
  spec.it_interval.tv_nsec = period_ns % 1000000000;
  spec.it_value = spec.it_interval;
  t->posix_timer = timer;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    if (why)
      *why = std::string("timer_settime: ") + std::strerror(errno);
    timer_delete(timer);
    t->posix_timer = nullptr;
    return false;
  }
  return true;
}

bool StartPerf(ThreadSamples *t, std::string *why) {
  if (!TakeDescriptors(t, 1)) {
    if (why)
      *why = "descriptor budget spent";
    return false;
  }
  struct perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK; // this thread's CPU time, in ns
  a.sample_period = uint64_t(PeriodNs());
  a.disabled = 1;
  // Kernel-mode time (syscalls, sched_yield in MPI's waits) is CPU time too:
  // excluding it drops the samples that land there.
  a.exclude_kernel = Sampler().perf_exclude_kernel;
  a.exclude_hv = 1;
  int fd = int(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0 && !a.exclude_kernel && (errno == EACCES || errno == EPERM)) {
    Sampler().perf_exclude_kernel = true; // perf_event_paranoid: user mode only
    a.exclude_kernel = 1;
    fd = int(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  }
  if (fd < 0) {
    if (why)
      *why = std::string("perf_event_open: ") + std::strerror(errno);
    GiveDescriptors(t, 1);
    return false;
  }
  // Moved to the top of the budget's range: programs that select() on the
  // descriptors they open expect them low (below FD_SETSIZE), as without us.
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      lim.rlim_cur > rlim_t(DescriptorBudget())) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, int(lim.rlim_cur) - DescriptorBudget());
    if (high >= 0) {
      close(fd);
      fd = high;
    }
  }
  struct f_owner_ex owner = {F_OWNER_TID, pid_t(syscall(SYS_gettid))};
  if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, Sampler().signal) != 0 ||
      fcntl(fd, F_SETOWN_EX, &owner) != 0) {
    if (why)
      *why = std::string("fcntl: ") + std::strerror(errno);
    close(fd);
    GiveDescriptors(t, 1);
    return false;
  }
  t->perf_fd = fd;
  if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
    if (why)
      *why = std::string("perf ioctl: ") + std::strerror(errno);
    t->perf_fd = -1;
    close(fd);
    GiveDescriptors(t, 1);
    return false;
  }
  return true;
}

bool StartCounters(ThreadSamples *t, std::string *why) {
  const SamplerState &s = Sampler();
  int n = int(s.papi_counter_events.size());
  if (n == 0)
    return true;
  if (!TakeDescriptors(t, n)) {
    if (why)
      *why = "descriptor budget spent";
    return false;
  }
  PAPI_register_thread();
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  for (int i = 0; rc == PAPI_OK && i < n; ++i)
    rc = PAPI_add_event(es, s.papi_counter_events[size_t(i)]);
  if (rc == PAPI_OK)
    rc = PAPI_start(es);
  if (rc != PAPI_OK) {
    if (why)
      *why = PAPI_strerror(rc);
    if (es != PAPI_NULL) {
      PAPI_cleanup_eventset(es);
      PAPI_destroy_eventset(&es);
    }
    PAPI_unregister_thread();
    GiveDescriptors(t, n);
    return false;
  }
  t->papi_eventset = es;
  t->counter_count = n;
  t->counters_in_slots = n;
  return true;
}

void StopSources(ThreadSamples *t) {
  if (t->perf_fd >= 0) {
    int fd = t->perf_fd;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    t->perf_fd = -1; // before close: a late signal no longer matches it
    close(fd);
    GiveDescriptors(t, 1);
  }
  if (t->posix_timer) {
    timer_t timer = static_cast<timer_t>(t->posix_timer);
    t->posix_timer = nullptr;
    timer_delete(timer);
  }
  if (t->papi_eventset >= 0) {
    int es = t->papi_eventset;
    int n = t->counter_count;
    t->counter_count = 0; // the handler stops reading before the set goes
    t->papi_eventset = -1;
    long long values[kMaxCounters + 1];
    PAPI_stop(es, values);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    PAPI_unregister_thread();
    GiveDescriptors(t, n);
  }
}

} // namespace scalana::rt
