// MPI call and dependence recording behind the generated wrappers.
#include "recorder.h"

#include "call_sites.h"
#include "config.h"
#include "runtime.h"

#include <pthread.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <tuple>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace scalana::rt {

// Defined in output.cpp and writer.cpp.
void WriteFinalProfile() noexcept;

namespace {

struct ContextHash {
  size_t operator()(const Context &c) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t id : c)
      h = (h ^ id) * 0x100000001b3ull;
    return size_t(h);
  }
};

struct MpiAgg {
  uint64_t calls = 0, bytes = 0;
  double seconds = 0;
};

struct DepKey {
  uint32_t ctx;
  DepKind kind;
  int32_t peer, tag;
  uint32_t comm;
  bool operator<(const DepKey &o) const {
    return std::tie(ctx, kind, peer, tag, comm) < std::tie(o.ctx, o.kind, o.peer, o.tag, o.comm);
  }
};

struct DepAgg {
  uint64_t count = 0, bytes = 0;
  double wait = 0;
};

// A communicator (or window) as world ranks: members of the local group, and
// the ranks its peer numbers name (the remote group of an intercommunicator).
struct GroupInfo {
  uint32_t comm_index = 0;
  std::shared_ptr<const std::vector<int>> peers;
};

struct Request {
  uint32_t ctx;
  DepKind kind;
  int32_t peer; // world rank, or MPI_ANY_SOURCE for receives
  int32_t tag;
  GroupInfo group;
  uint64_t bytes;
  uint32_t weight;
  bool persistent;
};

struct State {
  // Timed: the writer thread must not wait forever for a lock that a thread
  // stopped by a fatal signal may hold (snapshots take it with a timeout).
  std::timed_mutex mu;
  std::unordered_map<Context, uint32_t, ContextHash> context_index;
  std::vector<Context> contexts;
  std::unordered_map<uint32_t, MpiAgg> mpi;
  std::map<DepKey, DepAgg> deps;
  std::map<std::vector<int>, uint32_t> comm_index;
  std::vector<std::vector<int>> comms;
  std::unordered_map<MPI_Comm, GroupInfo> comm_cache;
  std::unordered_map<MPI_Win, GroupInfo> win_cache;
  // Pending non-blocking operations by handle, oldest first. A handle can
  // stand for several at once: Open MPI hands the same (already complete)
  // request to every send it finished eagerly, and Fortran sees one integer
  // for all of them. Completions take the oldest, matching the order in which
  // the program waits for what it posted.
  std::unordered_map<MPI_Request, std::deque<Request>> requests;
};

State &S() {
  static State *s = new State; // leaked: exit-time writers still use it
  return *s;
}

std::atomic<bool> g_mpi_ready{false}; // between MPI_Init and the final write
std::atomic<bool> g_profile_done{false};
std::atomic<bool> g_init_called{false}; // this process is an MPI rank
int g_world_rank = -1, g_world_size = 0;
MPI_Group g_world_group = MPI_GROUP_NULL;
thread_local int tl_nesting = 0;
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
    info.peers = std::make_shared<const std::vector<int>>(ToWorld(g));
    PMPI_Group_free(&g);
  } else {
    info.peers = std::make_shared<const std::vector<int>>(members);
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
  info.peers = std::make_shared<const std::vector<int>>(members);
  info.comm_index = CommIndexLocked(s, std::move(members));
  s.win_cache.emplace(win, info);
  return info;
}

int32_t PeerWorld(const GroupInfo &g, int peer) {
  if (peer == MPI_ANY_SOURCE)
    return MPI_ANY_SOURCE;
  if (!g.peers || peer < 0 || size_t(peer) >= g.peers->size())
    return -1;
  return (*g.peers)[size_t(peer)];
}

void AddDepLocked(State &s, uint32_t ctx, DepKind kind, int32_t peer, int32_t tag, uint32_t comm,
                  uint32_t weight, uint64_t bytes, double wait) {
  DepAgg &d = s.deps[DepKey{ctx, kind, peer, tag, comm}];
  d.count += weight;
  d.bytes += bytes * weight;
  d.wait += wait * weight;
}

template <typename F> void Guarded(const char *what, F &&f) noexcept {
  try {
    f();
  } catch (...) {
    CountError(what);
  }
}

} // namespace

// ---- MpiCall

MpiCall::MpiCall(const char *, MpiClass, const void *return_address,
                 const void *frame_address) noexcept {
  // Calls made from inside another wrapped call belong to the outer one.
  if (tl_nesting++ > 0 || g_profile_done.load(std::memory_order_relaxed))
    return;
  ThreadSamples *t = CurrentThread();
  try {
    CallSiteContext c = ContextOfCall(return_address, frame_address);
    if (t) {
      // While the call runs, this thread's samples take its context instead
      // of unwinding through the MPI library.
      for (uint32_t i = 0; i < c.length; ++i)
        t->mpi_frames[i] = c.frames[i];
      std::atomic_signal_fence(std::memory_order_release); // frames before their length
      t->mpi_frames_length = c.length;
      thread_ = t;
    }
    if (*c.index == CallSiteContext::kNoIndex) {
      State &s = S();
      std::lock_guard<std::timed_mutex> lock(s.mu);
      *c.index = InternLocked(s, Context(c.frames, c.frames + c.length));
    }
    ctx_ = *c.index;
    uint64_t threshold = g_dep_threshold.load(std::memory_order_relaxed);
    if (++*c.calls > threshold && threshold) {
      // Past the threshold: record parameters of a random 1 in 16 calls,
      // weighted 16, so counts and bytes stay unbiased estimates.
      thread_local uint64_t random = g_dep_seed.load() ^ uint64_t(pthread_self());
      random ^= random << 13;
      random ^= random >> 7;
      random ^= random << 17;
      dep_weight_ = (random & 15) == 0 ? 16 : 0;
    }
    active_ = true;
  } catch (...) {
    CountError("mpi_context");
  }
  start_ = Now();
}

void MpiCall::Stop() noexcept {
  if (stopped_)
    return;
  stopped_ = true;
  seconds_ = Now() - start_;
}

MpiCall::~MpiCall() {
  --tl_nesting;
  if (thread_)
    thread_->mpi_frames_length = 0;
  if (!active_)
    return;
  Stop();
  Guarded("mpi_record", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    MpiAgg &m = s.mpi[ctx_];
    ++m.calls;
    m.seconds += seconds_;
    m.bytes += bytes_;
  });
}

// ---- helpers used by the wrappers

uint64_t Bytes(int count, MPI_Datatype type) noexcept {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
    return 0;
  return uint64_t(count) * uint64_t(size > 0 ? size : 0);
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
    PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
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

void P2P(MpiCall &call, DepKind kind, int peer, int tag, MPI_Comm comm, uint64_t bytes,
         bool waits) noexcept {
  call.add_bytes(bytes);
  if (peer == MPI_PROC_NULL || !call.dep_weight())
    return;
  Guarded("p2p", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = CommGroupLocked(s, comm);
    AddDepLocked(s, call.context(), kind, PeerWorld(g, peer), tag, g.comm_index, call.dep_weight(),
                 bytes, waits ? call.seconds() : 0.0);
  });
}

void RecvDone(MpiCall &call, MPI_Comm comm, const MPI_Status *status) noexcept {
  if (!status || status->MPI_SOURCE == MPI_PROC_NULL)
    return;
  int count = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
    count = 0;
  call.add_bytes(uint64_t(count));
  if (!call.dep_weight())
    return;
  Guarded("recv", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = CommGroupLocked(s, comm);
    AddDepLocked(s, call.context(), DepKind::Recv, PeerWorld(g, status->MPI_SOURCE),
                 status->MPI_TAG, g.comm_index, call.dep_weight(), uint64_t(count), call.seconds());
  });
}

void Coll(MpiCall &call, MPI_Comm comm, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (!call.dep_weight())
    return;
  Guarded("coll", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = CommGroupLocked(s, comm);
    AddDepLocked(s, call.context(), DepKind::Coll, -1, 0, g.comm_index, call.dep_weight(), bytes,
                 call.seconds());
  });
}

void Rma(MpiCall &call, MPI_Win win, int target, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (target == MPI_PROC_NULL || !call.dep_weight())
    return;
  Guarded("rma", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = WinGroupLocked(s, win);
    AddDepLocked(s, call.context(), DepKind::Rma, PeerWorld(g, target), 0, g.comm_index,
                 call.dep_weight(), bytes, call.seconds());
  });
}

void WinColl(MpiCall &call, MPI_Win win) noexcept {
  if (!call.dep_weight())
    return;
  Guarded("win_coll", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = WinGroupLocked(s, win);
    AddDepLocked(s, call.context(), DepKind::Coll, -1, 0, g.comm_index, call.dep_weight(), 0,
                 call.seconds());
  });
}

void Post(MpiCall &call, MPI_Request req, DepKind kind, int peer, int tag, MPI_Comm comm,
          uint64_t bytes, bool persistent) noexcept {
  call.add_bytes(bytes);
  if (req == MPI_REQUEST_NULL || peer == MPI_PROC_NULL)
    return;
  Guarded("post", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = CommGroupLocked(s, comm);
    s.requests[req].push_back(Request{call.context(), kind, PeerWorld(g, peer), tag, g, bytes,
                                      call.dep_weight(), persistent});
  });
}

void PostColl(MpiCall &call, MPI_Request req, MPI_Comm comm, uint64_t bytes) noexcept {
  call.add_bytes(bytes);
  if (req == MPI_REQUEST_NULL)
    return;
  Guarded("post_coll", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    GroupInfo g = CommGroupLocked(s, comm);
    s.requests[req].push_back(
        Request{call.context(), DepKind::Coll, -1, 0, g, bytes, call.dep_weight(), false});
  });
}

void Forget(MPI_Request req) noexcept {
  Guarded("forget", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    auto it = s.requests.find(req);
    if (it == s.requests.end())
      return;
    it->second.pop_front();
    if (it->second.empty())
      s.requests.erase(it);
  });
}

namespace {

// One completed request: a row on the posting context (the edge's origin
// vertex, no wait) and one on the completing context carrying the wait.
void ResolveLocked(State &s, MpiCall &call, MPI_Request req, const MPI_Status *status,
                   double wait_share) {
  auto it = s.requests.find(req);
  if (it == s.requests.end())
    return;
  Request r = it->second.front();
  if (!r.persistent) {
    it->second.pop_front();
    if (it->second.empty())
      s.requests.erase(it);
  }
  if (!r.weight)
    return; // parameters not sampled for this call
  int32_t peer = r.peer, tag = r.tag;
  uint64_t bytes = r.bytes;
  if (r.kind == DepKind::Recv && status) {
    if (status->MPI_SOURCE == MPI_PROC_NULL)
      return;
    peer = PeerWorld(r.group, status->MPI_SOURCE);
    tag = status->MPI_TAG;
    int count = 0;
    if (PMPI_Get_count(status, MPI_BYTE, &count) == MPI_SUCCESS && count != MPI_UNDEFINED)
      bytes = uint64_t(count);
  }
  // The wait is weighted like the count: with 1 in 16 requests sampled,
  // each sampled one stands for 16 waits, so the total stays unbiased.
  bool same = call.active() && call.context() == r.ctx;
  AddDepLocked(s, r.ctx, r.kind, peer, tag, r.group.comm_index, r.weight, bytes,
               same ? wait_share : 0);
  if (call.active() && !same)
    AddDepLocked(s, call.context(), r.kind, peer, tag, r.group.comm_index, r.weight, bytes,
                 wait_share);
}

} // namespace

void Complete(MpiCall &call, const MPI_Request *saved, int n, const int *which, int completed,
              const MPI_Status *statuses) noexcept {
  if (!saved)
    return;
  Guarded("complete", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    if (which) {
      if (*which >= 0 && *which < n)
        ResolveLocked(s, call, saved[*which], statuses, call.seconds());
      return;
    }
    double share = completed > 0 ? call.seconds() / completed : 0;
    for (int i = 0; i < n; ++i)
      ResolveLocked(s, call, saved[i], statuses ? &statuses[i] : nullptr, share);
  });
}

void CompleteSome(MpiCall &call, const MPI_Request *saved, int n, const int *indices, int outcount,
                  const MPI_Status *statuses) noexcept {
  if (!indices || !saved)
    return;
  Guarded("complete_some", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    double share = outcount > 0 ? call.seconds() / outcount : 0;
    for (int k = 0; k < outcount; ++k)
      if (indices[k] >= 0 && indices[k] < n)
        ResolveLocked(s, call, saved[indices[k]], statuses ? &statuses[k] : nullptr, share);
  });
}

const MPI_Request *SaveRequests(const MPI_Request *reqs, int n) noexcept {
  thread_local std::vector<MPI_Request> saved;
  try {
    saved.assign(reqs, reqs + (n > 0 ? n : 0));
  } catch (...) {
    CountError("save_requests");
    saved.clear();
    return nullptr;
  }
  return saved.data();
}

void CommCreated(MpiCall &, MPI_Comm, MPI_Comm created) noexcept {
  if (created == MPI_COMM_NULL)
    return;
  Guarded("comm_created", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    s.comm_cache.erase(created); // a reused handle value names a new communicator
    CommGroupLocked(s, created);
  });
}

void CommFreed(MPI_Comm comm) noexcept {
  Guarded("comm_freed", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    s.comm_cache.erase(comm);
  });
}

void WinCreated(MPI_Win win) noexcept {
  Guarded("win_created", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    s.win_cache.erase(win);
    WinGroupLocked(s, win);
  });
}

void WinFreed(MPI_Win win) noexcept {
  Guarded("win_freed", [&] {
    State &s = S();
    std::lock_guard<std::timed_mutex> lock(s.mu);
    s.win_cache.erase(win);
  });
}

// ---- scratch buffers; thread_local because threads may call MPI concurrently

MPI_Status *StatusScratch(int n) noexcept {
  thread_local std::vector<MPI_Status> buf;
  try {
    if (buf.size() < size_t(n > 0 ? n : 1))
      buf.resize(size_t(n > 0 ? n : 1));
  } catch (...) {
    return MPI_STATUSES_IGNORE;
  }
  return buf.data();
}

MPI_Fint *FortranStatusScratch(int n) noexcept {
  thread_local std::vector<MPI_Fint> buf;
  size_t words = sizeof(MPI_Status) / sizeof(MPI_Fint) * size_t(n > 0 ? n : 1);
  try {
    if (buf.size() < words)
      buf.resize(words);
  } catch (...) {
    return MPI_F_STATUSES_IGNORE;
  }
  return buf.data();
}

MPI_Status *FortranStatuses(const MPI_Fint *f, int n) noexcept {
  thread_local std::vector<MPI_Status> buf;
  try {
    buf.resize(size_t(n > 0 ? n : 0));
  } catch (...) {
    return nullptr;
  }
  const size_t stride = sizeof(MPI_Status) / sizeof(MPI_Fint);
  for (int i = 0; i < n; ++i)
    PMPI_Status_f2c(f + stride * size_t(i), &buf[size_t(i)]);
  return buf.data();
}

MPI_Request *FortranRequests(const MPI_Fint *f, int n) noexcept {
  thread_local std::vector<MPI_Request> buf;
  try {
    buf.resize(size_t(n > 0 ? n : 0));
  } catch (...) {
    return nullptr;
  }
  for (int i = 0; i < n; ++i)
    buf[size_t(i)] = PMPI_Request_f2c(f[i]);
  return buf.data();
}

int *FortranIndices(const MPI_Fint *f, int n) noexcept {
  thread_local std::vector<int> buf;
  if (n == MPI_UNDEFINED || n < 0)
    n = 0;
  try {
    buf.resize(size_t(n));
  } catch (...) {
    return nullptr;
  }
  for (int i = 0; i < n; ++i)
    buf[size_t(i)] = f[i] - 1; // Fortran indices are 1-based
  return buf.data();
}

void *FortranSymbol(const char *name) noexcept {
  void *p = dlsym(RTLD_NEXT, name);
  return p ? p : dlsym(RTLD_DEFAULT, name);
}

// ---- snapshot for the output

int WorldRank() { return g_world_rank; }
int WorldSizeKnown() { return g_world_size; }
bool MpiReady() { return g_mpi_ready.load(); }
bool MpiInitCalled() { return g_init_called.load(); }

// Everything this rank recorded, as a one-rank profile with local indices.
// False when the lock could not be taken within LOCK_SECONDS (a thread
// stopped by a fatal signal may hold it forever).
//
// Runs while other threads keep sampling (periodic snapshots): each table
// has one writer, its own thread's handler, which fills a slot's frames
// before it publishes the slot's hash, so a slot seen with a hash is
// complete; counts read while they grow are at worst one sample behind.
bool SnapshotMpi(Profile &p, RankData &r, double lock_seconds) {
  State &s = S();
  std::unique_lock<std::timed_mutex> lock(s.mu,
                                          std::chrono::microseconds(int64_t(lock_seconds * 1e6)));
  if (!lock.owns_lock())
    return false;
  // Sample contexts join the MPI contexts in one table.
  std::map<uint32_t, VertexRow> rows;
  double per_sample = Sampler().seconds_per_sample;
  for (ThreadSamples *t = FirstThreadSamples(); t; t = t->next) {
    r.samples += t->samples;
    r.samples_dropped += t->dropped;
    if (t->truncated)
      r.errors["stack_truncated"] += t->truncated;
    if (t->in_profiler)
      r.errors["samples_in_profiler"] += t->in_profiler;
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
      row.counters.resize(size_t(t->counter_count));
      for (int k = 0; k < t->counter_count; ++k)
        row.counters[size_t(k)] += double(slot.counters[k]);
    }
  }
  for (auto &[ctx, row] : rows) {
    row.cpu_seconds = double(row.samples) * per_sample;
    r.vertices.push_back(row);
  }
  for (const auto &[ctx, m] : s.mpi)
    r.mpi.push_back(MpiRow{ctx, m.calls, m.seconds, m.bytes});
  std::sort(r.mpi.begin(), r.mpi.end(),
            [](const MpiRow &a, const MpiRow &b) { return a.ctx < b.ctx; });
  for (const auto &[k, d] : s.deps)
    r.deps.push_back(DepRow{k.ctx, k.kind, k.peer, k.tag, k.comm, d.count, d.bytes, d.wait});
  p.contexts = s.contexts;
  p.comms = s.comms;
  return true;
}

} // namespace scalana::rt
