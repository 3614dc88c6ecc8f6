// The MPI recorder's internals shared by its files: recorder.cpp (calls,
// communicators and windows, posted requests, the snapshot) and
// recorder_async.cpp (one-sided operations and the completion of requests,
// docs/async.md). Not an interface of the runtime.
#pragma once

#include "late_thread_local.h"
#include "record_lock.h"
#include "recorder.h"
#include "recorder_tables.h"
#include "runtime.h"

#include <atomic>
#include <unordered_map>
#include <vector>

namespace scalana::rt {

using namespace recorder_tables;

inline constexpr double kOwnerLockSeconds = 2.0, kPeerLockSeconds = 0.1;

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

// Every thread's record, newest first.
extern std::atomic<ThreadRec *> g_recs;
ThreadRec *NewThreadRec();

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

inline ThreadRec &OwnRec() { return *LateThreadLocal<RecOwner>::Get().rec; }

// The outermost wrapped call this thread is in, as far as the wrappers
// know: its entry point's frame address, and what its destructor would
// close. A longjmp out of the call (from an MPI error handler) skips the
// destructor; the next wrapper entry finds its frame at or above that one
// (a nested call, from inside the library, is always deeper) and closes it.
// Trivial, so that the other files reach it as plainly as recorder.cpp,
// which defines it: an extern thread_local of a class with a constructor
// is reached through a wrapper call that checks for its initialisation.
struct OpenCall {
  uintptr_t frame;
  const char *op;
  uint32_t ctx;
  bool active;
  ThreadSamples *thread;
  ThreadRec *held;
};
extern __thread OpenCall tl_open __attribute__((tls_model("initial-exec")));

// Locks this thread's record for CALL (once per call; the destructor
// unlocks). Throws when the lock stays taken (see RecordLock).
struct LockTimeout {};
[[noreturn]] void ThrowLockTimeout();
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

// Handle -> group of world ranks, cached per thread (recorder.cpp).
GroupInfo CommGroup(MPI_Comm comm);
GroupInfo WinGroup(MPI_Win win);
GroupInfo FileGroup(MPI_File fh);
// PEER, a rank of G's group (or MPI_ANY_SOURCE), as a world rank; -1 unknown.
inline int32_t PeerWorld(const GroupInfo &g, int peer) {
  if (peer == MPI_ANY_SOURCE)
    return MPI_ANY_SOURCE;
  if (!g.peers || peer < 0 || size_t(peer) >= g.peers->size())
    return -1;
  return (*g.peers)[size_t(peer)];
}
std::vector<int> ToWorld(MPI_Group group);
// The next number (from 1) of a message on its channel; 0 when the table
// of channels is full.
uint64_t NextSeq(bool recv, int32_t peer, int32_t tag, uint32_t comm);

inline bool Cancelled(const MPI_Status *status) {
  int cancelled = 0;
  return PMPI_Test_cancelled(status, &cancelled) == MPI_SUCCESS && cancelled;
}

} // namespace scalana::rt
