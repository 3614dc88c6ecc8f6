// The CPU time each thread has the sampling signal blocked: no sample can
// arrive then, so the profile says how long (the rank's `sampling_blocked`)
// rather than leave the time silently missing. Every way the program blocks
// it is followed on the thread itself: its sigprocmask()/pthread_sigmask()
// calls, a mask it was born with, the mask of its own handlers for other
// signals (the kernel adds sa_mask while they run), siglongjmp() back to a
// mask saved by sigsetjmp(), and setcontext()/swapcontext() to a context's
// mask. A stretch still open when the thread ends is closed at its end, one
// still open at a snapshot at the snapshot.
// Fortified headers rename longjmp to __longjmp_chk: this file defines both.
#undef _FORTIFY_SOURCE
#include "program_action.h"
#include "runtime.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace scalana::rt {

namespace {

using SigmaskFn = int (*)(int, const sigset_t *, sigset_t *);
using LongjmpFn = void (*)(struct __jmp_buf_tag *, int);
using SetcontextFn = int (*)(const ucontext_t *);
using SwapcontextFn = int (*)(ucontext_t *, const ucontext_t *);

template <typename Fn> Fn Next(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Resolved at load: a longjmp out of a signal handler must not call dlsym
// (Jump resolves it then only if a jump came before this file's
// initialisation).
LongjmpFn g_real_siglongjmp = Next<LongjmpFn>("siglongjmp");
LongjmpFn g_real_longjmp = Next<LongjmpFn>("longjmp");
LongjmpFn g_real_underscore_longjmp = Next<LongjmpFn>("_longjmp");
LongjmpFn g_real_longjmp_chk = Next<LongjmpFn>("__longjmp_chk");
SetcontextFn g_real_setcontext = Next<SetcontextFn>("setcontext");
SwapcontextFn g_real_swapcontext = Next<SwapcontextFn>("swapcontext");

[[noreturn]] void Jump(LongjmpFn &real, const char *name, struct __jmp_buf_tag *env, int val) {
  if (!real)
    real = Next<LongjmpFn>(name);
  if (!real)
    abort();
  real(env, val);
  __builtin_unreachable();
}

// Moves thread T to BLOCKED at NOW (its CPU clock): a stretch opens, or
// closes and is counted. Async-signal-safe; T's own thread only.
void SetBlocked(ThreadSamples *t, bool blocked, uint64_t now) {
  if (blocked == bool(t->signal_blocked))
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

// Runs F, which changes T's blocked stretch, flagged as a mask call is: a
// handler arriving meanwhile (MaskingHandler) leaves the fields alone.
// Async-signal-safe; T's own thread only, outside a mask call.
template <typename F> void Flagged(ThreadSamples *t, F &&f) {
  t->mask_changing = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  f();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->mask_changing = 0;
}

// After the program changed its mask: BEFORE is the mask the call found
// (the kernel's word, not ours), HOW and SET as passed to the call.
void NoteMask(ThreadSamples *t, int sig, int how, const sigset_t *set, const sigset_t &before) {
  uint64_t now = ThreadCpuNs();
  // The mask changed behind the interposers (setcontext, a handler that
  // left by longjmp): take the kernel's word from here on. When it changed
  // is unknown; now is the nearest bound.
  bool was = sigismember(&before, sig) == 1;
  SetBlocked(t, was, now);
  bool in_set = set && sigismember(set, sig) == 1;
  bool blocked = was;
  if (how == SIG_BLOCK)
    blocked = blocked || in_set;
  else if (how == SIG_UNBLOCK)
    blocked = blocked && !in_set;
  else if (how == SIG_SETMASK && set)
    blocked = in_set;
  SetBlocked(t, blocked, now);
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
  int rc = real(how, set, &before); // SET may be OLD: read before OLD is written
  if (rc == 0)
    NoteMask(t, sig, how, set, before);
  std::atomic_signal_fence(std::memory_order_seq_cst); // the stretch noted, then the flag
  t->mask_changing = 0;
  if (rc == 0 && old)
    *old = before;
  return rc;
}

// ---- the program's handlers whose mask holds the sampling signal

ProgramAction g_masking[NSIG]; // the program's action, for signals wrapped

bool HasHandler(const struct sigaction &a) {
  return (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction != nullptr
                                   : a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

// Stands in the kernel's table for a program's handler whose sa_mask holds
// the sampling signal: the kernel blocks it while the handler runs, and
// restores the mask from before at its return.
void MaskingHandler(int sig, siginfo_t *info, void *ucontext) {
  int saved_errno = errno;
  ThreadSamples *t = CurrentThread();
  // Hazard: inside a mask call (its real call delivers pending signals) the
  // interrupted NoteMask may be half way through the same fields; it takes
  // the kernel's mask afterwards anyway, so the handler's time goes
  // uncounted rather than the stretch corrupted.
  if (t && t->mask_changing)
    t = nullptr;
  bool before = t && t->signal_blocked;
  if (t)
    Flagged(t, [&] { SetBlocked(t, true, ThreadCpuNs()); });
  errno = saved_errno;
  const struct sigaction &a = LiveAction(g_masking[sig]);
  if (a.sa_flags & SA_SIGINFO) {
    if (a.sa_sigaction)
      a.sa_sigaction(sig, info, ucontext);
  } else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
    a.sa_handler(sig);
  }
  saved_errno = errno;
  // Whatever the handler did to the mask, its return restores the one from
  // before (a handler that leaves by siglongjmp is followed there).
  if (t)
    Flagged(t, [&] { SetBlocked(t, before, ThreadCpuNs()); });
  errno = saved_errno;
}

bool IsMaskingHandler(const struct sigaction &a) {
  return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == MaskingHandler;
}

// Before a jump back to ENV: the mask sigsetjmp() saved there comes back
// with it (a jump without one leaves the mask as it is).
void NoteJump(struct __jmp_buf_tag *env) {
  ThreadSamples *t = CurrentThread();
  int sig = SamplingSignal();
  if (!t)
    return;
  if (sig && env && env->__mask_was_saved) {
    const sigset_t *saved = reinterpret_cast<const sigset_t *>(&env->__saved_mask);
    Flagged(t, [&] { SetBlocked(t, sigismember(saved, sig) == 1, ThreadCpuNs()); });
  }
  // The runtime never calls setjmp: a jump leaves any mask call in progress
  // on this thread (a handler of a signal it delivered jumped out) for good.
  t->mask_changing = 0;
}

// The thread's mask becomes MASK (a context switch, or its failure).
void NoteRestored(const sigset_t &mask) {
  ThreadSamples *t = CurrentThread();
  int sig = SamplingSignal();
  if (!t || !sig)
    return;
  Flagged(t, [&] { SetBlocked(t, sigismember(&mask, sig) == 1, ThreadCpuNs()); });
}

void NoteFailedSwitch() {
  sigset_t now;
  if (RealPthreadSigmask(SIG_BLOCK, nullptr, &now) == 0)
    NoteRestored(now);
}

} // namespace

int WatchedSigaction(int sig, int ours, const struct sigaction *act, struct sigaction *old) {
  if (sig <= 0 || sig >= NSIG)
    return RealSigaction(sig, act, old);
  ProgramAction &program = g_masking[sig];
  bool wrap = act && HasHandler(*act) && sigismember(&act->sa_mask, ours) == 1;
  struct sigaction program_before, kernel_before, mine;
  // The program's action is in place before the kernel's table points at
  // the wrapper: a signal arriving in between finds it.
  SetProgramAction(program, wrap ? act : nullptr, &program_before);
  if (wrap) {
    mine = *act;
    mine.sa_flags |= SA_SIGINFO;
    mine.sa_sigaction = MaskingHandler;
  }
  int rc = RealSigaction(sig, wrap ? &mine : act, &kernel_before);
  if (rc != 0) {
    if (wrap)
      SetProgramAction(program, &program_before, nullptr);
    return rc;
  }
  // The program reads back what it set, never the wrapper.
  if (old)
    *old = IsMaskingHandler(kernel_before) ? program_before : kernel_before;
  return 0;
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

} // namespace scalana::rt

using namespace scalana::rt;

extern "C" int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn real = Next<SigmaskFn>("pthread_sigmask");
  return MaskCall(real, how, set, old);
}

extern "C" int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn real = Next<SigmaskFn>("sigprocmask");
  return MaskCall(real, how, set, old); // -1 and errno on failure, from the real one
}

// A context switch restores the mask the context holds, noted before it.
// One that fails (it returns -1) leaves the mask as it was: read again then.
extern "C" int setcontext(const ucontext_t *uc) noexcept {
  if (!g_real_setcontext) {
    errno = ENOSYS;
    return -1;
  }
  if (uc)
    NoteRestored(uc->uc_sigmask);
  int rc = g_real_setcontext(uc);
  NoteFailedSwitch(); // setcontext returns only when it failed
  return rc;
}

extern "C" int swapcontext(ucontext_t *save, const ucontext_t *uc) noexcept {
  if (!g_real_swapcontext) {
    errno = ENOSYS;
    return -1;
  }
  if (uc)
    NoteRestored(uc->uc_sigmask);
  int rc = g_real_swapcontext(save, uc);
  // Returning 0: switched back to SAVE, whose mask that switch noted.
  if (rc != 0)
    NoteFailedSwitch();
  return rc;
}

// glibc's longjmp, _longjmp and siglongjmp are one function: each restores
// the mask when sigsetjmp saved one. __longjmp_chk is what _FORTIFY_SOURCE
// calls.
extern "C" void siglongjmp(sigjmp_buf env, int val) noexcept {
  NoteJump(env);
  Jump(g_real_siglongjmp, "siglongjmp", env, val);
}

extern "C" void longjmp(jmp_buf env, int val) noexcept {
  NoteJump(env);
  Jump(g_real_longjmp, "longjmp", env, val);
}

extern "C" void _longjmp(jmp_buf env, int val) noexcept {
  NoteJump(env);
  Jump(g_real_underscore_longjmp, "_longjmp", env, val);
}

extern "C" void __longjmp_chk(jmp_buf env, int val) noexcept {
  NoteJump(env);
  Jump(g_real_longjmp_chk, "__longjmp_chk", env, val);
}
