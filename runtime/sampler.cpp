// Sampling setup: choosing the source at load, starting it in every thread
// (main thread here, others through the pthread_create interposer), and the
// record of what was chosen and why. The handlers are in signal_safe/.
#include "config.h"
#include "modules.h"
#include "runtime.h"
#include "signal_safe/signal_safe_entry.h"

#include <dlfcn.h>
#include <papi.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace scalana::rt {

namespace {

std::atomic<int> g_threads{0};
std::atomic<bool> g_active{false};
ThreadSamples *g_main_thread = nullptr; // PAPI_thread_init registers it itself
// Timed: the writer thread reads the counts while a thread stopped by a
// fatal signal might hold it.
std::timed_mutex g_errors_mutex;
std::map<std::string, uint64_t> *g_errors; // leaked on purpose: used from atexit paths

unsigned long PapiThreadId() { return static_cast<unsigned long>(pthread_self()); }

bool StartPapi(ThreadSamples *t, std::string *why) {
  SamplerState &s = Sampler();
  if (t != g_main_thread)
    PAPI_register_thread();
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  for (size_t i = 0; rc == PAPI_OK && i < s.papi_counter_events.size(); ++i)
    rc = PAPI_add_event(es, s.papi_counter_events[i]);
  if (rc == PAPI_OK)
    rc = PAPI_add_event(es, s.papi_overflow_event);
  if (rc == PAPI_OK)
    rc = PAPI_overflow(es, s.papi_overflow_event, int(s.papi_threshold), 0, PapiOverflowHandler);
  if (rc == PAPI_OK)
    rc = PAPI_start(es);
  if (rc != PAPI_OK) {
    if (why)
      *why = PAPI_strerror(rc);
    if (es != PAPI_NULL) {
      PAPI_cleanup_eventset(es);
      PAPI_destroy_eventset(&es);
    }
    return false;
  }
  t->counter_count = int(s.papi_counter_events.size());
  t->papi_eventset = es;
  return true;
}

bool StartItimer(ThreadSamples *t, std::string *why) {
  struct sigevent sev;
  std::memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = Sampler().signal;
  sev._sigev_un._tid = pid_t(syscall(SYS_gettid));
  timer_t timer;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) {
    if (why)
      *why = std::string("timer_create: ") + std::strerror(errno);
    return false;
  }
  long period_ns = long(1e9 / Sampler().hz);
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

// The timer's signal: a real-time signal nobody handles yet, never SIGPROF,
// which programs and libraries use for their own profiling (setitimer
// ITIMER_PROF): sharing it would steal their ticks and feed them ours. The
// lowest real-time signals are left to threading and PAPI.
int FreeRealTimeSignal() {
  for (int sig = SIGRTMIN + 4; sig < SIGRTMAX; ++sig) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
      return sig;
  }
  return 0;
}

bool InstallItimerHandler(std::string *why) {
  int sig = FreeRealTimeSignal();
  if (!sig) {
    *why = "no free real-time signal for the timer";
    return false;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = ItimerSignalHandler;
  // SA_RESTART: the program's blocking syscalls must not see EINTR because of us.
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, nullptr) != 0) {
    *why = std::string("sigaction: ") + std::strerror(errno);
    return false;
  }
  Sampler().signal = sig;
  return true;
}

// Decides the source on the main thread (T) and starts it there; records
// what was used and, on fallback, why.
void ChooseSource(ThreadSamples *t) {
  SamplerState &s = Sampler();
  std::string mode = config::Value(config::Id::Sampler);
  s.hz = double(config::UintValue(config::Id::Hz));
  std::string note;
  if (mode == "off") {
    s.source = "none";
    s.hz = 0;
    s.note = "sampling off (SCALANA_SAMPLER=off)";
    return;
  }
  if (mode == "auto" || mode == "papi") {
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
      note = "PAPI unavailable (PAPI_library_init: " +
             std::string(rc > 0 ? "version mismatch" : PAPI_strerror(rc)) + ")";
    } else if ((rc = PAPI_thread_init(PapiThreadId)) != PAPI_OK) {
      note = std::string("PAPI_thread_init failed: ") + PAPI_strerror(rc);
    } else {
      std::vector<std::string> missing;
      for (const std::string &name : config::ListValue(config::Id::Counters)) {
        int code = 0;
        if (PAPI_event_name_to_code(const_cast<char *>(name.c_str()), &code) == PAPI_OK &&
            PAPI_query_event(code) == PAPI_OK && int(s.counters.size()) < kMaxCounters) {
          s.papi_counter_events.push_back(code);
          s.counters.push_back(name);
        } else {
          missing.push_back(name);
        }
      }
      int clock = 0;
      bool have_task_clock =
          PAPI_event_name_to_code(const_cast<char *>("perf::TASK-CLOCK"), &clock) == PAPI_OK;
      if (have_task_clock) {
        // CPU time in ns: one overflow every 1/hz s of this thread's CPU time.
        s.papi_overflow_event = clock;
        s.papi_threshold = (long long)(1e9 / s.hz);
        s.seconds_per_sample = double(s.papi_threshold) * 1e-9;
      } else if (std::find(s.counters.begin(), s.counters.end(), "PAPI_TOT_CYC") !=
                 s.counters.end()) {
        // No software clock event: overflow on cycles at the nominal clock.
        const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
        double hz_cpu = hw && hw->cpu_max_mhz > 0 ? hw->cpu_max_mhz * 1e6 : 2e9;
        PAPI_event_name_to_code(const_cast<char *>("PAPI_TOT_CYC"), &s.papi_overflow_event);
        s.papi_threshold = (long long)(hz_cpu / s.hz);
        s.seconds_per_sample = 1.0 / s.hz;
      }
      if (!missing.empty()) {
        std::string list;
        for (const auto &m : missing)
          list += (list.empty() ? "" : ",") + m;
        note = "PAPI presets " + list + " not available (no hardware PMU?)";
      }
      std::string why;
      if (s.papi_overflow_event != 0) {
        s.use_papi = true;
        s.papi_presets = !s.counters.empty();
        if (StartPapi(t, &why)) {
          s.source = s.papi_presets ? "papi-presets" : "papi:perf::TASK-CLOCK";
          if (!s.papi_presets && !note.empty())
            note += "; sampling perf::TASK-CLOCK";
          s.note = note;
          return;
        }
        s.use_papi = false;
        note += std::string(note.empty() ? "" : "; ") + "PAPI overflow failed (" + why + ")";
      } else {
        std::string reason;
        for (int c = 0; c < PAPI_num_components(); ++c) {
          const PAPI_component_info_t *info = PAPI_get_component_info(c);
          if (info && std::strcmp(info->name, "perf_event") == 0 && info->disabled)
            reason = std::string(" (perf_event component disabled: ") + info->disabled_reason + ")";
        }
        note +=
            std::string(note.empty() ? "" : "; ") + "no perf::TASK-CLOCK event in PAPI" + reason;
      }
      s.counters.clear();
      s.papi_counter_events.clear();
    }
  }
  s.source = "itimer-prof";
  s.seconds_per_sample = 1.0 / s.hz;
  std::string why;
  if (s.hz > 250)
    note += std::string(note.empty() ? "" : "; ") +
            "CPU-time timers fire at most at the kernel tick (~250 Hz): samples carry the "
            "overrun count";
  if (!InstallItimerHandler(&why) || !StartItimer(t, &why)) {
    s.source = "none";
    s.hz = 0;
    note += std::string(note.empty() ? "" : "; ") + "no sampling: " + why;
  } else if (mode != "itimer") {
    note = (note.empty() ? "" : note + "; ") + "fell back to a POSIX CPU-time timer";
  }
  s.note = note;
}

struct TrampolineArg {
  void *(*start)(void *);
  void *arg;
};

void *Trampoline(void *p) {
  TrampolineArg a = *static_cast<TrampolineArg *>(p);
  std::free(p);
  ThreadSamples *t = NewThreadSamples();
  tls_samples = t;
  if (t) {
    PrepareUnwinding();
    g_threads.fetch_add(1);
    StartThread(t);
  } else {
    CountError("thread_table_alloc");
  }
  void *result = a.start(a.arg);
  if (t)
    StopThread(t);
  return result;
}

} // namespace

SamplerState &Sampler() {
  static SamplerState *state = new SamplerState; // leaked: used until exit handlers end
  return *state;
}

void StartThread(ThreadSamples *t) {
  SamplerState &s = Sampler();
  if (s.source == "none")
    return;
  bool ok = s.use_papi ? StartPapi(t, nullptr) : StartItimer(t, nullptr);
  if (!ok)
    CountError("sampler_thread_start");
}

void StopThread(ThreadSamples *t) {
  if (t->papi_eventset >= 0) {
    int es = t->papi_eventset;
    t->papi_eventset = -1;
    long long values[kMaxCounters + 1];
    PAPI_stop(es, values);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    PAPI_unregister_thread();
  }
  if (t->posix_timer) {
    timer_t timer = static_cast<timer_t>(t->posix_timer);
    t->posix_timer = nullptr;
    timer_delete(timer);
  }
}

void StopSampling() {
  g_sampling_enabled.store(false);
  if (ThreadSamples *t = tls_samples)
    StopThread(t);
}

int ThreadCount() { return g_threads.load(); }

std::string SignalCheck() {
  std::string note;
  const SamplerState &s = Sampler();
  struct sigaction cur;
  if (s.signal && sigaction(s.signal, nullptr, &cur) == 0 &&
      (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != ItimerSignalHandler)) {
    // Checked at every snapshot: counted once.
    static std::atomic<bool> counted{false};
    if (!counted.exchange(true))
      CountError("sampling_signal_taken");
    note = "the program replaced the handler of the sampling signal (SIGRTMIN+" +
           std::to_string(s.signal - SIGRTMIN) + "): samples after that were lost";
  }
  struct itimerval prof;
  bool handler =
      sigaction(SIGPROF, nullptr, &cur) == 0 &&
      ((cur.sa_flags & SA_SIGINFO) || (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN));
  bool timer =
      getitimer(ITIMER_PROF, &prof) == 0 && (prof.it_interval.tv_sec || prof.it_interval.tv_usec ||
                                             prof.it_value.tv_sec || prof.it_value.tv_usec);
  if (handler || timer)
    note += std::string(note.empty() ? "" : "; ") + "the program uses " +
            (handler && timer ? "SIGPROF and ITIMER_PROF"
             : handler        ? "a SIGPROF handler"
                              : "ITIMER_PROF") +
            " itself; ScalAna samples on " +
            (s.signal ? "SIGRTMIN+" + std::to_string(s.signal - SIGRTMIN)
                      : std::string("PAPI's signal")) +
            ", so neither disturbs the other";
  return note;
}

void CountError(const char *what) noexcept {
  try {
    // Bounded: a forked child inherits the lock as the writer thread held it.
    std::unique_lock<std::timed_mutex> lock(g_errors_mutex, std::chrono::seconds(1));
    if (!lock.owns_lock())
      return;
    if (!g_errors)
      g_errors = new std::map<std::string, uint64_t>;
    ++(*g_errors)[what];
  } catch (...) {
  }
}

std::map<std::string, uint64_t> ErrorCounts(double lock_seconds) {
  std::unique_lock<std::timed_mutex> lock(g_errors_mutex,
                                          std::chrono::microseconds(int64_t(lock_seconds * 1e6)));
  if (!lock.owns_lock() || !g_errors)
    return {};
  return *g_errors;
}

bool RuntimeActive() { return g_active.load(std::memory_order_relaxed); }
void SetRuntimeActive(bool active) { g_active.store(active); }

namespace {
using PthreadCreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
PthreadCreateFn RealPthreadCreate() {
  static PthreadCreateFn real =
      reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}
} // namespace

int CreateUnsampledThread(pthread_t *thread, void *(*start)(void *), void *arg) {
  PthreadCreateFn real = RealPthreadCreate();
  return real ? real(thread, nullptr, start, arg) : EAGAIN;
}

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool Verbose() { return config::BoolValue(config::Id::Verbose); }

void InitSampling() {
  ThreadSamples *t = NewThreadSamples();
  tls_samples = t;
  if (!t) {
    CountError("thread_table_alloc");
    return;
  }
  ScanModules();
  PrepareUnwinding();
  g_threads.store(1);
  g_main_thread = t;
  ChooseSource(t);
  g_sampling_enabled.store(Sampler().source != "none");
  int rank = config::WorldRankFromEnv();
  bool fallback = Sampler().source != "papi-presets" && Sampler().source != "papi:perf::TASK-CLOCK";
  if (rank <= 0 &&
      (Verbose() || (fallback && Sampler().source != "none") || Sampler().source == "none")) {
    std::fprintf(stderr, "scalana: sampling %s at %g Hz%s%s%s\n", Sampler().source.c_str(),
                 Sampler().hz, Sampler().note.empty() ? "" : " (", Sampler().note.c_str(),
                 Sampler().note.empty() ? "" : ")");
  }
}

} // namespace scalana::rt

extern "C" int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg) {
  auto real = scalana::rt::RealPthreadCreate();
  if (!real)
    return EAGAIN;
  if (!scalana::rt::RuntimeActive())
    return real(thread, attr, start, arg);
  auto *a =
      static_cast<scalana::rt::TrampolineArg *>(std::malloc(sizeof(scalana::rt::TrampolineArg)));
  if (!a)
    return real(thread, attr, start, arg);
  a->start = start;
  a->arg = arg;
  int rc = real(thread, attr, scalana::rt::Trampoline, a);
  if (rc != 0)
    std::free(a);
  return rc;
}
