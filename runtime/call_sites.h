// The calling context of each MPI call, without unwinding the whole stack on
// every call (docs/runtime.md, "Contexts of MPI calls").
//
// A program that makes millions of MPI calls per second makes them from a
// handful of call sites, each reached through a handful of paths. The key
// (return address into the program, the wrapper's frame address) identifies
// the call site and the stack depth; a full unwind is done once per key and
// remembers, for every frame, the stack slot its return address was read
// from. Later calls with the same key check that each of those slots still
// holds the same return address: if so, the stack holds exactly the same
// chain of calls (each frame's position follows from the one inside it), so
// the context is the same; if not, the key is unwound again. This is the
// idea of inferred call-path profiling (call site + stack height), made exact
// by the check.
#pragma once

#include "signal_safe/thread_samples.h"

#include <cstdint>
#include <vector>

namespace scalana::rt {

struct CallSiteContext {
  const uint64_t *frames = nullptr; // the recorded context (program frames)
  uint32_t length = 0;
  uint64_t *calls = nullptr; // calls seen on this thread with this context
  // The recorder's index of the context, kNoIndex until it interns it.
  uint32_t *index = nullptr;
  static constexpr uint32_t kNoIndex = UINT32_MAX;
};

// The context of the MPI call whose wrapper returns to RETURN_ADDRESS and
// has frame address FRAME_ADDRESS (__builtin_return_address(0) and
// __builtin_frame_address(0) in the wrapper). Not async-signal-safe (it may
// allocate); it keeps the sampler out of libunwind while it unwinds
// (ThreadSamples::unwinding). The result stays valid until the next call on
// this thread.
CallSiteContext ContextOfCall(const void *return_address, const void *frame_address);

} // namespace scalana::rt
