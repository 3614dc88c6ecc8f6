// A signal disposition the program asked for but the kernel does not hold as
// such (signal_guard.cpp, blocked_time.cpp): our handler stands in the
// kernel's table and hands the signal on to the program's handler.
#pragma once

#include <signal.h>

#include <atomic>

namespace scalana::rt {

// Two copies, the live one named by an index: a handler reads a copy that
// no writer touches (writers fill the other, then flip). Writers take the
// spin lock with all signals blocked, so a handler that calls sigaction()
// cannot deadlock against the code it interrupted. Zero: SIG_DFL.
struct ProgramAction {
  struct sigaction act[2];
  std::atomic<int> live{0};
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
};

// Sets A's action to ACT (when given), returning the one before in OLD
// (when given). A handler may call it (see the lock above).
void SetProgramAction(ProgramAction &a, const struct sigaction *act, struct sigaction *old);

// A's live action (async-signal-safe).
inline const struct sigaction &LiveAction(const ProgramAction &a) {
  return a.act[a.live.load(std::memory_order_acquire)];
}

// The sampling signal, 0 while the runtime is inactive or has none.
int SamplingSignal();

// sigaction() of the program for a signal SIG that is not the sampling
// signal OURS (blocked_time.cpp): a handler whose mask holds OURS is
// wrapped, so that the time it runs counts as blocked.
int WatchedSigaction(int sig, int ours, const struct sigaction *act, struct sigaction *old);

} // namespace scalana::rt
