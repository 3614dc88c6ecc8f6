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
//
// Here: the calls themselves, message numbering, communicators and
// windows, posting requests, the snapshot. One-sided operations and the
// completion of requests are in recorder_async.cpp; what both share is in
// recorder_internal.h.
#include "recorder_internal.h"
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
#include <climits>
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

__thread OpenCall tl_open __attribute__((tls_model("initial-exec")));

__attribute__((noinline, cold)) void ThrowLockTimeout() { throw LockTimeout{}; }

namespace {

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

} // namespace

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

namespace {

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
  std::unordered_map<MPI_File, GroupInfo> file_cache;
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

} // namespace

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

namespace {

// An intercommunicator's members as world ranks: its two groups, each in its
// own rank order, the one holding the lower world rank first. Either side
// computes the same list from its local and remote group.
std::vector<int> BothGroups(std::vector<int> local, const std::vector<int> &remote) {
  auto lowest = [](const std::vector<int> &g) {
    int low = INT_MAX; // ranks outside this world (MPI_UNDEFINED) go last
    for (int r : g)
      if (r >= 0)
        low = std::min(low, r);
    return low;
  };
  bool local_first = lowest(local) <= lowest(remote);
  std::vector<int> both = local_first ? local : remote;
  const std::vector<int> &second = local_first ? remote : local;
  both.insert(both.end(), second.begin(), second.end());
  return both;
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
    // Point-to-point peers are ranks of the remote group; the communicator
    // itself is both groups, listed alike on both sides (BothGroups), so
    // that a send and its receive name the same one.
    std::vector<int> remote = ToWorld(g);
    PMPI_Group_free(&g);
    info.peers = PeersLocked(s, remote);
    members = BothGroups(std::move(members), remote);
  } else {
    info.peers = PeersLocked(s, members);
  }
  info.comm_index = CommIndexLocked(s, std::move(members));
  s.comm_cache.emplace(comm, info);
  return info;
}

// The members of group G (freed here) as world ranks, interned: what a
// window's or a file's collectives are over.
GroupInfo TakeGroupLocked(State &s, MPI_Group &g) {
  std::vector<int> members = ToWorld(g);
  PMPI_Group_free(&g);
  GroupInfo info;
  info.peers = PeersLocked(s, members);
  info.comm_index = CommIndexLocked(s, std::move(members));
  return info;
}

GroupInfo WinGroupLocked(State &s, MPI_Win win) {
  auto it = s.win_cache.find(win);
  if (it != s.win_cache.end())
    return it->second;
  MPI_Group g;
  if (win == MPI_WIN_NULL || PMPI_Win_get_group(win, &g) != MPI_SUCCESS) {
    CountError("win_group");
    return GroupInfo{};
  }
  GroupInfo info = TakeGroupLocked(s, g);
  s.win_cache.emplace(win, info);
  return info;
}

GroupInfo FileGroupLocked(State &s, MPI_File fh) {
  auto it = s.file_cache.find(fh);
  if (it != s.file_cache.end())
    return it->second;
  MPI_Group g;
  if (fh == MPI_FILE_NULL || PMPI_File_get_group(fh, &g) != MPI_SUCCESS) {
    CountError("file_group");
    return GroupInfo{};
  }
  GroupInfo info = TakeGroupLocked(s, g);
  s.file_cache.emplace(fh, info);
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
SCALANA_TLS GroupCache<MPI_File> tl_files;

} // namespace

GroupInfo CommGroup(MPI_Comm comm) { return tl_comms.Get(comm, CommGroupLocked); }
GroupInfo WinGroup(MPI_Win win) { return tl_wins.Get(win, WinGroupLocked); }
GroupInfo FileGroup(MPI_File fh) { return tl_files.Get(fh, FileGroupLocked); }

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
  if (open.thread) {
    open.thread->mpi_frames_length = 0;
    ResumeOffCpu(open.thread);
  }
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
  if (thread_) {
    thread_->mpi_frames_length = 0;
    ResumeOffCpu(thread_); // the call's time off the CPU was its own (off_cpu.cpp)
  }
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
  // LD_PRELOAD. Hazard: setenv and unsetenv are not thread-safe against
  // getenv in other threads; before MPI_Init programs rarely have threads,
  // the variable already exists (setenv replaces its slot in environ, the
  // array is not reallocated; unsetenv moves the later slots down one) and
  // glibc never frees the strings setenv made.
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
    // Unset when ours was all of it, as `scalana prof` found it: a program
    // that asks whether the variable exists sees what it would without us.
    if (removed && kept.empty())
      unsetenv("LD_PRELOAD");
    else if (removed)
      setenv("LD_PRELOAD", kept.c_str(), 1);
  });
}

void InitDone(MpiCall &) noexcept {
  g_init_called.store(true);
  Guarded("init", [] {
    PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g_world_size);
    if (g_world_rank == 0)
      WarnUnusableOptions();
    // Collective: first, so every rank reaches it.
    if (!AgreeRunId(g_world_rank)) {
      // The run directory is another job's: nothing is recorded or written
      // (rank 0 said why), and the program runs on.
      g_profile_done.store(true);
      StopSampling();
      return;
    }
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

// A collective MPI-IO operation: a collective over the file's group.
void FileColl(MpiCall &call, MPI_File fh, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (!call.dep_weight())
    return;
  Guarded("file_coll", [&] {
    GroupInfo g = FileGroup(fh);
    uint32_t w = call.dep_weight();
    AddUnnumberedDep(call, call.context(), DepKind::Coll, -1, g.comm_index, w, bytes * w,
                     call.seconds() * w);
  });
}

namespace {
// The file MPI_File_close is closing on this thread and its group, found
// before the call frees the handle (the group cannot be asked after).
struct ClosingFile {
  MPI_File fh;
  GroupInfo group;
};
SCALANA_TLS ClosingFile tl_closing_file;
} // namespace

void FileClosing(MPI_File fh) noexcept {
  tl_closing_file.fh = fh;
  Guarded("file_closing", [&] { tl_closing_file.group = FileGroup(fh); });
}

// A later file may get the same handle: the caches forget this one.
void FileClosed(MpiCall &call) noexcept {
  const ClosingFile closed = tl_closing_file;
  tl_closing_file = ClosingFile{};
  Guarded("file_closed", [&] {
    {
      State &s = S();
      std::lock_guard<std::timed_mutex> lock(s.mu);
      g_handles_generation.fetch_add(1);
      s.file_cache.erase(closed.fh);
    }
    if (uint32_t w = call.dep_weight(); w && closed.group.peers)
      AddUnnumberedDep(call, call.context(), DepKind::Coll, -1, closed.group.comm_index, w, 0,
                       call.seconds() * w);
  });
}

// ---- posting a non-blocking request (completed in recorder_async.cpp)
//
// Here, beside the groups' per-thread caches, so that the common Isend or
// Irecv finds its communicator's group without a call.

namespace {

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
      if (!slot.samples)
        continue; // time off the CPU only (SnapshotThreads writes it)
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
