// Entry points that run in signal context (see handlers.cpp for the rules).
#pragma once

#include <signal.h>

namespace scalana::rt {
void ItimerSignalHandler(int sig, siginfo_t *info, void *ucontext);
void PapiOverflowHandler(int event_set, void *address, long long overflow_vector, void *context);
} // namespace scalana::rt
