// Sampling setup: choosing the source at load, starting it in every thread
// (main thread here, others through the pthread_create interposer), and the
// record of what was chosen and why. The handlers are in signal_safe/.
#include "config.h"
#include "modules.h"
#include "runtime.h"
#include "scalana/text_escape.h"
#include "signal_safe/schedstat.h"
#include "signal_safe/signal_safe_entry.h"
#include "wall_clock.h"

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
// Timed: the writer thread reads the counts while a thread stopped by a
// fatal signal might hold it.
std::timed_mutex g_errors_mutex;
std::map<std::string, uint64_t> *g_errors; // leaked on purpose: used from atexit paths

unsigned long PapiThreadId() { return static_cast<unsigned long>(pthread_self()); }

// The sampling signal: a real-time signal nobody handles yet, never SIGPROF,
// which programs and libraries use for their own profiling (setitimer
// ITIMER_PROF): sharing it would steal their ticks and feed them ours. The
// lowest real-time signals are left to threading and PAPI. A handler the
// program installs on it later does not replace ours (signal_guard.cpp).
int FreeRealTimeSignal() {
  for (int sig = SIGRTMIN + 4; sig < SIGRTMAX; ++sig) {
    struct sigaction old;
    if (RealSigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
      return sig;
  }
  return 0;
}

// The perf source signals by SIGTRAP where the kernel can (PerfSigtrapWorks)
// and nothing has taken SIGTRAP yet: the program's own handlers for it, set
// later, are kept and called (signal_guard.cpp). Otherwise, and for the timer,
// a free real-time signal.
bool InstallSampleHandler(bool perf, std::string *why) {
  struct sigaction old;
  bool trap = perf && RealSigaction(SIGTRAP, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
              old.sa_handler == SIG_DFL && PerfSigtrapWorks();
  int sig = trap ? SIGTRAP : FreeRealTimeSignal();
  if (!sig) {
    *why = "no free real-time signal for sampling";
    return false;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = SampleSignalHandler;
  // SA_RESTART: the program's blocking syscalls must not see EINTR because of us.
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (RealSigaction(sig, &sa, nullptr) != 0) {
    *why = std::string("sigaction: ") + std::strerror(errno);
    return false;
  }
  Sampler().signal = sig;
  Sampler().perf_sigtrap = trap;
  return true;
}

void AddNote(std::string *note, const std::string &what) {
  *note += (note->empty() ? "" : "; ") + what;
}

// The counters of SCALANA_COUNTERS the machine has, counted by PAPI (never
// the sampling source: PAPI's overflow path cost about 50 us per sample
// here). Missing ones are named in NOTE.
void ChooseCounters(std::string *note) {
  SamplerState &s = Sampler();
  std::vector<std::string> wanted = config::ListValue(config::Id::Counters);
  if (wanted.empty())
    return;
  int rc = PAPI_library_init(PAPI_VER_CURRENT);
  if (rc != PAPI_VER_CURRENT) {
    AddNote(note, "no counters: PAPI unavailable (PAPI_library_init: " +
                      std::string(rc > 0 ? "version mismatch" : PAPI_strerror(rc)) + ")");
    return;
  }
  if ((rc = PAPI_thread_init(PapiThreadId)) != PAPI_OK) {
    AddNote(note, std::string("no counters: PAPI_thread_init failed: ") + PAPI_strerror(rc));
    return;
  }
  std::string missing;
  for (const std::string &name : wanted) {
    int code = 0;
    if (PAPI_event_name_to_code(const_cast<char *>(name.c_str()), &code) == PAPI_OK &&
        PAPI_query_event(code) == PAPI_OK && int(s.counters.size()) < kMaxCounters) {
      s.papi_counter_events.push_back(code);
      s.counters.push_back(name);
    } else {
      missing += (missing.empty() ? "" : ",") + name;
    }
  }
  if (!missing.empty())
    AddNote(note, "PAPI counters " + missing + " not available (no hardware PMU?)");
}

// The off-CPU source rides the perf source's SIGTRAP: its signals need a
// handler and a guard, which only the sampling signal has.
void ChooseOffCpu(ThreadSamples *t, std::string *note) {
  SamplerState &s = Sampler();
  if (config::Value(config::Id::OffCpu) != "on")
    return;
  if (s.kind != SampleSource::Perf) {
    AddNote(note, "time off the CPU not placed on lines: the off-CPU source needs the perf "
                  "source (--sampler perf or auto), which did not start");
    return;
  }
  if (s.signal != SIGTRAP) {
    AddNote(note,
            "time off the CPU not placed on lines: the off-CPU source needs the perf "
            "source's SIGTRAP (the program handles SIGTRAP, or the kernel is older than 5.19)");
    return;
  }
  int err = 0;
  if (!OpenSwitchEvent(t, &err)) {
    AddNote(note, "time off the CPU not placed on lines: context-switch event refused (" +
                      std::string(err ? std::strerror(err) : "descriptor budget spent") +
                      "; it counts kernel mode: root, CAP_PERFMON or perf_event_paranoid <= 1)");
    return;
  }
  s.off_cpu = true;
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
  ChooseCounters(&note);
  std::string why;
  // auto: the timer, which costs a signal per sample and no interrupt of
  // its own (docs/contexts.md); perf when asked, for rates past the tick, or
  // for the off-CPU source, which rides its SIGTRAP.
  bool perf = mode == "perf" || mode == "papi" ||
              (mode == "auto" && config::Value(config::Id::OffCpu) == "on");
  if (!InstallSampleHandler(perf, &why)) {
    s.source = "none";
    s.hz = 0;
    s.counters.clear();
    s.papi_counter_events.clear();
    AddNote(&note, "no sampling: " + why);
    s.note = note;
    return;
  }
  s.kind = perf ? SampleSource::Perf : SampleSource::Timer;
  s.source = perf ? "perf-task-clock" : "cpu-timer";
  if (perf && !OpenProcessPerfEvent(t) && !StartPerf(t, &why)) {
    AddNote(&note, "perf unavailable (" + why + "); fell back to a POSIX CPU-time timer");
    s.kind = SampleSource::Timer;
    s.source = "cpu-timer";
  }
  if (s.kind == SampleSource::Timer) {
    if (!StartTimer(t, &why)) {
      s.kind = SampleSource::None;
      s.source = "none";
      s.hz = 0;
      AddNote(&note, "no sampling: " + why);
    } else {
      // auto also moves the threads the tick starves to perf (tick_rescue.cpp).
      s.tick_rescue = mode == "auto";
    }
    if (s.kind == SampleSource::Timer && s.hz > 250) {
      AddNote(&note, "CPU-time timers fire at most once per kernel tick (often 250 Hz): each "
                     "sample stands for the CPU time measured since the one before; "
                     "--sampler perf gives the asked rate, at a higher cost per sample");
    }
  } else if (s.perf_sigtrap) {
    AddNote(&note, "perf samples arrive as SIGTRAP (a debugger stops at each: use --sampler timer "
                   "under one)");
  }
  ChooseOffCpu(t, &note);
  if (s.kind == SampleSource::Perf && s.perf_exclude_kernel) {
    AddNote(&note, "perf_event_paranoid allows user-mode samples only: CPU time in the kernel "
                   "is booked on the next sample");
  }
  if (s.kind != SampleSource::None && !s.counters.empty() && !StartCounters(t, &why)) {
    AddNote(&note, "counters not started (" + why + ")");
    s.counters.clear();
    s.papi_counter_events.clear();
  }
  s.note = note;
}

struct TrampolineArg {
  void *(*start)(void *);
  void *arg;
};

// A thread that leaves by pthread_exit never returns to the trampoline: a
// key's destructor ends its sampling then, while its CPU clock still reads
// (the stretch it had the signal blocked is closed at its end).
pthread_key_t g_thread_end_key;
bool g_thread_end_key_made;

void ThreadEnded(void *p) {
  auto *t = static_cast<ThreadSamples *>(p);
  if (t && !t->end_cpu_ns)
    StopThread(t);
}

void MakeThreadEndKey() {
  g_thread_end_key_made = pthread_key_create(&g_thread_end_key, ThreadEnded) == 0;
}

void *Trampoline(void *p) {
  TrampolineArg a = *static_cast<TrampolineArg *>(p);
  std::free(p);
  ThreadSamples *t = NewThreadSamples();
  tls_samples = t;
  if (t) {
    t->unwinding = 1; // libunwind's masking here is not the program's
    PrepareUnwinding();
    t->unwinding = 0;
    g_threads.fetch_add(1);
    StartThread(t);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, MakeThreadEndKey);
    if (g_thread_end_key_made)
      pthread_setspecific(g_thread_end_key, t);
  } else {
    CountError("thread_table_alloc");
  }
  void *result = a.start(a.arg);
  if (t && !t->end_cpu_ns)
    StopThread(t);
  return result;
}

} // namespace

SamplerState &Sampler() {
  static SamplerState *state = new SamplerState; // leaked: used until exit handlers end
  return *state;
}

namespace {
// The thread's clocks when sampling starts on it: its CPU clock, for the CPU
// time its samples stand for, and the kernel's account with the wall clock,
// for the split of its lifetime (schedstat.h).
void BeginThreadClocks(ThreadSamples *t) {
  t->last_cpu_ns = t->start_cpu_ns = ThreadCpuNs();
  clockid_t clock;
  t->cpu_clock = pthread_getcpuclockid(pthread_self(), &clock) == 0 ? int(clock) : -1;
  t->tid = int(syscall(SYS_gettid));
  SchedTimes st;
  t->sched_ok = ReadSchedTimes(0, &st);
  t->start_on_cpu_ns = st.on_cpu_ns;
  t->start_run_delay_ns = st.run_delay_ns;
  t->start_wall_ns = MonotonicNs();
}
} // namespace

void StartThread(ThreadSamples *t) {
  SamplerState &s = Sampler();
  BeginThreadClocks(t);
  if (s.kind == SampleSource::None)
    return;
  StartThreadMask(t);
  std::string why;
  if (!s.papi_counter_events.empty() && !StartCounters(t, &why))
    CountError(why == "descriptor budget spent" ? "counters_fd_budget" : "counters_thread_start");
  if (s.off_cpu && t->switch_fd < 0) {
    int err = 0;
    if (!OpenSwitchEvent(t, &err))
      CountError(err ? "off_cpu_thread_start" : "off_cpu_fd_budget");
  }
  if (s.kind == SampleSource::Perf && StartPerf(t, &why))
    return;
  if (s.kind == SampleSource::Perf)
    // Past the descriptor budget (or perf refused): this thread on the timer.
    CountError(why == "descriptor budget spent" ? "perf_fd_budget_timer" : "perf_thread_timer");
  if (!StartTimer(t, nullptr))
    CountError("sampler_thread_start");
}

void StopThread(ThreadSamples *t) {
  StopSources(t);
  t->end_cpu_ns = std::max<uint64_t>(1, ThreadCpuNs());
  SchedTimes st;
  if (t->sched_ok && ReadSchedTimes(0, &st)) {
    t->end_on_cpu_ns = st.on_cpu_ns;
    t->end_run_delay_ns = st.run_delay_ns;
  }
  t->end_wall_ns = MonotonicNs();
}

void StopSampling() {
  g_sampling_enabled.store(false);
  StopProcessPerfEvent();
  if (ThreadSamples *t = tls_samples)
    StopThread(t);
}

int ThreadCount() { return g_threads.load(); }

std::string SignalName(int sig) {
  return sig == SIGTRAP ? "SIGTRAP" : "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
}

std::string SignalCheck() {
  std::string note;
  const SamplerState &s = Sampler();
  struct sigaction cur;
  if (s.signal && RealSigaction(s.signal, nullptr, &cur) == 0 &&
      (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != SampleSignalHandler)) {
    // Only a raw rt_sigaction syscall gets past signal_guard.cpp. Checked at
    // every snapshot: counted once.
    static std::atomic<bool> counted{false};
    if (!counted.exchange(true))
      CountError("sampling_signal_taken");
    note = "the program replaced the handler of the sampling signal (" + SignalName(s.signal) +
           "): samples after that were lost";
  } else if (s.signal && ProgramHandlesSamplingSignal()) {
    note = "the program handles " + SignalName(s.signal) +
           ", the sampling signal, itself: its own signals reach its handler, the "
           "profiler's do not";
  }
  struct itimerval prof;
  bool handler =
      RealSigaction(SIGPROF, nullptr, &cur) == 0 &&
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
            (s.signal ? SignalName(s.signal) : std::string("PAPI's signal")) +
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
  // libunwind opens its pipe here, at its first use: moved out of the
  // program's numbers and kept ours (own_descriptors.cpp, pipe2).
  OwnPipesFromHere(true);
  PrepareUnwinding();
  OwnPipesFromHere(false);
  g_threads.store(1);
  BeginThreadClocks(t);
  ChooseSource(t);
  StartThreadMask(t);
  g_sampling_enabled.store(Sampler().kind != SampleSource::None);
  int rank = config::WorldRankFromEnv();
  if (rank <= 0 && (Verbose() || Sampler().kind == SampleSource::None)) {
    std::fprintf(stderr, "scalana: sampling %s at %g Hz%s%s%s\n", Sampler().source.c_str(),
                 Sampler().hz, Sampler().note.empty() ? "" : " (",
                 EscapeControls(Sampler().note).c_str(), Sampler().note.empty() ? "" : ")");
  } else if (rank <= 0) {
    // Which source auto chose, once per job: the rate it can give follows.
    std::fprintf(stderr, "scalana: sampling %s at %g Hz asked%s (--sampler %s; -v says why)\n",
                 Sampler().source.c_str(), Sampler().hz,
                 Sampler().off_cpu ? ", and time off the CPU" : "",
                 EscapeControls(config::Value(config::Id::Sampler)).c_str());
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
