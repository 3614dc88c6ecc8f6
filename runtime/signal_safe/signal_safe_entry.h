// Entry points that run in signal context (see handlers.cpp for the rules).
#pragma once

#include <signal.h>

namespace scalana::rt {
// The handler of the sampling signal, for both sources (the POSIX timer and
// the perf event).
void SampleSignalHandler(int sig, siginfo_t *info, void *ucontext);
// The value our POSIX timers carry (sigev_value), which tells their signals
// from the program's on the same number.
void *SamplingTimerTag();
// Hands a signal on the sampling signal's number that is not ours to the
// disposition the program set for it (signal_guard.cpp): its handler, or
// the default action. Async-signal-safe.
void ForwardToProgram(int sig, siginfo_t *info, void *ucontext);
// The program set a handler of its own for the sampling signal's number.
// Async-signal-safe.
bool ProgramHandlesSamplingSignal();
} // namespace scalana::rt
