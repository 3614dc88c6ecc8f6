// Process-wide state of libscalana-rt shared by its parts (sampler, MPI
// recorder, output). Not a public interface.
#pragma once

#include "signal_safe/thread_samples.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace scalana::rt {

struct SamplerState {
  std::string source = "none"; // as written to meta.sampling.source
  double hz = 0;
  std::vector<std::string> counters; // real counters read at each sample
  std::string note;
  bool use_papi = false, papi_presets = false;
  int papi_overflow_event = 0;
  long long papi_threshold = 0;
  std::vector<int> papi_counter_events;
  double seconds_per_sample = 0;
  int signal = 0; // the timer's signal (itimer-prof), 0 otherwise
};

SamplerState &Sampler();
// This thread's sample table (initial-exec TLS: safe to read in a handler).
ThreadSamples *CurrentThread();
// Called on the main thread at load and by the pthread_create trampoline.
void StartThread(ThreadSamples *t);
void StopThread(ThreadSamples *t);
void StopSampling();
int ThreadCount();
// What the program did to signals and timers profilers use (its own SIGPROF
// profiling, or taking over the sampling signal), for the profile's note;
// counts the latter as an error. Empty when nothing.
std::string SignalCheck();

// Runtime-internal failures, reported in the profile's `errors`.
void CountError(const char *what) noexcept;
std::map<std::string, uint64_t> ErrorCounts();

double Now(); // monotonic seconds
bool Verbose();
int WorldRank(); // -1 before MPI_Init
std::string StartTimeUtc();

} // namespace scalana::rt
