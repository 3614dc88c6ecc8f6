// A run's build split among processes (ppg_build.h, SendTo/ReceiveFrom):
// what one process folded from its parts, moved to the process that
// finishes the run. The arrays over ranks are disjoint by rank (a process
// holds the ranks of its consecutive groups), so they are copied into
// place; the sums of seconds are exact (fixed point) and add; what is
// numbered in the order things were first met (contexts and so PSG
// vertices, series, communicators) is renumbered by meeting the sender's in
// its order after the receiver's own, which is the order one process given
// every part would have met them.
#include "ppg/ppg_build_state.h"
#include "ppg/shard_bytes.h"

namespace scalana {

namespace {

void PutRank(shard::Out &o, const RankData &r) {
  o.Put(int32_t(r.rank));
  o.Str(r.host);
  o.Put(r.pid);
  o.Put(int32_t(r.threads));
  o.Put(r.wall_time);
  o.Put(r.samples);
  o.Put(r.samples_dropped);
  o.Put(r.cpu_time);
  o.Put(r.sampling_blocked);
  o.Put(r.on_cpu);
  o.Put(r.run_delay);
  o.Put(int32_t(r.cores));
  o.Put(uint64_t(r.errors.size()));
  for (const auto &[name, n] : r.errors) {
    o.Str(name);
    o.Put(n);
  }
  o.Put(uint64_t(r.thread_info.size()));
  for (const ThreadInfo &t : r.thread_info) {
    o.Put(t.index);
    o.Put(int32_t(t.omp_thread));
    o.Put(t.samples);
    o.Put(t.cpu_seconds);
    o.Put(t.run_delay);
    o.Put(t.wall_seconds);
  }
  o.Put(uint8_t(r.snapshot));
  o.Put(int32_t(r.end_signal));
  o.Str(r.unwritten);
}

RankData GetRank(shard::In &in) {
  RankData r;
  r.rank = in.Get<int32_t>();
  r.host = in.Str();
  r.pid = in.Get<int64_t>();
  r.threads = in.Get<int32_t>();
  r.wall_time = in.Get<double>();
  r.samples = in.Get<uint64_t>();
  r.samples_dropped = in.Get<uint64_t>();
  r.cpu_time = in.Get<double>();
  r.sampling_blocked = in.Get<double>();
  r.on_cpu = in.Get<double>();
  r.run_delay = in.Get<double>();
  r.cores = in.Get<int32_t>();
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    std::string name = in.Str();
    r.errors[name] = in.Get<uint64_t>();
  }
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    ThreadInfo t;
    t.index = in.Get<uint32_t>();
    t.omp_thread = in.Get<int32_t>();
    t.samples = in.Get<uint64_t>();
    t.cpu_seconds = in.Get<double>();
    t.run_delay = in.Get<double>();
    t.wall_seconds = in.Get<double>();
    r.thread_info.push_back(t);
  }
  r.snapshot = in.Get<uint8_t>() != 0;
  r.end_signal = in.Get<int32_t>();
  r.unwritten = in.Str();
  return r;
}

// A per-rank array's elements [FIRST, LAST) (times WIDTH), sent as they are.
template <class T>
void SendSlice(ShardLink &link, int to, const std::vector<T> &v, size_t first, size_t last,
               size_t width) {
  uint64_t n = last > first && !v.empty() ? (last - first) * width : 0;
  link.Send(to, &n, sizeof n);
  if (n)
    link.Send(to, v.data() + first * width, size_t(n) * sizeof(T));
}

// Into V from element FIRST (times WIDTH): the ranks the sender held.
template <class T>
void RecvSlice(ShardLink &link, int from, std::vector<T> &v, size_t first, size_t width) {
  uint64_t n = 0;
  link.Recv(from, &n, sizeof n);
  if (!n)
    return;
  if (first * width + n > v.size())
    throw Error("sharded analysis: another analysis process sent ranks outside the run");
  link.Recv(from, v.data() + first * width, size_t(n) * sizeof(T));
}

template <class T> void Free(std::vector<T> &v) { std::vector<T>().swap(v); }

} // namespace

void RunBuilder::State::SendTo(ShardLink &link, int to) {
  shard::Out o;
  o.Put(uint8_t(started));
  if (!started) {
    link.SendString(to, o.b);
    return;
  }
  const size_t lo = ranks_added ? size_t(min_rank) : 0, hi = ranks_added ? size_t(max_rank) + 1 : 0;
  o.Put(int32_t(declared));
  o.Put(int32_t(max_rank));
  o.Put(uint64_t(lo));
  o.Put(uint64_t(hi));
  o.Put(uint64_t(parts));
  o.Put(uint64_t(ranks_added));
  o.Put(run.unresolved_rows);
  o.Put(run.unplaced_samples);
  o.Put(run.unplaced_ranks);
  o.Put(run.samples_taken);
  o.Put(run.samples_dropped);
  o.Put(run.dropped_ranks);
  o.Put(int32_t(run.most_dropped_rank));
  o.Put(run.most_dropped_share);
  o.Put(run.approximated_rows);
  o.Put(run.dep_rows);
  o.Put(rate_samples);
  o.Put(obtained_samples);
  o.Put(sums);
  o.Put(uint64_t(run.warnings.size()));
  for (const std::string &w : run.warnings)
    o.Str(w);
  // Contexts in the order met; each series names its vertex by the first
  // context that resolved to it.
  std::unordered_map<VertexId, uint64_t> context_of;
  o.Put(uint64_t(context_order.size()));
  for (size_t i = 0; i < context_order.size(); ++i) {
    const Context &c = context_order[i];
    o.Put(uint64_t(c.size()));
    for (uint64_t f : c)
      o.Put(f);
    VertexId v = contexts.at(c).vertex;
    if (v != kNoVertex)
      context_of.try_emplace(v, i);
  }
  o.Put(uint64_t(run.comms.size()));
  for (const CommMembers &m : run.comms) {
    o.Put(uint64_t(m.runs().size()));
    for (const CommMembers::Run &r : m.runs())
      o.Put(r);
  }
  o.Put(uint64_t(summary.ranks.size()));
  for (const RankData &r : summary.ranks)
    PutRank(o, r);
  o.Put(uint64_t(summary.unwritten.size()));
  for (const auto &[rank, why] : summary.unwritten) {
    o.Put(int32_t(rank));
    o.Str(why);
  }
  o.Put(uint64_t(seq_overflow.size()));
  for (const std::vector<SeqRange> &s : seq_overflow) {
    o.Put(uint64_t(s.size()));
    for (const SeqRange &r : s)
      o.Put(r);
  }
  o.Put(uint8_t(!run.omp_threads.empty()));
  o.Put(uint64_t(run.series.size()));
  for (const VertexSeries &s : run.series) {
    o.Put(context_of.at(s.vertex));
    o.Put(uint8_t(s.own_data));
    o.Put(uint8_t(!s.cpu.empty()));
    o.Put(uint8_t(!s.off_cpu.empty()));
    o.Put(uint8_t(!s.mpi.empty()));
    o.Put(uint8_t(!s.counters.empty()));
    o.Put(s.mpi_rows);
  }
  link.SendString(to, o.b);
  std::string().swap(o.b);
  // Then the arrays, straight from where they are, each freed once sent.
  SendSlice(link, to, seen, lo, hi, 1);
  SendSlice(link, to, run.rank_cpu, lo, hi, 1);
  link.SendTail(to, arrived_time);
  Free(arrived_time);
  SendSlice(link, to, run.omp_threads, lo, hi, 1);
  for (size_t i = 0; i < run.series.size(); ++i) {
    VertexSeries &s = run.series[i];
    SendSlice(link, to, s.cpu, lo, hi, 1);
    SendSlice(link, to, s.off_cpu, lo, hi, 1);
    SendSlice(link, to, s.mpi, lo, hi, 1);
    SendSlice(link, to, s.calls, lo, hi, 1);
    SendSlice(link, to, s.counters, lo, hi, ncounters);
    link.SendTail(to, s.edges);
    link.SendTail(to, seq_refs[i]);
    link.SendTail(to, s.threads);
    s = VertexSeries{};
    Free(seq_refs[i]);
  }
  run = Run{};
}

void RunBuilder::State::ReceiveFrom(ShardLink &link, int from) {
  const std::string head = link.RecvString(from);
  shard::In in(head);
  if (!in.Get<uint8_t>())
    return; // it had no part of this run
  if (!started)
    throw Error(run.label + ": sharded analysis: the first process had no part of the run");
  if (in.Get<int32_t>() != declared)
    throw Error(run.label + ": sharded analysis: the processes read different world sizes");
  max_rank = std::max(max_rank, in.Get<int32_t>());
  const size_t lo = size_t(in.Get<uint64_t>());
  in.Get<uint64_t>(); // hi: the slices carry their lengths
  Reserve(declared > 0 ? size_t(declared) : size_t(max_rank + 1));
  parts += size_t(in.Get<uint64_t>());
  const size_t added = size_t(in.Get<uint64_t>());
  if (added)
    min_rank = std::min(min_rank, int(lo));
  ranks_added += added;
  run.unresolved_rows += in.Get<uint64_t>();
  run.unplaced_samples += in.Get<uint64_t>();
  run.unplaced_ranks += in.Get<uint64_t>();
  run.samples_taken += in.Get<uint64_t>();
  run.samples_dropped += in.Get<uint64_t>();
  run.dropped_ranks += in.Get<uint64_t>();
  const int most_rank = in.Get<int32_t>();
  const double most_share = in.Get<double>();
  if (most_share > run.most_dropped_share)
    run.most_dropped_share = most_share, run.most_dropped_rank = most_rank;
  run.approximated_rows += in.Get<uint64_t>();
  run.dep_rows += in.Get<uint64_t>();
  rate_samples += in.Get<uint64_t>();
  obtained_samples += in.Get<uint64_t>();
  const Sums theirs_sums = in.Get<Sums>();
  sums.outside += theirs_sums.outside;
  sums.unplaced += theirs_sums.unplaced;
  sums.unresolved += theirs_sums.unresolved;
  sums.approximated += theirs_sums.approximated;
  sums.omp_wait += theirs_sums.omp_wait;
  sums.rate += theirs_sums.rate;
  sums.obtained += theirs_sums.obtained;
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;)
    run.warnings.push_back(in.Str());
  // Its contexts met after ours, in its order: the PSG expands and the
  // counts grow as they would have.
  std::vector<VertexId> vertex_of;
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    Context c(size_t(in.Get<uint64_t>()));
    for (uint64_t &f : c)
      f = in.Get<uint64_t>();
    vertex_of.push_back(ResolveContext(c).vertex);
  }
  // Communicators likewise; the k-th of equal ones is our k-th (dups).
  std::vector<uint32_t> comm_of;
  std::vector<CommMembers> theirs;
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    CommMembers m;
    for (uint64_t k = in.Get<uint64_t>(); k-- > 0;) {
      CommMembers::Run r = in.Get<CommMembers::Run>();
      m.AppendRun(r.first, r.stride, r.count);
    }
    int occurrence = 0;
    for (const CommMembers &t : theirs)
      occurrence += t == m;
    comm_of.push_back(CommId(m, occurrence));
    theirs.push_back(std::move(m));
  }
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;)
    summary.ranks.push_back(GetRank(in));
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    int rank = in.Get<int32_t>();
    summary.unwritten.emplace(rank, in.Str());
  }
  const size_t overflow_base = seq_overflow.size();
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    std::vector<SeqRange> s(size_t(in.Get<uint64_t>()));
    for (SeqRange &r : s)
      r = in.Get<SeqRange>();
    seq_overflow.push_back(std::move(s));
  }
  if (in.Get<uint8_t>() && run.omp_threads.empty())
    run.omp_threads.assign(cap, 0);
  struct Incoming {
    uint64_t context;
    uint8_t own, cpu, off_cpu, mpi, counters, mpi_rows;
  };
  std::vector<Incoming> series(size_t(in.Get<uint64_t>()));
  for (Incoming &s : series) {
    s.context = in.Get<uint64_t>();
    s.own = in.Get<uint8_t>();
    s.cpu = in.Get<uint8_t>();
    s.off_cpu = in.Get<uint8_t>();
    s.mpi = in.Get<uint8_t>();
    s.counters = in.Get<uint8_t>();
    s.mpi_rows = in.Get<uint8_t>();
    if (s.context >= vertex_of.size() || vertex_of[s.context] == kNoVertex)
      throw Error(run.label + ": sharded analysis: a series of another process has no vertex");
  }
  RecvSlice(link, from, seen, lo, 1);
  RecvSlice(link, from, run.rank_cpu, lo, 1);
  link.RecvAppend(from, arrived_time);
  RecvSlice(link, from, run.omp_threads, lo, 1);
  for (const Incoming &inc : series) {
    const VertexId v = vertex_of[inc.context];
    VertexSeries &s = SeriesOf(v);
    const size_t si = size_t(run.slot_of_vertex[v]);
    s.own_data = s.own_data || inc.own;
    s.mpi_rows |= inc.mpi_rows;
    if (inc.cpu && s.cpu.empty())
      s.cpu.assign(cap, 0.f);
    if (inc.off_cpu && s.off_cpu.empty())
      s.off_cpu.assign(cap, 0.f);
    if (inc.mpi && s.mpi.empty())
      s.mpi.assign(cap, 0.f), s.calls.assign(cap, 0);
    if (inc.counters && s.counters.empty())
      s.counters.assign(cap * ncounters, 0.f);
    RecvSlice(link, from, s.cpu, lo, 1);
    RecvSlice(link, from, s.off_cpu, lo, 1);
    RecvSlice(link, from, s.mpi, lo, 1);
    RecvSlice(link, from, s.calls, lo, 1);
    RecvSlice(link, from, s.counters, lo, ncounters);
    const size_t e0 = link.RecvAppend(from, s.edges);
    for (size_t k = e0; k < s.edges.size(); ++k) {
      DepEdge &e = s.edges[k];
      if (e.comm < comm_of.size())
        e.comm = comm_of[e.comm];
      if (e.kind == DepKind::Rma)
        e.peer_vertex = v;
    }
    const size_t r0 = link.RecvAppend(from, seq_refs[si]);
    for (size_t k = r0; k < seq_refs[si].size(); ++k)
      if (seq_refs[si][k].first == kOverflow)
        seq_refs[si][k].last += uint32_t(overflow_base);
    link.RecvAppend(from, s.threads);
    if (seq_refs[si].size() != s.edges.size())
      throw Error(run.label + ": sharded analysis: edges and message numbers disagree");
  }
}

} // namespace scalana
