// The tables a thread's record keeps (recorder.cpp, ThreadRec): MPI rows by
// context, dependence rows by (context, kind, peer, tag, communicator) and
// pending non-blocking operations by handle. Only recorder.cpp includes it;
// the types are the recorder's own.
#pragma once

#include "scalana/context_hash.h"
#include "scalana/profile.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

namespace scalana::rt::recorder_tables {

inline uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// Only the owning thread writes a record's MPI rows, most calls without the
// record's lock (MpiCall's destructor), while a snapshot may read them under
// it: both sides use relaxed atomic accesses, which on x86-64 are plain
// loads and stores. The lock still orders what matters: only the owner
// resizes the rows, and it does that holding the lock.
struct MpiAgg {
  uint64_t calls = 0, bytes = 0;
  double seconds = 0;
  // The operation of the context's first call: a string literal of the
  // wrappers, so the pointer stays valid. A call site is one instruction
  // and calls one operation, but for calls through a pointer.
  const char *op = nullptr;
};

template <typename T> T RelaxedLoad(const T &v) {
  T out;
  __atomic_load(&v, &out, __ATOMIC_RELAXED);
  return out;
}
template <typename T> void RelaxedAdd(T &v, T d) {
  T sum = RelaxedLoad(v) + d;
  __atomic_store(&v, &sum, __ATOMIC_RELAXED);
}

struct DepKey {
  uint32_t ctx;
  DepKind kind;
  int32_t peer, tag;
  uint32_t comm;
  bool operator<(const DepKey &o) const {
    return std::tie(ctx, kind, peer, tag, comm) < std::tie(o.ctx, o.kind, o.peer, o.tag, o.comm);
  }
  bool operator==(const DepKey &o) const {
    return ctx == o.ctx && kind == o.kind && peer == o.peer && tag == o.tag && comm == o.comm;
  }
  uint64_t Hash() const {
    return Mix((uint64_t(ctx) << 32 | uint32_t(peer)) * 0x9e3779b97f4a7c15ull ^
               (uint64_t(uint32_t(tag)) << 32 | uint64_t(comm) << 3 | uint64_t(kind)));
  }
};

// COUNT, BYTES and WAIT are written and read like MpiAgg's fields; SEQS
// change only under the record's lock (AddUnnumberedDep).
struct DepAgg {
  uint64_t count = 0, bytes = 0;
  double wait = 0;
  SeqRanges seqs;
  void Add(uint64_t n, uint64_t b, double w) {
    RelaxedAdd(count, n);
    RelaxedAdd(bytes, b);
    RelaxedAdd(wait, w);
  }
};

// Open addressing, linear probing; rows are never removed. The last four
// rows used are checked first: a loop of calls records a few rows over and
// over (an exchange: a send and a receive, each on its posting and its
// completing context).
class DepTable {
public:
  // The row of K, or null. Changes nothing another thread reads (only the
  // memo, which is the owner's).
  DepAgg *Find(const DepKey &k) {
    if (DepAgg *d = Recent(k))
      return d;
    if (slots_.empty())
      return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = k.Hash() & mask; slots_[i].used; i = (i + 1) & mask)
      if (slots_[i].key == k)
        return Remember(k, slots_[i].agg);
    return nullptr;
  }
  DepAgg &At(const DepKey &k) {
    if (DepAgg *d = Recent(k))
      return *d;
    return Probe(k);
  }
  template <typename F> void ForEach(F &&f) const {
    for (const Slot &s : slots_)
      if (s.used)
        f(s.key, s.agg);
  }

private:
  __attribute__((noinline)) DepAgg &Probe(const DepKey &k) {
    if ((used_ + 1) * 2 > slots_.size())
      Grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = k.Hash() & mask;; i = (i + 1) & mask) {
      Slot &s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.key = k;
        ++used_;
      } else if (!(s.key == k)) {
        continue;
      }
      return *Remember(k, s.agg);
    }
  }
  struct Slot {
    bool used = false;
    DepKey key{};
    DepAgg agg;
  };
  DepAgg *Recent(const DepKey &k) const {
    for (const Memo &m : memo_)
      if (m.agg && m.key == k)
        return m.agg;
    return nullptr;
  }
  DepAgg *Remember(const DepKey &k, DepAgg &agg) {
    memo_[next_memo_] = Memo{k, &agg};
    next_memo_ = (next_memo_ + 1) % kMemo;
    return &agg;
  }
  void Grow() {
    for (Memo &m : memo_)
      m.agg = nullptr;
    std::vector<Slot> old(std::max<size_t>(64, slots_.size() * 2));
    old.swap(slots_);
    used_ = 0;
    for (Slot &s : old)
      if (s.used)
        At(s.key) = s.agg;
  }
  struct Memo {
    DepKey key{};
    DepAgg *agg = nullptr;
  };
  std::vector<Slot> slots_;
  size_t used_ = 0;
  static constexpr unsigned kMemo = 4;
  Memo memo_[kMemo];
  unsigned next_memo_ = 0;
};

// A communicator (or window) as world ranks: its index in the profile's
// comms and the world ranks its peer numbers name (the remote group of an
// intercommunicator). PEERS points into storage interned by content and
// never freed, so requests and caches may keep it after the handle is gone.
struct GroupInfo {
  uint32_t comm_index = 0;
  const std::vector<int> *peers = nullptr;
};

struct Request {
  MPI_Request handle;
  uint32_t ctx;
  DepKind kind;
  bool persistent;
  int32_t peer; // world rank, or MPI_ANY_SOURCE for receives
  int32_t tag;
  GroupInfo group;
  uint64_t bytes;
  uint32_t weight;
  uint32_t poll_ctx; // where it was polled (Polled), valid when polled > 0
  double polled;     // seconds of polling that completed nothing
  uint64_t seq;      // sends: the message's number on its channel, 0 if none
};

// Pending non-blocking operations by handle. A handle can stand for several
// at once: Open MPI hands the same (already complete) request to every send
// it finished eagerly, and Fortran sees one integer for all of them.
// Completions take the oldest, matching the order in which the program waits
// for what it posted. An open-addressing map (tombstones) from handle to a
// FIFO of nodes in a pool: posting and completing stay O(1) however many
// operations share a handle.
class RequestTable {
public:
  // A new entry for HANDLE, after the ones it already has, built in place
  // by the caller's FILL(Request &): copying a Request assembled on
  // the stack stalls on store forwarding (wide loads of narrower stores
  // still in flight), which cost as much as the rest of the insertion.
  template <typename F> void Insert(MPI_Request handle, F &&fill) {
    uint32_t node = NewNode();
    Request &r = nodes_[node].r;
    fill(r);
    r.handle = handle;
    if ((used_ + dead_ + 1) * 4 > slots_.size() * 3)
      Rehash();
    // One probe: the handle's slot if it has one, else the first free one.
    size_t mask = slots_.size() - 1;
    Slot *free_slot = nullptr;
    for (size_t i = Hash(handle) & mask;; i = (i + 1) & mask) {
      Slot &s = slots_[i];
      if (s.state == kUsed) {
        if (s.handle == handle) {
          nodes_[s.tail].next = node;
          s.tail = node;
          return;
        }
        continue;
      }
      if (!free_slot)
        free_slot = &s;
      if (s.state == kEmpty)
        break;
    }
    dead_ -= free_slot->state == kDead;
    *free_slot = Slot{kUsed, handle, node, node};
    ++used_;
  }
  // The oldest entry for HANDLE, or null. Valid until the next Insert.
  Request *Find(MPI_Request handle) {
    found_ = FindSlot(handle);
    return found_ ? &nodes_[found_->head].r : nullptr;
  }
  // Removes the oldest entry for HANDLE (the one Find returns).
  void PopOldest(MPI_Request handle) {
    // Completions find, then pop: the slot Find saw saves a second probe.
    Slot *s =
        found_ && found_->state == kUsed && found_->handle == handle ? found_ : FindSlot(handle);
    if (!s)
      return;
    uint32_t node = s->head;
    if (node == s->tail) {
      s->state = kDead;
      --used_;
      ++dead_;
    } else {
      s->head = nodes_[node].next;
    }
    nodes_[node].next = free_;
    free_ = node;
  }

private:
  static constexpr uint32_t kNone = UINT32_MAX;
  enum : uint8_t { kEmpty, kUsed, kDead };
  struct Slot {
    uint8_t state = kEmpty;
    MPI_Request handle{};
    uint32_t head = kNone, tail = kNone;
  };
  struct Node {
    Request r;
    uint32_t next;
  };
  static uint64_t Hash(MPI_Request h) {
    uint64_t v = 0;
    std::memcpy(&v, &h, std::min(sizeof h, sizeof v));
    return Mix(v);
  }
  Slot *FindSlot(MPI_Request handle) {
    if (!used_)
      return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(handle) & mask; slots_[i].state != kEmpty; i = (i + 1) & mask)
      if (slots_[i].state == kUsed && slots_[i].handle == handle)
        return &slots_[i];
    return nullptr;
  }
  uint32_t NewNode() {
    uint32_t node = free_;
    if (node != kNone) {
      free_ = nodes_[node].next;
    } else {
      node = uint32_t(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[node].next = kNone;
    return node;
  }
  void Rehash() {
    found_ = nullptr;
    size_t size = std::max<size_t>(64, slots_.size());
    if ((used_ + 1) * 2 > size)
      size *= 2;
    std::vector<Slot> old(size);
    old.swap(slots_);
    used_ = dead_ = 0;
    size_t mask = slots_.size() - 1;
    for (const Slot &o : old) {
      if (o.state != kUsed)
        continue;
      size_t i = Hash(o.handle) & mask;
      while (slots_[i].state == kUsed)
        i = (i + 1) & mask;
      slots_[i] = o;
      ++used_;
    }
  }
  std::vector<Slot> slots_;
  std::vector<Node> nodes_;
  Slot *found_ = nullptr; // the slot Find returned last (reset by Rehash)
  uint32_t free_ = kNone;
  size_t used_ = 0, dead_ = 0;
};

// One-sided operations issued on this thread and not yet completed by a
// synchronisation, per (window, target rank in the window's group): the
// operation only counts itself; its target becomes a world rank when a
// synchronisation completes it, once per target and epoch.
struct PendingRma {
  uint64_t ops = 0;
};
struct WinTarget {
  MPI_Win win;
  int32_t target; // in the window's group
  bool operator==(const WinTarget &o) const { return win == o.win && target == o.target; }
};
struct WinTargetHash {
  size_t operator()(const WinTarget &k) const {
    uint64_t v = 0;
    std::memcpy(&v, &k.win, std::min(sizeof k.win, sizeof v));
    return size_t(Mix(v ^ uint64_t(uint32_t(k.target)) << 40));
  }
};

} // namespace scalana::rt::recorder_tables
