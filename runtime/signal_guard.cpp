// The sampling signal stays ours: the program's sigaction() and signal() on
// its number are recorded as the program's own disposition (our handler hands
// the program's signals on to it), and its sigprocmask()/pthread_sigmask()
// are watched so that the CPU time spent with the signal blocked is measured,
// not silently missing (blocked_time.cpp). Every other signal passes straight
// through, but for handlers whose mask blocks ours (blocked_time.cpp).
//
// Why interpose rather than pick another number: the program may install a
// handler for any real-time signal at any time after we chose ours (the
// number was free at load), and a profiler that loses its signal loses its
// samples while the program's handler receives signals it never asked for.
#include "program_action.h"
#include "runtime.h"
#include "signal_safe/signal_safe_entry.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

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

ProgramAction g_program; // the sampling signal's

char g_timer_tag;

} // namespace

int SamplingSignal() { return RuntimeActive() ? Sampler().signal : 0; }

void SetProgramAction(ProgramAction &a, const struct sigaction *act, struct sigaction *old) {
  sigset_t all, saved;
  sigfillset(&all);
  RealPthreadSigmask(SIG_BLOCK, &all, &saved);
  while (a.lock.test_and_set(std::memory_order_acquire)) {
  }
  int live = a.live.load(std::memory_order_relaxed);
  if (old)
    *old = a.act[live];
  if (act) {
    a.act[1 - live] = *act;
    a.live.store(1 - live, std::memory_order_release);
  }
  a.lock.clear(std::memory_order_release);
  RealPthreadSigmask(SIG_SETMASK, &saved, nullptr);
}

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
  const struct sigaction &a = LiveAction(g_program);
  return (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction != nullptr : a.sa_handler != SIG_DFL;
}

void ForwardToProgram(int sig, siginfo_t *info, void *ucontext) {
  const struct sigaction &a = LiveAction(g_program);
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
  int ours = SamplingSignal();
  if (sig == 0 || !ours)
    return RealSigaction(sig, act, old);
  if (sig != ours)
    return WatchedSigaction(sig, ours, act, old);
  SetProgramAction(g_program, act, old);
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
  SetProgramAction(g_program, &act, &old);
  return (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<sighandler_t>(old.sa_sigaction)
                                     : old.sa_handler;
}
