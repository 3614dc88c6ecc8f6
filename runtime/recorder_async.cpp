// One-sided operations and the completion of non-blocking requests
// (docs/async.md, "How it is recorded"): what the wrappers of MPI_Put,
// MPI_Get ... and their synchronisations, and of MPI_Wait*, MPI_Test*,
// MPI_Start* and MPI_Request_free record (requests are posted in
// recorder.cpp). Same rules as recorder.cpp: each thread's own record, its
// lock taken at most once a call (Hold).
#include "recorder_internal.h"

#include <iterator>

namespace scalana::rt {

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

} // namespace

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

} // namespace scalana::rt
