// The sampling sources, started and stopped per thread, and PAPI's counting
// event sets. Chosen in sampler.cpp; docs/contexts.md ("Sampling") gives the
// costs measured that decided between them.
#include "runtime.h"
#include "signal_safe/signal_safe_entry.h"

#include <linux/perf_event.h>
#include <papi.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scalana::rt {

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
  long period_ns = long(SamplePeriodNs());
  struct itimerspec spec;
  spec.it_interval.tv_sec = period_ns / 1000000000;
  spec.it_interval.tv_nsec = period_ns % 1000000000;
  spec.it_value = spec.it_interval;
  t->posix_timer = timer;
  t->has_timer = 1;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    if (why)
      *why = std::string("timer_settime: ") + std::strerror(errno);
    timer_delete(timer);
    t->has_timer = 0;
    t->posix_timer = nullptr;
    return false;
  }
  return true;
}

bool StartPerf(ThreadSamples *t, std::string *why) {
  // A thread the process's event reaches is sampled by its share of it.
  if (Sampler().perf_process_fd >= 0) {
    t->perf_inherited = 1;
    return true;
  }
  PerfFailure failure;
  if (OpenPerfEvent(t, SamplePeriodNs(), &failure))
    return true;
  if (why)
    *why = failure.err ? std::string(failure.call) + ": " + std::strerror(failure.err)
                       : std::string(failure.call);
  return false;
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
  CloseSwitchEvent(t);
  // Its share of the process's event ends with the thread (or, for all of
  // them, in StopSampling); its late signals are then not samples.
  t->perf_inherited = 0;
  if (t->perf_fd >= 0) {
    int fd = t->perf_fd;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    t->perf_fd = -1; // before close: a late signal no longer matches it
    CloseOwnDescriptor(fd);
    GiveDescriptors(t, 1);
  }
  if (t->has_timer) {
    timer_t timer = static_cast<timer_t>(t->posix_timer);
    t->has_timer = 0;
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
