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
// What our perf events put in a SIGTRAP's si_perf_data (attr.sig_data):
// tells their signals from the program's own breakpoints and perf events.
inline constexpr unsigned long kPerfSigData = 0x5343414c414e4131ul; // "SCALANA1"
// The same for the off-CPU source's context-switch events (off_cpu.cpp).
inline constexpr unsigned long kSwitchSigData = 0x5343414c414e4132ul; // "SCALANA2"
// si_perf_data of a SIGTRAP with si_code TRAP_PERF. glibc 2.36 does not name
// the field: in the kernel's siginfo it is the first word of the union after
// si_addr.
inline unsigned long PerfSigData(const siginfo_t *si) {
  return *reinterpret_cast<const unsigned long *>(reinterpret_cast<const char *>(&si->si_addr) +
                                                  sizeof(void *));
}
// The program set a handler of its own for the sampling signal's number.
// Async-signal-safe.
bool ProgramHandlesSamplingSignal();
} // namespace scalana::rt
