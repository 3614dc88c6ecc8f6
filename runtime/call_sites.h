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

#include "late_thread_local.h"
#include "signal_safe/thread_samples.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace scalana::rt {

namespace call_sites {

struct Slot {
  uintptr_t address; // where the return address was stored
  uintptr_t value;   // the return address
};

struct Entry {
  std::vector<Slot> slots; // the frames outside the key frame; empty: check impossible
  std::vector<uint64_t> frames;
  uint64_t calls = 0; // calls seen on this thread with this context
  // The recorder's index of the context, kNoIndex until it interns it.
  uint32_t index = kNoIndex;
  bool checkable = false;
  static constexpr uint32_t kNoIndex = UINT32_MAX;
};

// FORK: an OpenMP worker's fork context (ThreadSamples::fork_frames, interned
// by the OMPT tool, so one pointer per context), prefixed to the frames. A
// worker's stack starts at the region's body and is the same whichever
// caller forked the region: without it in the key, the first region's
// caller would hold every later region's calls.
struct Key {
  uintptr_t ra, fa;
  const uint64_t *fork;
  uint32_t fork_length;
  bool operator==(const Key &o) const { return ra == o.ra && fa == o.fa && fork == o.fork; }
};
struct KeyHash {
  size_t operator()(const Key &k) const {
    return size_t(k.ra * 0x9e3779b97f4a7c15ull ^ k.fa ^ uintptr_t(k.fork) * 0xff51afd7ed558ccdull);
  }
};

// The chains of calls seen with one key. A helper that wraps an MPI call
// (Quicksilver's one-line MPI_Test and MPI_Wait wrappers, utilsMpi.cc) is
// reached from several callers whose frames lie at the same depth: same
// key, different chains. With one entry per key, callers taking turns
// unwound on every call (two callers of one MPI_Test: 13.1 CPU s against
// 0.46 s for one, and 95% of the samples lost while unwinding); a few
// entries per key keep each chain's.
struct Chains {
  static constexpr unsigned kChains = 4;
  Entry chain[kChains];
  unsigned used = 0, next = 0; // entries in use; the one replaced next, round robin
};

// This thread's entries. A loop of MPI calls repeats a few keys, often in
// turn (Irecv, Isend, Test, Test...): the last entries looked up are
// compared first, without hashing (entries of an unordered_map stay put).
// Not a direct-mapped table: two of a loop's three call sites would share
// a slot one time in three, and miss on every call.
struct Cache {
  std::unordered_map<Key, Chains, KeyHash> entries;
  struct Recent {
    Key key{0, 0, nullptr, 0};
    Entry *entry = nullptr;
  };
  static constexpr unsigned kRecent = 6;
  Recent recent[kRecent];
  unsigned next_recent = 0; // replaced next, round robin
};

// Whether the stack still holds the chain of calls E was unwound from.
inline bool StillValid(const Entry &e) {
  if (!e.checkable)
    return false;
  for (const Slot &s : e.slots)
    if (*reinterpret_cast<const uintptr_t *>(s.address) != s.value)
      return false;
  return true;
}

// Every other case: a new key, or a key whose chain of calls changed.
Entry &Lookup(Cache &cache, Key key);

} // namespace call_sites

// The key of a call on thread T (null: not sampled) whose wrapper returns to
// RETURN_ADDRESS and has frame address FRAME_ADDRESS.
inline call_sites::Key CallSiteKey(const ThreadSamples *t, const void *return_address,
                                   const void *frame_address) {
  const uint64_t *fork = t ? t->fork_frames : nullptr;
  uint32_t length = fork ? t->fork_frames_length : 0;
  return call_sites::Key{uintptr_t(return_address), uintptr_t(frame_address),
                         length ? fork : nullptr, length};
}

// The call site of KEY (__builtin_return_address(0) and
// __builtin_frame_address(0) in the wrapper, and the thread's fork context),
// if it is one of this thread's last few, still valid and interned: the
// common case, a few loads, inline. Null otherwise; then ContextOfCall does
// the rest.
inline call_sites::Entry *RecentCallSite(const call_sites::Key &key) {
  call_sites::Cache *cache = LateThreadLocal<call_sites::Cache>::Peek();
  if (!cache)
    return nullptr;
  // An empty slot's key {0, 0} is no call's.
  for (const call_sites::Cache::Recent &r : cache->recent)
    if (r.key == key && r.entry->index != call_sites::Entry::kNoIndex &&
        call_sites::StillValid(*r.entry))
      return r.entry;
  return nullptr;
}

// The same call site's entry in every case (its frames are the context, its
// index may still be kNoIndex). Not async-signal-safe (it may allocate); it
// keeps the sampler out of libunwind while it unwinds
// (ThreadSamples::unwinding). Valid until the next call on this thread.
inline call_sites::Entry &ContextOfCall(const call_sites::Key &key) {
  return call_sites::Lookup(LateThreadLocal<call_sites::Cache>::Get(), key);
}

} // namespace scalana::rt
