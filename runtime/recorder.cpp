// MPI call and dependence recording behind the generated wrappers.
//
// Per-call path (docs/runtime.md, "Cost of a wrapped call"): every thread
// aggregates into its own ThreadRec (MPI rows by context index, dependence
// rows and pending requests in open-addressing tables). A lock guards what
// other threads touch: the writer thread reads the rows for a snapshot, and
// a thread may complete a request another one posted; a call takes it at
// most once, and below MPI_THREAD_MULTIPLE with no atomic instruction
// (RecordLock). Nothing is merged until a snapshot: the common call takes
// no shared lock, allocates nothing and touches no cache line another
// thread writes, except the counter of its message channel.
#include "recorder.h"
#include "recorder_tables.h"
#include "thread_snapshot.h"

#include "call_sites.h"
#include "config.h"
#include "late_thread_local.h"
#include "record_lock.h"
#include "runtime.h"
#include "wall_clock.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace scalana::rt {

// Defined in output.cpp and writer.cpp.
void WriteFinalProfile() noexcept;

using namespace recorder_tables;

namespace {

constexpr double kOwnerLockSeconds = 2.0, kPeerLockSeconds = 0.1;

} // namespace

// What one thread recorded. Created at the thread's first recorded call,
// linked into a list that is never shortened (the writer reads it without a
// lock); a thread that ends leaves its data there and its record to the
// next new thread, which adds to it. One thread at a time owns a record.
// LOCK guards what other threads touch: the writer reads MPI and dependence
// rows, a thread completing a request another one posted changes REQUESTS.
// The rest is the owner's alone and needs no lock.
struct ThreadRec {
  RecordLock lock;
  ThreadRec *next = nullptr;
  std::atomic<bool> orphan{false};
  std::vector<MpiAgg> mpi; // by context index; resized under LOCK (MpiAgg)
  DepTable deps;
  RequestTable requests;
  // Owner only.
  std::unordered_map<WinTarget, PendingRma, WinTargetHash> pending_rma;
  // The entry used last (elements of an unordered_map stay put); reset when
  // entries are erased.
  WinTarget last_pending_key{};
  PendingRma *last_pending = nullptr;
  std::unordered_map<MPI_Win, std::vector<int>> posted; // Win_post origins (world ranks)
};

namespace {

std::atomic<ThreadRec *> g_recs{nullptr};

ThreadRec *NewThreadRec() {
  for (ThreadRec *r = g_recs.load(std::memory_order_acquire); r; r = r->next) {
    bool orphan = true;
    if (r->orphan.load(std::memory_order_relaxed) &&
        r->orphan.compare_exchange_strong(orphan, false))
      return r;
  }
  ThreadRec *r = new ThreadRec;
  ThreadRec *head = g_recs.load(std::memory_order_relaxed);
  do
    r->next = head;
  while (
      !g_recs.compare_exchange_weak(head, r, std::memory_order_release, std::memory_order_relaxed));
  return r;
}

// Initial-exec TLS: a plain offset from the thread pointer, where the
// default model for a shared library calls __tls_get_addr on every access
// (the runtime is always preloaded, so static TLS is available).
#define SCALANA_TLS thread_local __attribute__((tls_model("initial-exec")))

// This thread's hold on its record: leaves the record to a later thread when
// this one ends, after the thread's thread_local destructors, which may
// still call MPI (late_thread_local.h).
struct RecOwner {
  ThreadRec *rec = NewThreadRec();
  ~RecOwner() { rec->orphan.store(true, std::memory_order_release); }
};

ThreadRec &OwnRec() { return *LateThreadLocal<RecOwner>::Get().rec; }

// The outermost wrapped call this thread is in, as far as the wrappers
// know: its entry point's frame address, and what its destructor would
// close. A longjmp out of the call (from an MPI error handler) skips the
// destructor; the next wrapper entry finds its frame at or above that one
// (a nested call, from inside the library, is always deeper) and closes it.
struct OpenCall {
  uintptr_t frame = 0;
  const char *op = nullptr;
  uint32_t ctx = 0;
  bool active = false;
  ThreadSamples *thread = nullptr;
  ThreadRec *held = nullptr;
};
SCALANA_TLS OpenCall tl_open;

// Locks this thread's record for CALL (once per call; the destructor
// unlocks). Throws when the lock stays taken (see RecordLock).
struct LockTimeout {};
[[noreturn]] __attribute__((noinline, cold)) void ThrowLockTimeout() { throw LockTimeout{}; }
// Inline: every recorded request and message takes it.
__attribute__((always_inline)) inline ThreadRec &Hold(MpiCall &call) {
  if (call.held())
    return *call.held();
  ThreadRec &r = OwnRec();
  if (!r.lock.OwnerTryFor(kOwnerLockSeconds))
    ThrowLockTimeout();
  call.held() = &r;
  tl_open.held = &r;
  return r;
}

// ---- message channels: numbering of the messages of (peer, tag, comm)
//
// One counter per channel and direction, process-wide, in a fixed
// open-addressing table of atomics. Below MPI_THREAD_MULTIPLE no two MPI
// calls run at once, so a number is taken with a plain load and store: a
// locked instruction here, right after the message was posted, costs
// several nanoseconds (RecordLock). With MPI_THREAD_MULTIPLE it is a
// fetch_add.
// Channels are in practice used by one thread, and then the numbers follow
// MPI's matching order exactly. Hazard: when threads of an
// MPI_THREAD_MULTIPLE program send (or complete receives) on the same
// channel concurrently, every message still gets a distinct number, but the
// order of the numbers may differ from the order in which MPI matched them.
struct Channel {
  std::atomic<uint32_t> state{0}; // 0 free, 1 being claimed, 2 ready
  int32_t peer = 0, tag = 0;
  uint32_t comm_dir = 0;
  std::atomic<uint64_t> count{0};
};
constexpr size_t kChannels = size_t(1) << 16;
std::atomic<Channel *> g_channels{nullptr};
// Set at MPI_Init from the thread level MPI provides, before other threads
// may call MPI.
std::atomic<bool> g_calls_serialized{false};

uint64_t Take(std::atomic<uint64_t> &count) {
  if (g_calls_serialized.load(std::memory_order_relaxed)) {
    uint64_t next = count.load(std::memory_order_relaxed) + 1;
    count.store(next, std::memory_order_relaxed);
    return next;
  }
  return count.fetch_add(1, std::memory_order_relaxed) + 1;
}

// The next number (from 1) on the channel; 0 when the table is full.
uint64_t NextSeq(bool recv, int32_t peer, int32_t tag, uint32_t comm) {
  Channel *table = g_channels.load(std::memory_order_acquire);
  if (!table || peer < 0)
    return 0;
  uint32_t comm_dir = comm << 1 | uint32_t(recv);
  uint64_t h = Mix((uint64_t(uint32_t(peer)) << 32 | uint32_t(tag)) ^
                   uint64_t(comm_dir) * 0x9e3779b97f4a7c15ull);
  for (size_t probe = 0; probe < kChannels; ++probe) {
    Channel &c = table[(h + probe) & (kChannels - 1)];
    uint32_t st = c.state.load(std::memory_order_acquire);
    if (st == 0) {
      if (c.state.compare_exchange_strong(st, 1, std::memory_order_acquire)) {
        c.peer = peer;
        c.tag = tag;
        c.comm_dir = comm_dir;
        c.state.store(2, std::memory_order_release);
        return Take(c.count);
      }
    }
    while (st == 1) // another thread is filling in its key: a few stores
      st = c.state.load(std::memory_order_acquire);
    if (c.peer == peer && c.tag == tag && c.comm_dir == comm_dir)
      return Take(c.count);
  }
  static std::atomic<bool> told{false};
  if (!told.exchange(true))
    CountError("seq_channels_full");
  return 0;
}

// ---- process-wide state: contexts, communicators (rare, under the mutex)

struct VecHash {
  size_t operator()(const std::vector<int> &v) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int x : v)
      h = (h ^ uint32_t(x)) * 0x100000001b3ull;
    return size_t(h);
  }
};

struct State {
  // Timed: the writer thread must not wait forever for a lock that a thread
  // stopped by a fatal signal may hold (snapshots take it with a timeout).
  std::timed_mutex mu;
  std::unordered_map<Context, uint32_t, ContextHash> context_index;
  std::vector<Context> contexts;
  std::map<std::vector<int>, uint32_t> comm_index;
  std::vector<std::vector<int>> comms;
  // Peer lists by content, never freed (GroupInfo::peers points here).
  std::unordered_map<std::vector<int>, std::unique_ptr<const std::vector<int>>, VecHash> peer_lists;
  std::unordered_map<MPI_Comm, GroupInfo> comm_cache;
  std::unordered_map<MPI_Win, GroupInfo> win_cache;
};

State &S() {
  static State *s = new State; // leaked: exit-time writers still use it
  return *s;
}

// Bumped whenever a communicator or window handle is created or freed: the
// threads' caches of handle -> group drop their entries when they see it
// change (a freed handle's value may name a new communicator).
std::atomic<uint64_t> g_handles_generation{1};

// ---- the call clock
//
// Two clock reads per call: CLOCK_MONOTONIC through the vDSO costs about
// 50 ns here (a VM), the time-stamp counter about 20 ns. The counter is used only where the
// kernel itself keeps time with it (current clocksource "tsc": invariant and
// synchronised across CPUs, else the kernel would have rejected it), and only
// once calibrated against CLOCK_MONOTONIC over the span from library load
// to the end of MPI_Init (tens of milliseconds at least); calls before that
// use the monotonic clock. Hazard: a thread that migrates between CPUs
// mid-call could see a counter step back if they were not synchronised;
// negative spans are clamped to 0.
uint64_t Ticks() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return MonotonicNs();
#endif
}

struct TickClock {
  bool usable = false;
  uint64_t ticks0 = 0, ns0 = 0;
  TickClock() {
#if defined(__x86_64__)
    usable = KernelKeepsTimeWithTsc();
    ticks0 = Ticks();
    ns0 = MonotonicNs();
#endif
  }
};
TickClock g_tick_clock; // at load
// Seconds per tick once calibrated; 0 until then (the monotonic clock is used).
std::atomic<double> g_seconds_per_tick{0};

void CalibrateTicks() {
  if (!g_tick_clock.usable)
    return;
  uint64_t ns = MonotonicNs(), ticks = Ticks();
  // At least 5 ms between the two readings, so their jitter stays below 1e-4.
  while (ns - g_tick_clock.ns0 < 5000000) {
    ns = MonotonicNs();
    ticks = Ticks();
  }
  if (ticks > g_tick_clock.ticks0)
    g_seconds_per_tick.store(double(ns - g_tick_clock.ns0) * 1e-9 /
                             double(ticks - g_tick_clock.ticks0));
}

std::atomic<bool> g_mpi_ready{false}; // between MPI_Init and the final write
std::atomic<bool> g_profile_done{false};
std::atomic<bool> g_init_called{false}; // this process is an MPI rank
int g_world_rank = -1, g_world_size = 0;
MPI_Group g_world_group = MPI_GROUP_NULL;
SCALANA_TLS int tl_nesting = 0;
// Set at MPI_Init, before any other MPI call: read without the lock.
std::atomic<uint64_t> g_dep_threshold{0};
std::atomic<uint64_t> g_dep_seed{0x9e3779b97f4a7c15ull};

uint32_t InternLocked(State &s, Context &&c) {
  auto it = s.context_index.find(c);
  if (it != s.context_index.end())
    return it->second;
  uint32_t index = uint32_t(s.contexts.size());
  s.contexts.push_back(c);
  s.context_index.emplace(std::move(c), index);
  return index;
}

uint32_t CommIndexLocked(State &s, std::vector<int> members) {
  auto [it, fresh] = s.comm_index.emplace(members, uint32_t(s.comms.size()));
  if (fresh)
    s.comms.push_back(std::move(members));
  return it->second;
}

const std::vector<int> *PeersLocked(State &s, std::vector<int> peers) {
  auto it = s.peer_lists.find(peers);
  if (it != s.peer_lists.end())
    return it->second.get();
  auto owned = std::make_unique<const std::vector<int>>(peers);
  const std::vector<int> *p = owned.get();
  s.peer_lists.emplace(std::move(peers), std::move(owned));
  return p;
}

std::vector<int> ToWorld(MPI_Group group) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> local(n), world(n, MPI_UNDEFINED);
  for (int i = 0; i < n; ++i)
    local[i] = i;
  if (n > 0)
    PMPI_Group_translate_ranks(group, n, local.data(), g_world_group, world.data());
  return world;
}

// Lock held. Computed once per communicator (MPI calls outside the lock would
// be nicer, but these are cheap local queries).
GroupInfo CommGroupLocked(State &s, MPI_Comm comm) {
  auto it = s.comm_cache.find(comm);
  if (it != s.comm_cache.end())
    return it->second;
  GroupInfo info;
  if (comm == MPI_COMM_NULL)
    return info;
  MPI_Group g;
  if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS) {
    CountError("comm_group");
    return info;
  }
  std::vector<int> members = ToWorld(g);
  PMPI_Group_free(&g);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter && PMPI_Comm_remote_group(comm, &g) == MPI_SUCCESS) {
    info.peers = PeersLocked(s, ToWorld(g));
    PMPI_Group_free(&g);
  } else {
    info.peers = PeersLocked(s, members);
  }
  info.comm_index = CommIndexLocked(s, std::move(members));
  s.comm_cache.emplace(comm, info);
  return info;
}

GroupInfo WinGroupLocked(State &s, MPI_Win win) {
  auto it = s.win_cache.find(win);
  if (it != s.win_cache.end())
    return it->second;
  GroupInfo info;
  MPI_Group g;
  if (win == MPI_WIN_NULL || PMPI_Win_get_group(win, &g) != MPI_SUCCESS) {
    CountError("win_group");
    return info;
  }
  std::vector<int> members = ToWorld(g);
  PMPI_Group_free(&g);
  info.peers = PeersLocked(s, members);
  info.comm_index = CommIndexLocked(s, std::move(members));
  s.win_cache.emplace(win, info);
  return info;
}

// Per-thread direct-mapped caches of handle -> group, so the common call
// does not take the process-wide mutex. Owned by the thread alone.
template <typename Handle> struct GroupCache {
  struct Entry {
    Handle handle{};
    GroupInfo info;
    bool valid = false;
  };
  static constexpr size_t kSize = 16;
  Entry entries[kSize];
  uint64_t generation = 0;

  template <typename Fill> GroupInfo Get(Handle h, Fill &&fill) {
    uint64_t gen = g_handles_generation.load(std::memory_order_acquire);
    if (gen != generation) {
      for (Entry &e : entries)
        e.valid = false;
      generation = gen;
    }
    uint64_t v = 0;
    std::memcpy(&v, &h, std::min(sizeof h, sizeof v));
    Entry &e = entries[Mix(v) & (kSize - 1)];
    if (e.valid && e.handle == h)
      return e.info;
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo info = fill(s, h);
    if (info.peers) { // failures are retried (and counted) next time
      e.handle = h;
      e.info = info;
      e.valid = true;
    }
    return info;
  }
};

// Constant-initialised: no guard on access.
SCALANA_TLS GroupCache<MPI_Comm> tl_comms;
SCALANA_TLS GroupCache<MPI_Win> tl_wins;

GroupInfo CommGroup(MPI_Comm comm) { return tl_comms.Get(comm, CommGroupLocked); }
GroupInfo WinGroup(MPI_Win win) { return tl_wins.Get(win, WinGroupLocked); }

int32_t PeerWorld(const GroupInfo &g, int peer) {
  if (peer == MPI_ANY_SOURCE)
    return MPI_ANY_SOURCE;
  if (!g.peers || peer < 0 || size_t(peer) >= g.peers->size())
    return -1;
  return (*g.peers)[size_t(peer)];
}

// SEQ: the message's number on its channel (0: none). Inline: its
// arguments alone took more instructions than its work.
__attribute__((always_inline)) inline void AddDep(ThreadRec &t, uint32_t ctx, DepKind kind,
                                                  int32_t peer, int32_t tag, uint32_t comm,
                                                  uint64_t count, uint64_t bytes, double wait,
                                                  uint64_t seq = 0) {
  DepAgg &d = t.deps.At(DepKey{ctx, kind, peer, tag, comm});
  d.Add(count, bytes, wait);
  if (seq)
    d.seqs.Add(SeqRange{seq, seq});
}

// A row with no message number (one-sided, collective): when it exists,
// added to without the lock, as the MPI rows are (MpiAgg); a new row,
// which may grow the table, takes it. Rows with numbers always take it: a
// snapshot must not see their ranges half-changed. Inline, like AddDep.
__attribute__((always_inline)) inline void AddUnnumberedDep(MpiCall &call, uint32_t ctx,
                                                            DepKind kind, int32_t peer,
                                                            uint32_t comm, uint64_t count,
                                                            uint64_t bytes, double wait) {
  if (DepAgg *d = OwnRec().deps.Find(DepKey{ctx, kind, peer, 0, comm})) {
    d->Add(count, bytes, wait);
    return;
  }
  AddDep(Hold(call), ctx, kind, peer, 0, comm, count, bytes, wait);
}

// Inlined: its try costs nothing until something throws, and each wrapped call
// goes through one or two of these.
template <typename F>
__attribute__((always_inline)) inline void Guarded(const char *what, F &&f) noexcept {
  try {
    f();
  } catch (const LockTimeout &) {
    CountError("thread_data_locked");
  } catch (...) {
    CountError(what);
  }
}

} // namespace

// ---- MpiCall

namespace {
// The first call of a call site, or of a new chain of calls to it: unwinds
// and interns the context. Out of line, so that the common call saves no
// registers for it. Null when it failed (counted).
__attribute__((noinline)) call_sites::Entry *NewCallSite(const call_sites::Key &key) noexcept {
  try {
    call_sites::Entry &e = ContextOfCall(key);
    if (e.index == call_sites::Entry::kNoIndex) {
      State &s = S();
      std::lock_guard<std::timed_mutex> lock(s.mu);
      e.index = InternLocked(s, Context(e.frames.begin(), e.frames.end()));
    }
    return &e;
  } catch (...) {
    CountError("mpi_context");
    return nullptr;
  }
}
} // namespace

MpiCall::MpiCall(const char *op, MpiClass, const void *return_address, const void *frame_address,
                 bool timed) noexcept
    : op_(op), timed_(timed) {
  if (tl_nesting > 0 && uintptr_t(frame_address) >= tl_open.frame)
    CloseAbandonedCall();
  // Calls made from inside another wrapped call belong to the outer one.
  if (tl_nesting++ > 0)
    return;
  tl_open = OpenCall{uintptr_t(frame_address), op, 0, false, nullptr, nullptr};
  if (g_profile_done.load(std::memory_order_relaxed))
    return;
  ThreadSamples *t = CurrentThread();
  const call_sites::Key key = CallSiteKey(t, return_address, frame_address);
  call_sites::Entry *e = RecentCallSite(key);
  if (!e)
    e = NewCallSite(key);
  if (e) {
    if (t) {
      // While the call runs, this thread's samples take its context instead
      // of unwinding through the MPI library.
      t->mpi_frames = e->frames.data();
      t->mpi_call_frame = uintptr_t(frame_address);
      std::atomic_signal_fence(std::memory_order_release); // frames before their length
      t->mpi_frames_length = uint32_t(e->frames.size());
      thread_ = t;
      tl_open.thread = t;
    }
    ctx_ = e->index;
    uint64_t n = ++e->calls, threshold = g_dep_threshold.load(std::memory_order_relaxed);
    if (n > threshold && threshold) {
      // Past the threshold: record parameters of 1 in 16 calls, weighted
      // 16, so counts and bytes stay unbiased estimates. Chosen by a Weyl
      // sequence over the call's number (top 4 bits of n times the golden
      // ratio, offset per rank and call site): a few instructions where a
      // random generator costs a dozen more, and, as n times an irrational
      // is equidistributed along every arithmetic progression of n, no
      // period of the program's calls can bias which ones are recorded.
      uint64_t offset = g_dep_seed.load(std::memory_order_relaxed) ^ uintptr_t(e);
      dep_weight_ = (n * 0x9e3779b97f4a7c15ull + offset) >> 60 == 0 ? 16 : 0;
    }
    active_ = true;
    tl_open.ctx = ctx_;
    tl_open.active = true;
  }
  if (!timed_)
    return;
  ticks_ = g_seconds_per_tick.load(std::memory_order_relaxed) > 0;
  start_ = ticks_ ? Ticks() : MonotonicNs();
}

// The outer call was left by a longjmp: its destructor never ran. Its
// samples stop taking its context, its lock is released, and it counts as
// one call of no known duration (`errors.mpi_call_abandoned`); the calls
// made since are recorded as the program's own.
void MpiCall::CloseAbandonedCall() noexcept {
  OpenCall open = tl_open;
  tl_open = OpenCall{};
  tl_nesting = 0;
  if (open.thread)
    open.thread->mpi_frames_length = 0;
  CountError("mpi_call_abandoned");
  ThreadRec *locked = open.held;
  if (open.active)
    Guarded("mpi_record", [&] {
      ThreadRec &t = OwnRec();
      if (!locked) {
        if (!t.lock.OwnerTryFor(kOwnerLockSeconds))
          ThrowLockTimeout();
        locked = &t;
      }
      if (t.mpi.size() <= open.ctx)
        t.mpi.resize(std::max<size_t>(open.ctx + 1, t.mpi.size() * 2));
      MpiAgg &m = t.mpi[open.ctx];
      if (!m.op)
        __atomic_store_n(&m.op, open.op, __ATOMIC_RELAXED);
      RelaxedAdd(m.calls, uint64_t(1));
    });
  if (locked)
    locked->lock.OwnerUnlock();
}

void MpiCall::StopClock() noexcept {
  if (ticks_) {
    uint64_t now = Ticks();
    seconds_ = now > start_
                   ? double(now - start_) * g_seconds_per_tick.load(std::memory_order_relaxed)
                   : 0.0;
  } else {
    uint64_t now = MonotonicNs();
    seconds_ = now > start_ ? double(now - start_) * 1e-9 : 0.0;
  }
}

MpiCall::~MpiCall() {
  if (--tl_nesting == 0)
    tl_open.frame = 0;
  if (thread_)
    thread_->mpi_frames_length = 0;
  if (active_) {
    Stop();
    Guarded("mpi_record", [&] {
      ThreadRec &t = OwnRec();
      if (t.mpi.size() <= ctx_) {
        Hold(*this);
        t.mpi.resize(std::max<size_t>(ctx_ + 1, t.mpi.size() * 2));
      }
      MpiAgg &m = t.mpi[ctx_];
      if (!m.op)
        __atomic_store_n(&m.op, op_, __ATOMIC_RELAXED);
      RelaxedAdd(m.calls, uint64_t(1));
      if (timed_)
        RelaxedAdd(m.seconds, seconds_);
      RelaxedAdd(m.bytes, bytes_);
    });
  }
  if (held_) {
    held_->lock.OwnerUnlock();
    if (tl_open.held == held_)
      tl_open.held = nullptr;
  }
}

__thread NamedTypeSize tl_named_type_sizes[kNamedTypeSlots] = {};

uint64_t BytesAskingTheLibrary(int count, MPI_Datatype type) noexcept {
  if (count <= 0 || type == MPI_DATATYPE_NULL)
    return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
    return 0;
  int ints = 0, addresses = 0, types = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &ints, &addresses, &types, &combiner) == MPI_SUCCESS &&
      combiner == MPI_COMBINER_NAMED)
    tl_named_type_sizes[NamedTypeSlot(type)] = NamedTypeSize{type, size};
  return uint64_t(count) * uint64_t(size);
}

uint64_t SumBytes(const int *counts, int n, MPI_Datatype type) noexcept {
  if (!counts)
    return 0;
  uint64_t total = 0;
  for (int i = 0; i < n; ++i)
    total += Bytes(counts[i], type);
  return total;
}

int CommSize(MPI_Comm comm) noexcept {
  int n = 0;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &n);
  return n;
}

void InitStarting() noexcept {
  // Processes this rank starts from now on are not ranks of the job: Open
  // MPI's daemon of a singleton run (forked inside PMPI_Init), programs run
  // with system(). They must not load the profiler, so it leaves
  // LD_PRELOAD. Hazard: setenv is not thread-safe against getenv in other
  // threads; before MPI_Init programs rarely have threads, the variable
  // already exists (its slot in environ is replaced, the array is not
  // reallocated) and glibc never frees the strings setenv made.
  Guarded("preload", [] {
    const char *value = std::getenv("LD_PRELOAD");
    if (!value)
      return;
    std::string kept, item;
    bool removed = false;
    for (const char *c = value;; ++c) {
      if (*c && *c != ':' && *c != ' ') {
        item += *c;
        continue;
      }
      size_t slash = item.rfind('/');
      if (item.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos,
                       "libscalana-rt.so") == 0)
        removed = true;
      else if (!item.empty())
        kept += (kept.empty() ? "" : ":") + item;
      item.clear();
      if (!*c)
        break;
    }
    if (removed)
      setenv("LD_PRELOAD", kept.c_str(), 1);
  });
}

void InitDone(MpiCall &) noexcept {
  g_init_called.store(true);
  Guarded("init", [] {
    PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g_world_size);
    AgreeRunId(g_world_rank); // collective: first, so every rank reaches it
    if (g_world_rank == 0)
      MarkRunDir();
    OpenSnapshotContainer(); // collective too: every rank, or none by configuration
    PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
    CalibrateTicks();
    int level = MPI_THREAD_SINGLE;
    bool serialized = PMPI_Query_thread(&level) == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE;
    g_calls_serialized.store(serialized);
    UseAsymmetricLocks(serialized);
    Channel *channels = new Channel[kChannels]; // 2 MiB, touched only where used
    Channel *expected = nullptr;
    if (!g_channels.compare_exchange_strong(expected, channels))
      delete[] channels;
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    g_dep_threshold.store(config::UintValue(config::Id::DepSample));
    g_dep_seed.store(0x9e3779b97f4a7c15ull ^ uint64_t(g_world_rank + 1) * 0x2545f4914f6cdd1dull);
    CommGroupLocked(s, MPI_COMM_WORLD); // comms[0] is always the world
    g_mpi_ready.store(true);
  });
  InstallFatalSignalHandlers(); // after MPI_Init: chain to the MPI library's own
  if (g_mpi_ready.load())
    StartRankWriter(); // periodic snapshots and end records of this rank
}

void FinalizeProfile() noexcept {
  if (g_profile_done.exchange(true))
    return;
  if (g_mpi_ready.load())
    WriteFinalProfile();
  g_mpi_ready.store(false);
}

void AbortProfile(int) noexcept {
  if (g_profile_done.exchange(true))
    return;
  EndRank("MPI_Abort", 0);
}

// Message numbers are taken on every call, whatever the dependence sampling
// (a skipped number would shift every later pairing); only the row that
// records them depends on it.
void P2P(MpiCall &call, DepKind kind, int peer, int tag, MPI_Comm comm, uint64_t bytes,
         bool waits) noexcept {
  call.add_bytes(bytes);
  if (peer == MPI_PROC_NULL)
    return;
  Guarded("p2p", [&] {
    GroupInfo g = CommGroup(comm);
    int32_t world = PeerWorld(g, peer);
    uint64_t seq = NextSeq(kind == DepKind::Recv, world, tag, g.comm_index);
    if (!call.dep_weight())
      return;
    uint32_t w = call.dep_weight();
    AddDep(Hold(call), call.context(), kind, world, tag, g.comm_index, w, bytes * w,
           waits ? call.seconds() * w : 0.0, seq);
  });
}

namespace {
bool Cancelled(const MPI_Status *status) {
  int cancelled = 0;
  return PMPI_Test_cancelled(status, &cancelled) == MPI_SUCCESS && cancelled;
}
} // namespace

void RecvDone(MpiCall &call, MPI_Comm comm, const MPI_Status *status) noexcept {
  if (!status || status->MPI_SOURCE == MPI_PROC_NULL)
    return;
  int count = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
    count = 0;
  call.add_bytes(uint64_t(count));
  Guarded("recv", [&] {
    GroupInfo g = CommGroup(comm);
    int32_t world = PeerWorld(g, status->MPI_SOURCE);
    uint64_t seq = NextSeq(true, world, status->MPI_TAG, g.comm_index);
    if (!call.dep_weight())
      return;
    uint32_t w = call.dep_weight();
    AddDep(Hold(call), call.context(), DepKind::Recv, world, status->MPI_TAG, g.comm_index, w,
           uint64_t(count) * w, call.seconds() * w, seq);
  });
}

void Coll(MpiCall &call, MPI_Comm comm, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (!call.dep_weight())
    return;
  Guarded("coll", [&] {
    GroupInfo g = CommGroup(comm);
    uint32_t w = call.dep_weight();
    AddUnnumberedDep(call, call.context(), DepKind::Coll, -1, g.comm_index, w, bytes * w,
                     call.seconds() * w);
  });
}

// ---- one-sided (docs/async.md, "How it is recorded")

namespace {

// TARGET: a rank of the window's group.
void AddPending(ThreadRec &t, MPI_Win win, int32_t target) {
  WinTarget key{win, target};
  if (!t.last_pending || !(t.last_pending_key == key)) {
    t.last_pending = &t.pending_rma[key];
    t.last_pending_key = key;
  }
  ++t.last_pending->ops;
}

// Completes the pending operations of WIN on TARGET, a rank of the window's
// group (every target when TARGET is MPI_ANY_SOURCE): rma rows on the
// synchronisation's context, its time split by pending operation count.
// False when nothing was pending.
bool CompletePending(MpiCall &call, ThreadRec &t, MPI_Win win, int32_t target) {
  uint64_t total = 0;
  if (target != MPI_ANY_SOURCE) {
    auto it = t.pending_rma.find(WinTarget{win, target});
    if (it == t.pending_rma.end() || !it->second.ops)
      return false;
    total = it->second.ops;
  } else {
    for (const auto &[k, p] : t.pending_rma)
      if (k.win == win)
        total += p.ops;
    if (!total)
      return false;
  }
  uint32_t w = call.dep_weight();
  GroupInfo g = w ? WinGroup(win) : GroupInfo{};
  for (auto &[k, p] : t.pending_rma) {
    if (k.win != win || !p.ops || (target != MPI_ANY_SOURCE && k.target != target))
      continue;
    if (w)
      AddDep(t, call.context(), DepKind::Rma, PeerWorld(g, k.target), 0, g.comm_index, w, 0,
             call.seconds() * double(p.ops) / double(total) * w);
    p.ops = 0; // kept: the next epoch reuses the entry without allocating
  }
  return true;
}

} // namespace

// The commonest call of a one-sided program: the pending count is the
// owner's alone, so only a call whose parameters are sampled takes the lock.
void Rma(MpiCall &call, MPI_Win win, int target, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (target == MPI_PROC_NULL)
    return;
  Guarded("rma", [&] {
    // Completed by any synchronisation that comes first (and, for a
    // request-based operation, by its request).
    AddPending(OwnRec(), win, target);
    if (uint32_t w = call.dep_weight()) {
      GroupInfo g = WinGroup(win);
      AddUnnumberedDep(call, call.context(), DepKind::Rma, PeerWorld(g, target), g.comm_index, w,
                       bytes * w, 0.0);
    }
  });
}

void RmaLock(MpiCall &call, MPI_Win win, int target) noexcept {
  if (target == MPI_PROC_NULL || !call.dep_weight())
    return;
  Guarded("rma_lock", [&] {
    GroupInfo g = WinGroup(win);
    uint32_t w = call.dep_weight();
    AddDep(Hold(call), call.context(), DepKind::Rma, PeerWorld(g, target), 0, g.comm_index, w, 0,
           call.seconds() * w);
  });
}

void RmaSync(MpiCall &call, MPI_Win win, int target) noexcept {
  if (target == MPI_PROC_NULL)
    return;
  Guarded("rma_sync", [&] {
    ThreadRec &t = Hold(call);
    if (target == MPI_ANY_SOURCE) {
      CompletePending(call, t, win, MPI_ANY_SOURCE);
      return;
    }
    // A targeted synchronisation waits on its target even with nothing
    // pending on this thread (operations of other threads, or a lock).
    if (!CompletePending(call, t, win, target) && call.dep_weight()) {
      GroupInfo g = WinGroup(win);
      AddDep(t, call.context(), DepKind::Rma, PeerWorld(g, target), 0, g.comm_index,
             call.dep_weight(), 0, call.seconds() * call.dep_weight());
    }
  });
}

void WinColl(MpiCall &call, MPI_Win win) noexcept {
  Guarded("win_coll", [&] {
    GroupInfo g = WinGroup(win);
    ThreadRec &t = Hold(call);
    // With operations pending, the fence's wait is theirs; the collective
    // row still counts the fence.
    bool completed = CompletePending(call, t, win, MPI_ANY_SOURCE);
    if (uint32_t w = call.dep_weight())
      AddDep(t, call.context(), DepKind::Coll, -1, 0, g.comm_index, w, 0,
             completed ? 0.0 : call.seconds() * w);
  });
}

void WinPost(MpiCall &call, MPI_Group group, MPI_Win win) noexcept {
  Guarded("win_post", [&] {
    std::vector<int> origins = ToWorld(group);
    Hold(call).posted[win] = std::move(origins);
  });
}

void WinWait(MpiCall &call, MPI_Win win) noexcept {
  Guarded("win_wait", [&] {
    ThreadRec &t = Hold(call);
    auto it = t.posted.find(win);
    if (it == t.posted.end())
      return;
    std::vector<int> origins = std::move(it->second);
    t.posted.erase(it);
    uint32_t w = call.dep_weight();
    if (!w || origins.empty())
      return;
    GroupInfo g = WinGroup(win);
    for (int origin : origins)
      AddDep(t, call.context(), DepKind::Rma, origin, 0, g.comm_index, w, 0,
             call.seconds() / double(origins.size()) * w);
  });
}

// ---- non-blocking requests

namespace {

// Runs F(owner, request) on the oldest pending request HANDLE in another
// thread's table than OWN, this thread's record, which CALL holds: it
// releases it first and holds it again after. False when no thread has it.
template <typename F>
bool VisitOtherRecords(MpiCall &call, ThreadRec &own, MPI_Request handle, F &&f) {
  // Hazard: holding two records at once could deadlock against a thread
  // doing the same the other way round, so this thread's goes first and the
  // others are taken one at a time.
  own.lock.OwnerUnlock();
  call.held() = nullptr;
  bool found = false;
  for (ThreadRec *t = g_recs.load(std::memory_order_acquire); t && !found; t = t->next) {
    if (t == &own)
      continue;
    if (!t->lock.ForeignTryFor(kPeerLockSeconds)) {
      CountError("request_lookup_locked");
      continue;
    }
    if (Request *r = t->requests.Find(handle)) {
      f(*t, *r);
      found = true;
    }
    t->lock.ForeignUnlock();
  }
  Hold(call);
  return found;
}

// The same wherever the request was posted: usually in this thread's table
// (the thread that posted a request completes it), else in another's.
template <typename F> bool VisitRequest(MpiCall &call, MPI_Request handle, F &&f) {
  ThreadRec &own = Hold(call);
  if (Request *r = own.requests.Find(handle)) {
    f(own, *r);
    return true;
  }
  return VisitOtherRecords(call, own, handle, f);
}

// One completed request: a row on the posting context (the edge's origin
// vertex, no wait) and one on the completing context carrying the wait,
// plus the polling that completed nothing before (Polled). Receives take
// their message number here, in completion order, sampled or not.
void Resolve(MpiCall &call, const Request &r, const MPI_Status *status, double wait_share) {
  int32_t peer = r.peer, tag = r.tag;
  uint64_t bytes = r.bytes, seq = r.seq;
  uint32_t comm = r.group.comm_index;
  if (r.kind == DepKind::Recv) {
    if (status) {
      if (status->MPI_SOURCE == MPI_PROC_NULL || Cancelled(status))
        return;
      peer = PeerWorld(r.group, status->MPI_SOURCE);
      tag = status->MPI_TAG;
    }
    seq = NextSeq(true, peer, tag, comm);
  }
  if (!r.weight)
    return; // parameters not sampled for this call
  int count = 0;
  if (r.kind == DepKind::Recv && status &&
      PMPI_Get_count(status, MPI_BYTE, &count) == MPI_SUCCESS && count != MPI_UNDEFINED)
    bytes = uint64_t(count);
  ThreadRec &t = Hold(call);
  // The wait is weighted like the count: with 1 in 16 requests sampled,
  // each sampled one stands for 16 waits, so the total stays unbiased.
  const double w = r.weight;
  bool polled_here = r.polled > 0 && r.poll_ctx == call.context();
  double wait = (wait_share + (polled_here ? r.polled : 0)) * w;
  if (r.kind == DepKind::Rma) {
    // Request-based one-sided: the operation's row was recorded when it was
    // posted; the completion is the waiting point.
    AddDep(t, call.context(), DepKind::Rma, peer, 0, comm, r.weight, 0, wait);
  } else {
    bool same = call.context() == r.ctx;
    AddDep(t, r.ctx, r.kind, peer, tag, comm, r.weight, bytes * r.weight, same ? wait : 0, seq);
    if (!same)
      AddDep(t, call.context(), r.kind, peer, tag, comm, r.weight, bytes * r.weight, wait, seq);
  }
  if (r.polled > 0 && !polled_here) // polled at another call site: its own row, no count
    AddDep(t, r.poll_ctx, r.kind, peer, r.kind == DepKind::Rma ? 0 : tag, comm, 0, 0, r.polled * w,
           seq);
}

void Register(MpiCall &call, MPI_Request req, DepKind kind, int32_t world, int32_t tag, GroupInfo g,
              uint64_t bytes, bool persistent, uint64_t seq) {
  ThreadRec &t = Hold(call);
  t.requests.Insert(req, [&](Request &r) {
    r.ctx = call.context();
    r.kind = kind;
    r.persistent = persistent;
    r.peer = world;
    r.tag = tag;
    r.group.comm_index = g.comm_index; // field by field: see Insert
    r.group.peers = g.peers;
    r.bytes = bytes;
    r.weight = call.dep_weight();
    r.poll_ctx = 0;
    r.polled = 0.0;
    r.seq = seq;
  });
}

} // namespace

void Post(MpiCall &call, MPI_Request req, DepKind kind, int peer, int tag, MPI_Comm comm,
          uint64_t bytes, bool persistent) noexcept {
  call.add_bytes(bytes);
  if (req == MPI_REQUEST_NULL || peer == MPI_PROC_NULL)
    return;
  Guarded("post", [&] {
    GroupInfo g = CommGroup(comm);
    int32_t world = PeerWorld(g, peer);
    // Sends are numbered when posted (persistent ones at each start).
    uint64_t seq =
        kind == DepKind::Send && !persistent ? NextSeq(false, world, tag, g.comm_index) : 0;
    Register(call, req, kind, world, tag, g, bytes, persistent, seq);
  });
}

void PostColl(MpiCall &call, MPI_Request req, MPI_Comm comm, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (req == MPI_REQUEST_NULL)
    return;
  Guarded("post_coll",
          [&] { Register(call, req, DepKind::Coll, -1, 0, CommGroup(comm), bytes, false, 0); });
}

void PostRma(MpiCall &call, MPI_Request req, MPI_Win win, int target, uint64_t bytes) noexcept {
  Rma(call, win, target, bytes);
  if (target == MPI_PROC_NULL || req == MPI_REQUEST_NULL)
    return;
  Guarded("rma_request", [&] {
    GroupInfo g = WinGroup(win);
    Register(call, req, DepKind::Rma, PeerWorld(g, target), 0, g, bytes, false, 0);
  });
}

void Forget(MpiCall &call, MPI_Request req) noexcept {
  if (req == MPI_REQUEST_NULL)
    return;
  Guarded("forget", [&] {
    VisitRequest(call, req,
                 [](ThreadRec &owner, Request &r) { owner.requests.PopOldest(r.handle); });
  });
}

void Started(MpiCall &call, const MPI_Request *reqs, int n) noexcept {
  if (!reqs)
    return;
  Guarded("start", [&] {
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL)
        continue;
      VisitRequest(call, reqs[i], [](ThreadRec &, Request &r) {
        r.polled = 0;
        if (r.persistent && r.kind == DepKind::Send)
          r.seq = NextSeq(false, r.peer, r.tag, r.group.comm_index);
      });
    }
  });
}

void Polled(MpiCall &call, const MPI_Request *saved, int n) noexcept {
  if (!saved || n <= 0)
    return;
  Guarded("polled", [&] {
    int live = 0;
    for (int i = 0; i < n; ++i)
      live += saved[i] != MPI_REQUEST_NULL;
    if (!live)
      return;
    double share = call.seconds() / live;
    uint32_t ctx = call.context();
    for (int i = 0; i < n; ++i) {
      if (saved[i] == MPI_REQUEST_NULL)
        continue;
      // Polled from several call sites: the time goes to the first one.
      VisitRequest(call, saved[i], [&](ThreadRec &, Request &r) {
        if (r.polled <= 0)
          r.poll_ctx = ctx;
        r.polled += share;
      });
    }
  });
}

namespace {
void CompleteOne(MpiCall &call, MPI_Request handle, const MPI_Status *status, double share) {
  if (handle == MPI_REQUEST_NULL)
    return;
  // The common case, a request this thread posted: resolved where it lies
  // (Resolve changes no request table), then removed.
  ThreadRec &own = Hold(call);
  if (Request *e = own.requests.Find(handle)) {
    Resolve(call, *e, status, share);
    if (e->persistent)
      e->polled = 0;
    else
      own.requests.PopOldest(handle);
    return;
  }
  // Another thread's: copied out under its lock, resolved under this one's.
  Request r;
  bool found = VisitOtherRecords(call, own, handle, [&](ThreadRec &owner, Request &e) {
    r = e;
    if (e.persistent)
      e.polled = 0;
    else
      owner.requests.PopOldest(e.handle);
  });
  if (found)
    Resolve(call, r, status, share);
}
} // namespace

void Complete(MpiCall &call, const MPI_Request *saved, int n, const int *which, int completed,
              const MPI_Status *statuses) noexcept {
  if (!saved)
    return;
  Guarded("complete", [&] {
    if (which) {
      if (*which >= 0 && *which < n)
        CompleteOne(call, saved[*which], statuses, call.seconds());
      return;
    }
    // In array order: receives on one channel are numbered in that order.
    double share = completed > 0 ? call.seconds() / completed : 0;
    for (int i = 0; i < n; ++i)
      CompleteOne(call, saved[i], statuses ? &statuses[i] : nullptr, share);
  });
}

void CompleteSome(MpiCall &call, const MPI_Request *saved, int n, const int *indices, int outcount,
                  const MPI_Status *statuses) noexcept {
  if (!indices || !saved)
    return;
  Guarded("complete_some", [&] {
    if (outcount == 0) {
      Polled(call, saved, n);
      return;
    }
    double share = outcount > 0 ? call.seconds() / outcount : 0;
    for (int k = 0; k < outcount; ++k)
      if (indices[k] >= 0 && indices[k] < n)
        CompleteOne(call, saved[indices[k]], statuses ? &statuses[k] : nullptr, share);
  });
}

void CommCreated(MpiCall &, MPI_Comm, MPI_Comm created) noexcept {
  if (created == MPI_COMM_NULL)
    return;
  Guarded("comm_created", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    g_handles_generation.fetch_add(1);
    s.comm_cache.erase(created); // a reused handle value names a new communicator
    CommGroupLocked(s, created);
  });
}

void CommFreed(MPI_Comm comm) noexcept {
  Guarded("comm_freed", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    g_handles_generation.fetch_add(1);
    s.comm_cache.erase(comm);
  });
}

void WinCreated(MPI_Win win) noexcept {
  Guarded("win_created", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    g_handles_generation.fetch_add(1);
    s.win_cache.erase(win);
    WinGroupLocked(s, win);
  });
}

// Hazard: operations other threads left pending on the window (without the
// synchronisation MPI requires before Win_free) stay in their tables and
// would be completed by the next window that gets the same handle.
void WinFreed(MpiCall &call, MPI_Win win) noexcept {
  Guarded("win_freed", [&] {
    {
      State &s = S();
      std::lock_guard<std::timed_mutex> lock(s.mu);
      g_handles_generation.fetch_add(1);
      s.win_cache.erase(win);
    }
    ThreadRec &t = Hold(call);
    t.last_pending = nullptr;
    for (auto it = t.pending_rma.begin(); it != t.pending_rma.end();)
      it = it->first.win == win ? t.pending_rma.erase(it) : std::next(it);
    t.posted.erase(win);
  });
}

// ---- snapshot for the output

int WorldRank() { return g_world_rank; }
int WorldSizeKnown() { return g_world_size; }
bool MpiReady() { return g_mpi_ready.load(); }
bool MpiInitCalled() { return g_init_called.load(); }

// Everything this rank recorded, as a one-rank profile with local indices.
// False when the process-wide lock could not be taken within LOCK_SECONDS
// (a thread stopped by a fatal signal may hold it forever); a thread record
// whose lock is not free by then is left out and counted.
//
// Runs while other threads keep sampling (periodic snapshots): each table
// has one writer, its own thread's handler, which fills a slot's frames
// before it publishes the slot's hash, so a slot seen with a hash is
// complete; counts read while they grow are at worst one sample behind.
// The threads' record tables are read under their locks, one at a time and
// before the process-wide mutex: each thread's calls wait (spinning, then
// yielding) while its tables are copied.
bool SnapshotMpi(Profile &p, RankData &r, double lock_seconds) {
  State &s = S();
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(lock_seconds * 1e6));
  // The threads' records, summed, before the process-wide mutex is taken:
  // a thread may take that mutex while it holds its record (a group looked
  // up in the middle of a call), never the other way round.
  std::map<uint32_t, MpiAgg> mpi;
  std::map<DepKey, DepAgg> deps;
  for (ThreadRec *t = g_recs.load(std::memory_order_acquire); t; t = t->next) {
    double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (!t->lock.ForeignTryFor(std::max(left, 0.001))) {
      r.errors["thread_data_locked"] += 1;
      continue;
    }
    for (size_t ctx = 0; ctx < t->mpi.size(); ++ctx) {
      const MpiAgg &m = t->mpi[ctx];
      uint64_t calls = RelaxedLoad(m.calls);
      if (!calls)
        continue;
      MpiAgg &sum = mpi[uint32_t(ctx)];
      if (!sum.op)
        sum.op = __atomic_load_n(&m.op, __ATOMIC_RELAXED);
      sum.calls += calls;
      sum.seconds += RelaxedLoad(m.seconds);
      sum.bytes += RelaxedLoad(m.bytes);
    }
    t->deps.ForEach([&](const DepKey &k, const DepAgg &d) {
      DepAgg &sum = deps[k];
      sum.count += RelaxedLoad(d.count);
      sum.bytes += RelaxedLoad(d.bytes);
      sum.wait += RelaxedLoad(d.wait);
      for (uint32_t q = 0; q < d.seqs.n; ++q)
        sum.seqs.Add(d.seqs.r[q]);
    });
    t->lock.ForeignUnlock();
  }
  std::unique_lock<std::timed_mutex> lock(s.mu, deadline);
  if (!lock.owns_lock())
    return false;
  // Sample contexts join the MPI contexts in one table.
  std::map<uint32_t, VertexRow> rows;
  std::map<uint32_t, uint64_t> cpu_ns;
  uint64_t blocked_ns = 0;
  for (ThreadSamples *t = FirstThreadSamples(); t; t = t->next) {
    r.samples += t->samples;
    r.samples_dropped += t->dropped;
    blocked_ns += BlockedNs(t);
    if (t->blocked_samples)
      r.errors["samples_while_blocked"] += t->blocked_samples;
    if (t->truncated)
      r.errors["stack_truncated"] += t->truncated;
    if (t->in_profiler)
      r.errors["samples_in_profiler"] += t->in_profiler;
    if (t->tick_rescue == 1) // the tick starved it (tick_rescue.cpp)
      r.errors["threads_moved_to_perf"] += 1;
    else if (t->tick_rescue == 2)
      r.errors["threads_starved_perf_refused"] += 1;
    for (uint32_t i = 0; i < kSampleSlots; ++i) {
      const SampleSlot &slot = t->slots[i];
      if (!slot.hash)
        continue;
      // Pairs with the handler's release fence: frames before the hash.
      std::atomic_thread_fence(std::memory_order_acquire);
      Context c(t->frames + slot.frames_offset,
                t->frames + slot.frames_offset + slot.frames_length);
      uint32_t ctx = InternLocked(s, std::move(c));
      VertexRow &row = rows[ctx];
      row.ctx = ctx;
      row.samples += slot.samples;
      cpu_ns[ctx] += slot.cpu_ns;
      // The thread's counters may have stopped already (StopSources clears
      // counter_count); its slots still hold what they counted. Threads
      // without counters (descriptor budget) must not shorten the row.
      size_t kept = size_t(t->counters_in_slots);
      if (row.counters.size() < kept)
        row.counters.resize(kept);
      for (size_t k = 0; k < kept; ++k)
        row.counters[k] += double(slot.counters[k]);
    }
  }
  for (auto &[ctx, row] : rows) {
    row.cpu_seconds = 1e-9 * double(cpu_ns[ctx]);
    r.vertices.push_back(row);
  }
  SnapshotThreads(r, [&](Context &&c) { return InternLocked(s, std::move(c)); });
  r.sampling_blocked = 1e-9 * double(blocked_ns);
  for (const auto &[ctx, m] : mpi)
    r.mpi.push_back(MpiRow{ctx, m.calls, m.seconds, m.bytes, m.op ? m.op : ""});
  for (const auto &[k, d] : deps) {
    DepRow row{k.ctx, k.kind, k.peer, k.tag, k.comm, d.count, d.bytes, d.wait, {}};
    if (k.kind == DepKind::Send || k.kind == DepKind::Recv)
      row.seqs.assign(d.seqs.r, d.seqs.r + d.seqs.n);
    r.deps.push_back(std::move(row));
  }
  p.contexts = s.contexts;
  p.comms.assign(s.comms.begin(), s.comms.end());
  return true;
}

} // namespace scalana::rt
