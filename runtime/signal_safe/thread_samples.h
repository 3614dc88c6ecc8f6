// Per-thread sample storage written from the sampling signal handler.
//
// Everything here may run inside a signal handler that interrupted arbitrary
// code (malloc, a lock holder, stdio), so: no allocation, no locks, no stdio,
// no exceptions, only plain stores into memory mapped before sampling starts.
// Each thread writes only its own table (signals are thread-directed), so no
// atomics are needed between writers; the reader (finalize) stops sampling
// first.
#pragma once

#include "scalana/context.h"

#include <atomic>
#include <cstdint>

namespace scalana::rt {

inline constexpr int kMaxCounters = 8;
inline constexpr uint32_t kSampleSlots = 4096;      // power of two: masked probing
inline constexpr uint32_t kIdArenaWords = 1u << 16; // raw ids of all distinct contexts

struct SampleSlot {
  uint64_t hash; // 0: empty
  uint32_t ids_offset, ids_length;
  uint64_t samples;
  uint64_t counters[kMaxCounters];
};

struct ThreadSamples {
  // The thread's instrumentation context (dlsym result), or null when the
  // program was not built with the ScalAna wrappers.
  const volatile ScalanaThreadContext *ctx;
  uint64_t samples, dropped, ctx_missing, ctx_truncated;
  uint32_t ids_used;
  int counter_count;
  long long last_counters[kMaxCounters];   // previous reading, for deltas
  long long read_buffer[kMaxCounters + 1]; // PAPI_read target: counters, then the clock
  int papi_eventset;
  void *posix_timer;   // timer_t of the itimer source
  ThreadSamples *next; // registry of all threads, never unlinked
  SampleSlot slots[kSampleSlots];
  uint64_t ids[kIdArenaWords];
};

// Allocates a zeroed table with mmap (never from the handler) and links it
// into the registry. Returns null when memory is exhausted.
ThreadSamples *NewThreadSamples();
ThreadSamples *FirstThreadSamples();

// The handler's work: attribute WEIGHT samples (and counter deltas, if any)
// to the thread's current context. Async-signal-safe.
void RecordSample(ThreadSamples *t, uint64_t weight, const long long *counters);

// Set while sampling is on; the handler checks it first so finalize can read
// the tables without racing new inserts.
extern std::atomic<bool> g_sampling_enabled;

} // namespace scalana::rt
