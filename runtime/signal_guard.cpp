// The sampling signal stays ours: the program's sigaction() and signal() on
// its number are recorded as the program's own disposition (our handler hands
// the program's signals on to it), and its sigprocmask()/pthread_sigmask()
// are watched so that the CPU time spent with the signal blocked is measured,
// not silently missing. Every other signal passes straight through.
//
// Why interpose rather than pick another number: the program may install a
// handler for any real-time signal at any time after we chose ours (the
// number was free at load), and a profiler that loses its signal loses its
// samples while the program's handler receives signals it never asked for.
#include "runtime.h"
#include "signal_safe/signal_safe_entry.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace scalana::rt {

namespace {

using SigactionFn = int (*)(int, const struct sigaction *, struct sigaction *);
using SigmaskFn = int (*)(int, const sigset_t *, sigset_t *);
using SignalFn = sighandler_t (*)(int, sighandler_t);

template <typename Fn> Fn Next(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Two copies, the live one named by an index: the handler reads a copy that
// no writer touches (writers fill the other, then flip). Writers take the
// spin lock with all signals blocked, so a handler that calls sigaction()
// cannot deadlock against the code it interrupted.
struct ProgramAction {
  struct sigaction act[2];
  std::atomic<int> live{0};
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
};
ProgramAction g_program; // zero: SIG_DFL, as the program found it

char g_timer_tag;

int SamplingSignal() { return RuntimeActive() ? Sampler().signal : 0; }

void SetProgramAction(const struct sigaction *act, struct sigaction *old) {
  sigset_t all, saved;
  sigfillset(&all);
  RealPthreadSigmask(SIG_BLOCK, &all, &saved);
  while (g_program.lock.test_and_set(std::memory_order_acquire)) {
  }
  int live = g_program.live.load(std::memory_order_relaxed);
  if (old)
    *old = g_program.act[live];
  if (act) {
    g_program.act[1 - live] = *act;
    g_program.live.store(1 - live, std::memory_order_release);
  }
  g_program.lock.clear(std::memory_order_release);
  RealPthreadSigmask(SIG_SETMASK, &saved, nullptr);
}

// Tracks whether this thread has the sampling signal blocked after the
// program changed its mask: BEFORE is the mask the call found (the kernel's
// word, not ours), HOW and SET as passed to the call.
void NoteMask(ThreadSamples *t, int sig, int how, const sigset_t *set, const sigset_t &before) {
  uint64_t now = ThreadCpuNs();
  // The mask changed behind the interposers (siglongjmp, setcontext, a
  // handler's return restore it inside libc): take the kernel's word from
  // here on. When it changed is unknown; now is the nearest bound.
  bool was = sigismember(&before, sig) == 1;
  if (was != bool(t->signal_blocked)) {
    if (was)
      t->blocked_since_ns = now;
    else
      t->blocked_ns += now - std::min(now, t->blocked_since_ns);
    t->signal_blocked = was;
  }
  bool in_set = set && sigismember(set, sig) == 1;
  bool blocked = was;
  if (how == SIG_BLOCK)
    blocked = blocked || in_set;
  else if (how == SIG_UNBLOCK)
    blocked = blocked && !in_set;
  else if (how == SIG_SETMASK && set)
    blocked = in_set;
  if (blocked == was)
    return;
  if (blocked) {
    t->blocked_since_ns = now;
  } else {
    t->blocked_ns += now - std::min(now, t->blocked_since_ns);
    // The blocked stretch is counted as such; the next sample stands for
    // the time after it only.
    MarkCpuNow(t, now);
  }
  t->signal_blocked = blocked;
}

int MaskCall(SigmaskFn real, int how, const sigset_t *set, sigset_t *old) {
  ThreadSamples *t = CurrentThread();
  int sig = SamplingSignal();
  if (!real)
    return EINVAL;
  // libunwind masks signals around its caches: its calls from our own
  // unwinding are not the program's.
  if (!t || !sig || !set || t->unwinding || t->in_handler)
    return real(how, set, old);
  sigset_t before;
  // Hazard: until the stretch is noted, a sample that arrives (pending since
  // the program blocked, delivered as it unblocks) must not be attributed:
  // the handler counts it only while mask_changing is set.
  t->mask_changing = 1;
  int rc = real(how, set, &before);
  if (rc == 0)
    NoteMask(t, sig, how, set, before);
  t->mask_changing = 0;
  if (rc == 0 && old)
    *old = before;
  return rc;
}

} // namespace

int RealSigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  static SigactionFn real = Next<SigactionFn>("sigaction");
  return real ? real(sig, act, old) : -1;
}

int RealPthreadSigmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn real = Next<SigmaskFn>("pthread_sigmask");
  return real ? real(how, set, old) : EINVAL;
}

void *SamplingTimerTag() { return &g_timer_tag; }

bool ProgramHandlesSamplingSignal() {
  const struct sigaction &a = g_program.act[g_program.live.load(std::memory_order_acquire)];
  return (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction != nullptr : a.sa_handler != SIG_DFL;
}

void StartThreadMask(ThreadSamples *t) {
  int sig = SamplingSignal();
  sigset_t cur;
  if (!sig || RealPthreadSigmask(SIG_BLOCK, nullptr, &cur) != 0)
    return;
  // A thread inherits its creator's mask (the main thread its parent's,
  // across exec): born with ours blocked, it has been blocked since its CPU
  // clock started, at 0.
  if (sigismember(&cur, sig) == 1) {
    t->blocked_since_ns = 0;
    t->signal_blocked = 1;
  }
}

uint64_t BlockedNs(const ThreadSamples *t) {
  uint64_t ns = t->blocked_ns;
  if (!t->signal_blocked)
    return ns;
  // Still blocked: up to the thread's end (its clock is gone then), or to
  // now while it lives.
  uint64_t at = t->end_cpu_ns;
  struct timespec now;
  if (!at && t->cpu_clock != -1 && clock_gettime(clockid_t(t->cpu_clock), &now) == 0)
    at = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  return ns + (at - std::min(at, t->blocked_since_ns));
}

void ForwardToProgram(int sig, siginfo_t *info, void *ucontext) {
  const struct sigaction &a = g_program.act[g_program.live.load(std::memory_order_acquire)];
  if (a.sa_flags & SA_SIGINFO) {
    if (a.sa_sigaction)
      a.sa_sigaction(sig, info, ucontext);
    return;
  }
  if (a.sa_handler == SIG_IGN)
    return;
  if (a.sa_handler != SIG_DFL) {
    a.sa_handler(sig);
    return;
  }
  // The program never handled this signal: its default action (for a
  // real-time signal, the end of the process), as without the profiler.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  RealSigaction(sig, &dfl, nullptr);
  syscall(SYS_tgkill, getpid(), pid_t(syscall(SYS_gettid)), sig);
}

} // namespace scalana::rt

using namespace scalana::rt;

extern "C" int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (sig == 0 || sig != SamplingSignal())
    return RealSigaction(sig, act, old);
  SetProgramAction(act, old);
  return 0;
}

extern "C" sighandler_t signal(int sig, sighandler_t handler) {
  if (sig == 0 || sig != SamplingSignal()) {
    static SignalFn real = Next<SignalFn>("signal");
    return real ? real(sig, handler) : SIG_ERR;
  }
  // glibc's signal(): BSD semantics, restarting calls.
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  SetProgramAction(&act, &old);
  return (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<sighandler_t>(old.sa_sigaction)
                                     : old.sa_handler;
}

extern "C" int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn real = Next<SigmaskFn>("pthread_sigmask");
  return MaskCall(real, how, set, old);
}

extern "C" int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn real = Next<SigmaskFn>("sigprocmask");
  return MaskCall(real, how, set, old); // -1 and errno on failure, from the real one
}
