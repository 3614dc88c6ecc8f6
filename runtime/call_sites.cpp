#include "call_sites.h"

#include "runtime.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <unordered_map>

namespace scalana::rt {
namespace call_sites {
namespace {

// Bounded: a program whose stacks vary without end (alloca in a recursion)
// starts over rather than grow. Contexts already interned are kept by the
// recorder; only the shortcut is lost.
constexpr size_t kMaxEntries = 4096;

// Unwinds from here, skipping frames until the one that returns to RA with
// its stack at FA's caller, and fills E with every later frame's return
// address and slot. x86-64: a call pushes its return address just below the
// caller's stack pointer, so the slot of frame j's return address is its SP
// minus 8. Elsewhere slots are not recorded and every call is unwound.
// While set, this thread's sampler counts its samples instead of unwinding:
// libunwind's per-thread cache must not be re-entered. Only the unwind needs
// it, so the samples of a call-site cache hit are attributed as usual.
struct UnwindingGuard {
  ThreadSamples *t = CurrentThread();
  UnwindingGuard() {
    if (t)
      t->unwinding = 1;
  }
  ~UnwindingGuard() {
    if (t)
      t->unwinding = 0;
  }
};

void Unwind(const Key &key, Entry &e) {
  const uintptr_t ra = key.ra;
  UnwindingGuard guard;
  e.slots.clear();
  e.checkable = false;
  void *raw[kMaxRawFrames];
  int n = 0;
  unw_context_t uc;
  unw_cursor_t cursor;
  bool found = false;
  if (unw_getcontext(&uc) == 0 && unw_init_local(&cursor, &uc) == 0) {
    do {
      unw_word_t ip = 0, sp = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      unw_get_reg(&cursor, UNW_REG_SP, &sp);
      if (!found) {
        found = ip == ra;
        if (!found)
          continue;
      }
      if (n == kMaxRawFrames)
        break;
      raw[n++] = reinterpret_cast<void *>(ip);
#if defined(__x86_64__)
      if (n > 1)
        e.slots.push_back(Slot{uintptr_t(sp) - 8, uintptr_t(ip)});
#endif
    } while (unw_step(&cursor) > 0);
  }
  uint64_t out[kMaxProgramFrames + 1];
  uint32_t len = 0;
  if (found) {
    len = ProgramContext(raw, n, 0, false, n == kMaxRawFrames, out);
#if defined(__x86_64__)
    e.checkable = n < kMaxRawFrames;
#endif
  } else {
    len = CaptureContext(0, out); // could not find the caller's frame: unwind plainly
  }
  // A worker's calls sit under the fork's context, as its samples do
  // (WithForkFrames): not after a truncated context, nor past the limit.
  e.frames.clear();
  if (key.fork && !(len && out[0] == kFramesTruncated) &&
      len + key.fork_length <= kMaxProgramFrames + 1)
    e.frames.assign(key.fork, key.fork + key.fork_length);
  e.frames.insert(e.frames.end(), out, out + len);
}

} // namespace

Entry &Lookup(Cache &cache, Key key) {
  auto &entries = cache.entries;
  if (entries.size() >= kMaxEntries) {
    entries.clear();
    for (Cache::Recent &r : cache.recent)
      r = Cache::Recent{};
  }
  Chains &chains = entries[key];
  Entry *e = nullptr;
  for (unsigned i = 0; i < chains.used && !e; ++i)
    if (StillValid(chains.chain[i]))
      e = &chains.chain[i];
  if (!e) {
    // A chain not seen with this key (or no longer held): a free entry, or
    // the oldest one's, whose count belongs to its own context.
    if (chains.used < Chains::kChains) {
      e = &chains.chain[chains.used++];
    } else {
      e = &chains.chain[chains.next];
      chains.next = (chains.next + 1) % Chains::kChains;
      e->calls = 0;
      e->index = Entry::kNoIndex;
    }
    Unwind(key, *e);
  }
  Cache::Recent *slot = nullptr; // an entry already among the recent keeps its slot
  for (Cache::Recent &r : cache.recent)
    if (r.entry == e)
      slot = &r;
  if (!slot) {
    slot = &cache.recent[cache.next_recent];
    cache.next_recent = (cache.next_recent + 1) % Cache::kRecent;
  }
  *slot = Cache::Recent{key, e};
  return *e;
}

} // namespace call_sites
} // namespace scalana::rt
