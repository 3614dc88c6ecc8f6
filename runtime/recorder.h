// What the PMPI wrappers record (docs/formats.md section 3): MPI call time by
// context, and communication dependence compressed to one row per distinct
// (context, kind, peer, tag, comm). Used only by the generated wrappers.
//
// Each thread aggregates into its own tables (docs/runtime.md, "Cost of a
// wrapped call"). A lock guards the parts other threads touch (the writer's
// snapshots, requests completed by another thread); a call that records
// there takes it once, from its first such record to its end.
//
// Nothing here throws: every helper catches internally and counts the failure
// in the profile's `errors`, because an exception escaping into the C (or
// Fortran) caller would terminate the program.
#pragma once

#include "scalana/profile.h"
#include "scalana/psg_format.h"

#include <mpi.h>

#include <cstdint>
#include <cstring>

namespace scalana::rt {

struct ThreadSamples;
struct ThreadRec;

// One MPI call in progress: captures the caller's context and the start time;
// its destructor adds calls/time/bytes to the context's MPI row. Inactive for
// calls made from inside another wrapped call (MPI implementations may call
// their own public entry points) or after the profile was written.
class MpiCall {
public:
  // RETURN_ADDRESS and FRAME_ADDRESS are the wrapper's own
  // (__builtin_return_address(0), __builtin_frame_address(0)): they key the
  // call site's context (call_sites.h).
  // kUntimed: the call only starts an operation and returns at once; it
  // reads no clock (two TSC reads cost as much as such a call) and adds no
  // time to its row. What it costs is CPU time the sampler attributes to it.
  static constexpr bool kUntimed = false;
  MpiCall(const char *op, MpiClass cls, const void *return_address, const void *frame_address,
          bool timed = true) noexcept;
  ~MpiCall();
  MpiCall(const MpiCall &) = delete;
  MpiCall &operator=(const MpiCall &) = delete;

  // End of the PMPI call: fixes the elapsed time. Inline: most calls at a
  // high rate are untimed and only mark it.
  void Stop() noexcept {
    if (stopped_)
      return;
    stopped_ = true;
    if (timed_)
      StopClock();
  }
  bool active() const { return active_; }
  double seconds() const { return seconds_; }
  uint32_t context() const { return ctx_; }
  // Dependence parameters of this call are recorded with this weight
  // (SCALANA_DEP_SAMPLE); 0 means skip this call's parameters.
  uint32_t dep_weight() const { return dep_weight_; }
  void add_bytes(uint64_t b) { bytes_ += b; }
  // The calling thread's record tables, once locked by this call (null
  // before); the destructor adds the call's row and unlocks them.
  ThreadRec *&held() { return held_; }

private:
  void StopClock() noexcept;
  static void CloseAbandonedCall() noexcept;
  const char *op_;                  // the operation, for its row
  ThreadSamples *thread_ = nullptr; // the calling thread's table, if sampled
  ThreadRec *held_ = nullptr;
  bool active_ = false, stopped_ = false, ticks_ = false, timed_ = true;
  uint32_t ctx_ = 0, dep_weight_ = 1;
  uint64_t start_ = 0; // Ticks() when ticks_, else nanoseconds of CLOCK_MONOTONIC
  double seconds_ = 0;
  uint64_t bytes_ = 0;
};

// Sizes of named datatypes, cached per thread: asking the library costs
// two calls, as much as a whole wrapped Accumulate. Only named types are
// cached: they are never freed, so a handle that names one never names
// another type, while a derived type's handle may be reused by a different
// type once freed. An empty slot holds 0, which is no valid datatype.
struct NamedTypeSize {
  MPI_Datatype type;
  int size;
};
constexpr unsigned kNamedTypeSlots = 8;
extern __thread NamedTypeSize tl_named_type_sizes[kNamedTypeSlots]
    __attribute__((tls_model("initial-exec")));
inline unsigned NamedTypeSlot(MPI_Datatype type) {
  uint64_t v = 0;
  std::memcpy(&v, &type, sizeof type < sizeof v ? sizeof type : sizeof v);
  // One multiply (Fibonacci hashing); the top 3 bits pick one of 8 slots.
  static_assert(kNamedTypeSlots == 8);
  return unsigned((v * 0x9e3779b97f4a7c15ull) >> 61);
}
uint64_t BytesAskingTheLibrary(int count, MPI_Datatype type) noexcept;
// COUNT elements of TYPE, in bytes (0 for no or a bad type). Inline: most
// wrapped calls ask, and the cached case is a few instructions.
inline uint64_t Bytes(int count, MPI_Datatype type) noexcept {
  const NamedTypeSize &e = tl_named_type_sizes[NamedTypeSlot(type)];
  if (count > 0 && e.type == type)
    return uint64_t(count) * uint64_t(e.size);
  return BytesAskingTheLibrary(count, type);
}
uint64_t SumBytes(const int *counts, int n, MPI_Datatype type) noexcept;
int CommSize(MPI_Comm comm) noexcept;

void InitStarting() noexcept;
void InitDone(MpiCall &call) noexcept;
void FinalizeProfile() noexcept;
void AbortProfile(int errorcode) noexcept;

// Blocking point to point: PEER is a rank of COMM; PROC_NULL is ignored.
// WAITS: the call's time is this row's wait (false for the send half of a
// Sendrecv, whose receive carries it).
void P2P(MpiCall &call, DepKind kind, int peer, int tag, MPI_Comm comm, uint64_t bytes,
         bool waits = true) noexcept;
// Blocking receive: the actual source and tag come from the status.
void RecvDone(MpiCall &call, MPI_Comm comm, const MPI_Status *status) noexcept;
void Coll(MpiCall &call, MPI_Comm comm, uint64_t bytes) noexcept;
// One-sided operation: an rma row on the operation's context (count, bytes,
// no wait) and a pending operation on TARGET until a synchronisation
// completes it (docs/async.md, "How it is recorded").
void Rma(MpiCall &call, MPI_Win win, int target, uint64_t bytes) noexcept;
// Request-based one-sided operation (Rput, Rget, ...): as Rma, and its
// request is completed like any other.
void PostRma(MpiCall &call, MPI_Request req, MPI_Win win, int target, uint64_t bytes) noexcept;
// Win_lock: acquiring the target's lock waits on the target.
void RmaLock(MpiCall &call, MPI_Win win, int target) noexcept;
// Synchronisation that completes the pending operations on TARGET
// (Win_flush, flush_local, unlock), or on every target with pending
// operations when TARGET is MPI_ANY_SOURCE (flush_all, flush_local_all,
// unlock_all, complete): the call's time is wait on rma rows of its context.
void RmaSync(MpiCall &call, MPI_Win win, int target) noexcept;
// Win_fence: a collective on the window's group, and the completion of this
// thread's pending operations on the window.
void WinColl(MpiCall &call, MPI_Win win) noexcept;
// Win_post: the origins a later Win_wait waits for.
void WinPost(MpiCall &call, MPI_Group group, MPI_Win win) noexcept;
// Win_wait: the end of the exposure epoch waits on the posted origins.
void WinWait(MpiCall &call, MPI_Win win) noexcept;

// Non-blocking: remember the request until a Wait/Test completes it.
void Post(MpiCall &call, MPI_Request req, DepKind kind, int peer, int tag, MPI_Comm comm,
          uint64_t bytes, bool persistent) noexcept;
void PostColl(MpiCall &call, MPI_Request req, MPI_Comm comm, uint64_t bytes) noexcept;
void Forget(MpiCall &call, MPI_Request req) noexcept;
// MPI_Start/Startall of persistent requests: each start of a send is a new
// message on its channel.
void Started(MpiCall &call, const MPI_Request *reqs, int n) noexcept;
// A Test/Testany/Testall/Testsome that completed nothing: its time is wait
// of the polled requests (split evenly), recorded when they complete.
void Polled(MpiCall &call, const MPI_Request *saved, int n) noexcept;
// Completion of requests SAVED[0..n): all of them when WHICH is null, else
// the one at *WHICH; statuses follow the same order as the call's.
void Complete(MpiCall &call, const MPI_Request *saved, int n, const int *which, int completed,
              const MPI_Status *statuses) noexcept;
void CompleteSome(MpiCall &call, const MPI_Request *saved, int n, const int *indices, int outcount,
                  const MPI_Status *statuses) noexcept;
const MPI_Request *SaveRequests(const MPI_Request *reqs, int n) noexcept;

void CommCreated(MpiCall &call, MPI_Comm parent, MPI_Comm created) noexcept;
void CommFreed(MPI_Comm comm) noexcept;
void WinCreated(MPI_Win win) noexcept;
void WinFreed(MpiCall &call, MPI_Win win) noexcept;
// MPI-IO collectives: collectives over the file's group (the communicator it
// was opened on, from MPI_File_get_group, cached per handle until closed).
void FileColl(MpiCall &call, MPI_File fh, uint64_t bytes) noexcept;
void FileClosing(MPI_File fh) noexcept;
void FileClosed(MpiCall &call) noexcept;

// Scratch buffers (thread-local, reused) for substituted statuses and the
// C form of Fortran arguments.
MPI_Status *StatusScratch(int n) noexcept;
MPI_Fint *FortranStatusScratch(int n) noexcept;
MPI_Status *FortranStatuses(const MPI_Fint *f, int n) noexcept;
MPI_Request *FortranRequests(const MPI_Fint *f, int n) noexcept;
int *FortranIndices(const MPI_Fint *f, int n) noexcept;
void *FortranSymbol(const char *name) noexcept;

} // namespace scalana::rt
