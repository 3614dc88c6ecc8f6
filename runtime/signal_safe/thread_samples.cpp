#include "thread_samples.h"

#include <sys/mman.h>

namespace scalana::rt {

std::atomic<bool> g_sampling_enabled{false};
namespace {
std::atomic<ThreadSamples *> g_registry{nullptr};

// FNV-1a over the ids: cheap, no tables, and never 0 (0 marks empty slots).
inline uint64_t HashIds(const uint64_t *ids, uint32_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= ids[i];
    h *= 0x100000001b3ull;
  }
  return h ? h : 1;
}
} // namespace

ThreadSamples *NewThreadSamples() {
  // mmap, not malloc: called from the pthread_create trampoline of threads
  // that may start while another thread holds the malloc lock in a handler-
  // unsafe state; mmap is a plain syscall. Pages are zero-filled.
  void *p = mmap(nullptr, sizeof(ThreadSamples), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  auto *t = static_cast<ThreadSamples *>(p);
  t->papi_eventset = -1;
  // Lock-free push: threads start concurrently.
  ThreadSamples *head = g_registry.load(std::memory_order_relaxed);
  do {
    t->next = head;
  } while (!g_registry.compare_exchange_weak(head, t, std::memory_order_release,
                                             std::memory_order_relaxed));
  return t;
}

ThreadSamples *FirstThreadSamples() { return g_registry.load(std::memory_order_acquire); }

// One writer per table, no atomics: sampling signals are thread-directed and
// blocked while their own handler runs (no SA_NODEFER), so a handler never
// interrupts another insert into the same table.
void RecordSample(ThreadSamples *t, uint64_t weight, const long long *counters) {
  // Fixed-size local copy of the context: the handler owns its stack frame,
  // and copying first means the table never holds a half-updated context.
  uint64_t ids[SCALANA_CTX_STACK_CAP + 1];
  uint32_t n = 0;
  const volatile ScalanaThreadContext *ctx = t->ctx;
  if (!ctx) {
    ids[n++] = 0; // the "unknown" context: binary not built with the wrappers
    t->ctx_missing += weight;
  } else {
    uint32_t depth = ctx->depth;
    if (depth > SCALANA_CTX_STACK_CAP) {
      // Truncated: the ring buffer wrapped, only `vertex` is trustworthy.
      t->ctx_truncated += weight;
      depth = 0;
    }
    for (uint32_t i = 0; i < depth; ++i)
      ids[n++] = ctx->call_sites[i];
    ids[n++] = ctx->vertex;
  }
  t->samples += weight;
  uint64_t h = HashIds(ids, n);
  for (uint32_t probe = 0; probe < kSampleSlots; ++probe) {
    SampleSlot &s = t->slots[(h + probe) & (kSampleSlots - 1)];
    if (s.hash == 0) {
      // Full arena, or a probe chain so long that the table is effectively
      // full: drop (counted) rather than loop or allocate in a handler.
      if (t->ids_used + n > kIdArenaWords || probe > kSampleSlots / 2)
        break;
      for (uint32_t i = 0; i < n; ++i)
        t->ids[t->ids_used + i] = ids[i];
      s.ids_offset = t->ids_used;
      s.ids_length = n;
      t->ids_used += n;
      // Publish the slot last (compiler fence, same thread): the finalize
      // reader skips slots whose hash is 0, so it never sees a slot whose ids
      // are not written yet.
      std::atomic_signal_fence(std::memory_order_release);
      s.hash = h;
    } else if (s.hash != h || s.ids_length != n) {
      continue;
    } else {
      bool same = true;
      for (uint32_t i = 0; i < n && same; ++i)
        same = t->ids[s.ids_offset + i] == ids[i];
      if (!same)
        continue;
    }
    s.samples += weight;
    if (counters)
      for (int c = 0; c < t->counter_count; ++c)
        s.counters[c] += uint64_t(counters[c]);
    return;
  }
  t->dropped += weight; // table or arena full: counted, reported in the profile
}

} // namespace scalana::rt
