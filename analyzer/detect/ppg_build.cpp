#include "detect/ppg_build.h"
#include "detect/ppg_threads.h"
#include "scalana/sampling_checks.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>

namespace scalana {

namespace {

// Preference among several vertices carrying rows for the same message: the
// call that starts the transfer (Send/Isend/Recv/Irecv) says when the data was
// ready or the receive was posted; the Wait that completed it says less.
int InitiatorRank(const Psg &psg, VertexId v) {
  MpiClass c = psg.vertex(v).mpi_class;
  if (c == MpiClass::P2PBlocking || c == MpiClass::P2PNonBlocking)
    return 0;
  if (c == MpiClass::Completion)
    return 2;
  return 1;
}

struct ContextHash {
  size_t operator()(const Context &c) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t f : c)
      h = (h ^ f) * 1099511628211ull;
    return size_t(h);
  }
};

struct Resolved {
  VertexId vertex = kNoVertex;
  bool approximated = false, outside = false;
};

// A communicator's members, hashed from its size and a few members: a world
// communicator is compared in full only against the one it may equal.
uint64_t CommHash(const std::vector<int> &m) {
  uint64_t h = m.size() * 0x9e3779b97f4a7c15ull;
  const size_t n = m.size();
  for (size_t k : {size_t(0), n / 3, n / 2, n - 1})
    if (k < n)
      h = (h ^ uint64_t(uint32_t(m[k]))) * 1099511628211ull;
  return h;
}

// The message numbers of one edge during the build, in 8 bytes: one range
// that fits 32 bits inline (the usual row: messages 1 to n), else FIRST =
// kOverflow and LAST an index into the overflow store; {0, 0}: none.
struct SeqRef {
  uint32_t first = 0, last = 0;
};
constexpr uint32_t kOverflow = UINT32_MAX;

// The ranks' fields other than rows that the run's warnings read.
bool Notable(const RankData &r) {
  return r.snapshot || r.end_signal || !r.unwritten.empty() || !r.errors.empty() ||
         r.sampling_blocked > 0 || !r.thread_info.empty();
}

// A type, not a function: the sorts and searches over 10^8 edges inline it.
struct EdgeOrder {
  bool operator()(const DepEdge &x, const DepEdge &y) const {
    return x.rank != y.rank ? x.rank < y.rank : x.peer_rank < y.peer_rank;
  }
};
constexpr EdgeOrder EdgeBefore{};

// Sorts EDGES[start..] (and REFS with them) by (rank, peer), keeping the
// rows' order among equals.
void SortEdges(std::vector<DepEdge> &edges, std::vector<SeqRef> &refs, size_t start) {
  if (std::is_sorted(edges.begin() + start, edges.end(), EdgeBefore))
    return;
  std::vector<uint32_t> order(edges.size() - start);
  std::iota(order.begin(), order.end(), uint32_t(start));
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return EdgeBefore(edges[a], edges[b]); });
  std::vector<DepEdge> e(order.size());
  std::vector<SeqRef> r(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    e[k] = edges[order[k]], r[k] = refs[order[k]];
  std::copy(e.begin(), e.end(), edges.begin() + start);
  std::copy(r.begin(), r.end(), refs.begin() + start);
}

} // namespace

struct RunBuilder::State {
  Psg &psg;
  ProgressFn progress;
  Run run;
  bool started = false;
  int declared = 0;
  int max_rank = -1;
  size_t cap = 0; // world ranks the arrays below hold
  std::vector<uint8_t> seen;
  std::unordered_map<Context, Resolved, ContextHash> contexts;
  std::unordered_multimap<uint64_t, uint32_t> comm_ids;
  uint64_t rate_samples = 0;
  double rate_seconds = 0;
  size_t ncounters = 0;
  std::vector<std::vector<SeqRef>> seq_refs; // per series, parallel to its edges
  std::vector<std::vector<SeqRange>> seq_overflow;
  std::vector<std::pair<size_t, size_t>> touched; // (series, first new edge) of one rank
  Profile summary; // meta, unwritten markers, notable ranks without rows
  size_t parts = 0, ranks_added = 0;

  State(Psg &p, const std::string &label, const ProgressFn &prog) : psg(p), progress(prog) {
    run.label = label;
  }

  VertexSeries &SeriesOf(VertexId v) {
    if (size_t(v) >= run.slot_of_vertex.size())
      run.slot_of_vertex.resize(size_t(v) + 1, -1);
    if (run.slot_of_vertex[v] < 0) {
      run.slot_of_vertex[v] = int32_t(run.series.size());
      run.series.emplace_back();
      run.series.back().vertex = v;
      seq_refs.emplace_back();
    }
    return run.series[run.slot_of_vertex[v]];
  }

  // Arrays are indexed by world rank while parts arrive (compacted to slots
  // at the end): grown only for profiles that do not declare their size.
  void Reserve(size_t n) {
    if (n <= cap)
      return;
    cap = n;
    seen.resize(cap, 0);
    run.rank_cpu.resize(cap, 0.f);
    for (VertexSeries &s : run.series) {
      if (!s.cpu.empty())
        s.cpu.resize(cap, 0.f);
      if (!s.mpi.empty())
        s.mpi.resize(cap, 0.f), s.calls.resize(cap, 0);
      if (!s.counters.empty())
        s.counters.resize(cap * ncounters, 0.f);
    }
    if (!run.omp_threads.empty())
      run.omp_threads.resize(cap, 0);
  }

  uint32_t CommId(const std::vector<int> &members, int occurrence) {
    uint64_t h = CommHash(members);
    auto [b, e] = comm_ids.equal_range(h);
    int same = 0;
    for (auto it = b; it != e; ++it)
      if (run.comms[it->second] == members && same++ == occurrence)
        return it->second;
    uint32_t id = uint32_t(run.comms.size());
    run.comms.push_back(members);
    comm_ids.emplace(h, id);
    return id;
  }

  void AddPart(const Profile &part);
  Run Finish();
};

RunBuilder::RunBuilder(Psg &psg, const std::string &label, const ProgressFn &progress)
    : st_(new State(psg, label, progress)) {}
RunBuilder::~RunBuilder() = default;
void RunBuilder::Add(const Profile &part) { st_->AddPart(part); }
Run RunBuilder::Finish() { return st_->Finish(); }

void RunBuilder::State::AddPart(const Profile &part) {
  const std::string &label = run.label;
  const int declared_here = part.meta.world_size;
  if (declared_here < 0 || declared_here > kMaxWorldSize)
    throw Error(label + ": world_size " + std::to_string(declared_here) + " is outside 0 to " +
                std::to_string(kMaxWorldSize));
  if (!started) {
    started = true;
    run.meta = part.meta;
    declared = declared_here;
    ncounters = part.meta.sampling.counters.size();
    summary.meta = part.meta;
    summary.meta.world_size = 0; // its lines on missing ranks are made in Finish
  }
  ++parts;
  int part_max = -1;
  for (const RankData &rd : part.ranks) {
    if (rd.rank < 0 || rd.rank >= (declared > 0 ? declared : kMaxWorldSize))
      throw Error(label + ": rank " + std::to_string(rd.rank) + " is outside the run (" +
                  std::to_string(declared) + " ranks)");
    part_max = std::max(part_max, rd.rank);
  }
  max_rank = std::max(max_rank, part_max);
  Reserve(declared > 0 ? size_t(declared) : size_t(part_max + 1));
  for (const auto &[rank, why] : part.unwritten)
    summary.unwritten.emplace(rank, why);

  // 1. The part's contexts -> contracted vertices; each distinct context of
  // the run is resolved once.
  std::vector<Resolved> ctx(part.contexts.size());
  for (size_t i = 0; i < part.contexts.size(); ++i) {
    auto [it, fresh] = contexts.try_emplace(part.contexts[i]);
    if (fresh) {
      Resolved &r = it->second;
      r.outside = part.contexts[i].empty();
      size_t cut = 0;
      // A context that does not fit whole is placed at its largest part that
      // does, never dropped while any part fits; counted and reported.
      r.vertex = r.outside ? kNoVertex : psg.ResolveNearest(part.contexts[i], &cut);
      if (r.vertex == kNoVertex && !r.outside)
        ++run.unresolved_contexts;
      if (cut) {
        r.approximated = true;
        ++run.approximated_contexts;
      }
    }
    ctx[i] = it->second;
  }
  auto at = [&](uint32_t c) { return c < ctx.size() ? ctx[c] : Resolved{}; };
  auto count_approximated = [&](const Resolved &r, double seconds) {
    if (r.approximated) {
      ++run.approximated_rows;
      run.approximated_seconds += seconds;
    }
  };
  // 2. Communicators: numbered run-wide; duplicates within a part (MPI_Comm_dup)
  // stay distinct.
  std::vector<uint32_t> comm(part.comms.size());
  for (size_t i = 0; i < part.comms.size(); ++i) {
    int k = 0;
    for (size_t j = 0; j < i; ++j)
      k += part.comms[j].size() == part.comms[i].size() && part.comms[j] == part.comms[i];
    comm[i] = CommId(part.comms[i], k);
  }

  for (const RankData &rd : part.ranks) {
    const int r = rd.rank;
    if (seen[r]) {
      run.warnings.push_back(label + ": rank " + std::to_string(r) +
                             " appears twice in the profile; keeping the first");
      continue;
    }
    seen[r] = 1;
    if (Notable(rd)) {
      RankData head = rd;
      head.vertices.clear(), head.mpi.clear(), head.deps.clear();
      head.thread_vertices.clear(), head.omp.clear();
      summary.ranks.push_back(std::move(head));
    }
    double sampled = 0;
    for (const VertexRow &row : rd.vertices) {
      const Resolved res = at(row.ctx);
      // Measured CPU time: each sample stands for the time since the one
      // before, so this holds when fewer samples came than were asked.
      double secs = row.cpu_seconds;
      rate_samples += row.samples;
      rate_seconds += secs;
      sampled += secs;
      if (res.outside) {
        run.outside_seconds += secs;
        continue;
      }
      if (res.vertex == kNoVertex) {
        ++run.unresolved_rows;
        run.unresolved_seconds += secs;
        continue;
      }
      count_approximated(res, secs);
      VertexSeries &s = SeriesOf(res.vertex);
      s.own_data = true;
      if (s.cpu.empty())
        s.cpu.assign(cap, 0.f);
      s.cpu[r] += float(secs);
      if (ncounters && !row.counters.empty()) {
        if (s.counters.empty())
          s.counters.assign(cap * ncounters, 0.f);
        for (size_t c = 0; c < ncounters && c < row.counters.size(); ++c)
          s.counters[size_t(r) * ncounters + c] += float(row.counters[c]);
      }
    }
    // The rank's CPU clock where the runtime read it, else its samples' sum.
    run.rank_cpu[r] = float(rd.cpu_time > 0 ? rd.cpu_time : sampled);
    for (const MpiRow &row : rd.mpi) {
      const Resolved res = at(row.ctx);
      if (res.outside) {
        run.outside_seconds += row.seconds;
        continue;
      }
      if (res.vertex == kNoVertex) {
        ++run.unresolved_rows;
        run.unresolved_seconds += row.seconds;
        continue;
      }
      count_approximated(res, row.seconds);
      VertexSeries &s = SeriesOf(res.vertex);
      s.own_data = true;
      if (s.mpi.empty()) {
        s.mpi.assign(cap, 0.f);
        s.calls.assign(cap, 0);
      }
      s.mpi[r] += float(row.seconds);
      s.calls[r] += uint32_t(std::min<uint64_t>(row.calls, UINT32_MAX - s.calls[r]));
    }
    if (!rd.thread_info.empty() && run.omp_threads.empty())
      run.omp_threads.assign(cap, 0);
    AddThreadTimes(
        psg, run, rd, r, [&](uint32_t c) { return at(c).vertex; },
        [&](VertexId v) -> VertexSeries & { return SeriesOf(v); });
    for (const DepRow &row : rd.deps) {
      ++run.dep_rows;
      const Resolved res = at(row.ctx);
      if (res.vertex == kNoVertex) {
        if (!res.outside)
          ++run.unresolved_rows;
        continue;
      }
      DepEdge e;
      e.rank = r;
      e.kind = row.kind;
      e.comm = row.comm < comm.size() ? comm[row.comm] : row.comm;
      e.tag = row.tag;
      e.wait = float(row.wait_seconds);
      e.count = uint32_t(std::min<uint64_t>(row.count, UINT32_MAX));
      e.bytes = row.bytes;
      e.peer_rank = row.kind == DepKind::Coll ? -1 : row.peer;
      if (row.kind == DepKind::Rma)
        e.peer_vertex = res.vertex; // SPMD: the target runs the same synchronisation vertex
      VertexSeries &s = SeriesOf(res.vertex);
      const size_t si = size_t(run.slot_of_vertex[res.vertex]);
      if (std::find_if(touched.begin(), touched.end(),
                       [&](const auto &t) { return t.first == si; }) == touched.end())
        touched.push_back({si, s.edges.size()});
      s.edges.push_back(e);
      SeqRef ref;
      if ((row.kind == DepKind::Send || row.kind == DepKind::Recv) && !row.seqs.empty()) {
        if (row.seqs.size() == 1 && row.seqs[0].first > 0 && row.seqs[0].last < kOverflow &&
            row.seqs[0].first <= row.seqs[0].last) {
          ref = {uint32_t(row.seqs[0].first), uint32_t(row.seqs[0].last)};
        } else {
          ref = {kOverflow, uint32_t(seq_overflow.size())};
          seq_overflow.push_back(row.seqs);
        }
      }
      seq_refs[si].push_back(ref);
    }
    // The rank's new edges in each vertex sorted by peer: edges then stay
    // sorted by (rank, peer) when parts come in rank order.
    for (const auto &[si, start] : touched)
      SortEdges(run.series[si].edges, seq_refs[si], start);
    touched.clear();
    ++ranks_added;
    if (progress && ranks_added % 8192 == 0)
      progress(label + ": loaded " + std::to_string(ranks_added) + " ranks");
  }
  // After the first part, room for every rank's edges at its rate: growing
  // by doubling would copy 10^8 edges and hold both copies at once.
  if (parts == 1 && declared > 0 && ranks_added > 0 && size_t(declared) > ranks_added)
    for (size_t i = 0; i < run.series.size(); ++i) {
      VertexSeries &s = run.series[i];
      size_t want = s.edges.size() * (size_t(declared) + ranks_added - 1) / ranks_added;
      want += want / 64;
      s.edges.reserve(want);
      seq_refs[i].reserve(want);
    }
}

namespace {

// Messages two rows share: both number the channel's messages the same way
// (docs/formats.md, `seqs`), so overlapping ranges are the same messages.
uint64_t SharedMessages(const SeqRange *a, uint32_t na, const SeqRange *b, uint32_t nb) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < na; ++i)
    for (uint32_t j = 0; j < nb; ++j) {
      uint64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].last, b[j].last);
      if (lo <= hi)
        n += hi - lo + 1;
    }
  return n;
}

template <class T> void Compact(std::vector<T> &a, const std::vector<int> &ranks, size_t width) {
  if (a.empty())
    return;
  for (size_t slot = 0; slot < ranks.size(); ++slot)
    for (size_t c = 0; c < width; ++c)
      a[slot * width + c] = a[size_t(ranks[slot]) * width + c];
  a.resize(ranks.size() * width);
  a.shrink_to_fit();
}

} // namespace

Run RunBuilder::State::Finish() {
  const std::string &label = run.label;
  run.world_size = declared > 0 ? declared : max_rank + 1;
  Reserve(size_t(run.world_size));
  run.slot_of_rank.assign(size_t(run.world_size), -1);
  for (int r = 0; r < run.world_size; ++r) {
    if (!seen[r]) {
      run.missing_ranks.push_back(r);
      continue;
    }
    run.slot_of_rank[r] = int32_t(run.ranks.size());
    run.ranks.push_back(r);
  }
  std::vector<uint8_t>().swap(seen);
  run.contexts = contexts.size();
  decltype(contexts)().swap(contexts);
  const int nslots = run.nslots();

  // Per world rank -> per slot (nothing moves when every rank is present).
  if (size_t(nslots) != cap) {
    Compact(run.rank_cpu, run.ranks, 1);
    Compact(run.omp_threads, run.ranks, 1);
    for (VertexSeries &s : run.series) {
      Compact(s.cpu, run.ranks, 1);
      Compact(s.mpi, run.ranks, 1);
      Compact(s.calls, run.ranks, 1);
      Compact(s.counters, run.ranks, ncounters);
    }
  }
  if (run.rank_cpu.empty())
    run.rank_cpu.assign(size_t(nslots), 0.f);
  for (VertexSeries &s : run.series) {
    for (ThreadTime &t : s.threads)
      t.slot = run.slot_of_rank[t.slot];
    std::stable_sort(s.threads.begin(), s.threads.end(),
                     [](const ThreadTime &a, const ThreadTime &b) {
                       return a.slot != b.slot ? a.slot < b.slot : a.thread < b.thread;
                     });
  }
  run.sample_rate = rate_seconds > 0 ? double(rate_samples) / rate_seconds : run.meta.sampling.hz;

  // 3. Inclusive time: every ancestor of a vertex with data gets a series too.
  size_t own_count = run.series.size();
  for (size_t i = 0; i < own_count; ++i) {
    VertexId p = psg.vertex(run.series[i].vertex).parent;
    while (p != kNoVertex) {
      bool had = size_t(p) < run.slot_of_vertex.size() && run.slot_of_vertex[p] >= 0;
      SeriesOf(p);
      if (had)
        break; // its ancestors were added when it was
      p = psg.vertex(p).parent;
    }
  }
  if (run.slot_of_vertex.size() < psg.vertices().size())
    run.slot_of_vertex.resize(psg.vertices().size(), -1);
  for (VertexSeries &s : run.series)
    s.incl.assign(size_t(nslots), 0.f);
  for (size_t i = 0; i < own_count; ++i) {
    for (int slot = 0; slot < nslots; ++slot) {
      float t = float(ExclusiveTime(psg, run.series[i], slot));
      if (t == 0)
        continue;
      for (VertexId v = run.series[i].vertex; v != kNoVertex; v = psg.vertex(v).parent)
        run.series[run.slot_of_vertex[v]].incl[slot] += t;
    }
  }
  // Total per rank: every top-level vertex (main, and the roots of thread
  // start routines that Resolve adds beside it).
  run.rank_total.assign(size_t(nslots), 0.f);
  for (const VertexSeries &s : run.series)
    if (psg.vertex(s.vertex).parent == kNoVertex)
      for (int slot = 0; slot < nslots; ++slot)
        run.rank_total[slot] += s.incl[slot];
  for (float t : run.rank_total)
    run.total_time = std::max(run.total_time, double(t));

  // 4. Point-to-point rows matched to the opposite rows on the peer. Edges
  // are sorted by (rank, peer) so the peer's rows towards a rank are found by
  // binary search in each vertex that has such rows: no index over all rows.
  std::vector<size_t> p2p; // series with send/recv edges, by (preference, vertex)
  for (size_t i = 0; i < run.series.size(); ++i) {
    VertexSeries &s = run.series[i];
    if (s.edges.empty())
      continue;
    SortEdges(s.edges, seq_refs[i], 0); // only parts out of rank order move anything
    for (const DepEdge &e : s.edges)
      if (e.kind == DepKind::Send || e.kind == DepKind::Recv) {
        p2p.push_back(i);
        break;
      }
  }
  std::sort(p2p.begin(), p2p.end(), [&](size_t a, size_t b) {
    VertexId va = run.series[a].vertex, vb = run.series[b].vertex;
    int pa = InitiatorRank(psg, va), pb = InitiatorRank(psg, vb);
    return pa != pb ? pa < pb : va < vb;
  });
  // Where each rank's edges start in each such vertex: the peer's rows
  // towards a rank are then found in a few dozen edges, not by a binary
  // search over all of them (cache misses at 10^8 edges).
  std::vector<std::vector<uint32_t>> first_edge(p2p.size());
  for (size_t k = 0; k < p2p.size(); ++k) {
    const std::vector<DepEdge> &edges = run.series[p2p[k]].edges;
    std::vector<uint32_t> &f = first_edge[k];
    f.assign(size_t(run.world_size) + 1, 0);
    for (const DepEdge &e : edges)
      ++f[size_t(e.rank) + 1];
    for (size_t r = 1; r < f.size(); ++r)
      f[r] += f[r - 1];
  }
  auto ranges_of = [&](const SeqRef &ref, const SeqRange **p, SeqRange *one) -> uint32_t {
    if (ref.first == kOverflow) {
      *p = seq_overflow[ref.last].data();
      return uint32_t(seq_overflow[ref.last].size());
    }
    if (ref.first == 0)
      return 0;
    *one = {ref.first, ref.last};
    *p = one;
    return 1;
  };
  for (size_t i : p2p) {
    VertexSeries &s = run.series[i];
    for (size_t k = 0; k < s.edges.size(); ++k) {
      DepEdge &e = s.edges[k];
      if (e.kind != DepKind::Send && e.kind != DepKind::Recv)
        continue;
      const DepKind want = e.kind == DepKind::Send ? DepKind::Recv : DepKind::Send;
      SeqRange mine_one, theirs_one;
      const SeqRange *mine = nullptr, *theirs = nullptr;
      const uint32_t nmine = ranges_of(seq_refs[i][k], &mine, &mine_one);
      VertexId first = kNoVertex, best = kNoVertex;
      uint64_t best_shared = 0;
      const bool peer_in = e.peer_rank >= 0 && e.peer_rank < run.world_size;
      for (size_t j = 0; j < p2p.size() && peer_in; ++j) {
        const VertexSeries &o = run.series[p2p[j]];
        auto b = o.edges.begin() + first_edge[j][size_t(e.peer_rank)];
        auto end = o.edges.begin() + first_edge[j][size_t(e.peer_rank) + 1];
        DepEdge key;
        key.rank = e.peer_rank, key.peer_rank = e.rank;
        for (auto it = std::lower_bound(b, end, key, EdgeBefore);
             it != end && it->peer_rank == e.rank; ++it) {
          if (it->kind != want || it->tag != e.tag || it->comm != e.comm)
            continue;
          if (first == kNoVertex)
            first = o.vertex;
          if (!nmine)
            break;
          const uint32_t ntheirs =
              ranges_of(seq_refs[p2p[j]][size_t(it - o.edges.begin())], &theirs, &theirs_one);
          uint64_t shared = SharedMessages(mine, nmine, theirs, ntheirs);
          if (shared > best_shared)
            best_shared = shared, best = o.vertex;
        }
        if (first != kNoVertex && !nmine)
          break;
      }
      e.peer_vertex = best != kNoVertex ? best : first;
      if (e.peer_vertex == kNoVertex)
        ++run.unmatched_p2p;
    }
  }
  decltype(seq_refs)().swap(seq_refs);
  decltype(seq_overflow)().swap(seq_overflow);

  if (!run.missing_ranks.empty()) {
    std::string list;
    for (size_t i = 0; i < run.missing_ranks.size() && i < 20; ++i)
      list += (i ? "," : "") + std::to_string(run.missing_ranks[i]);
    if (run.missing_ranks.size() > 20)
      list += ",...";
    run.warnings.push_back(label + ": " + std::to_string(run.missing_ranks.size()) + " of " +
                           std::to_string(run.world_size) + " ranks missing from the profile (" +
                           list + "); analysing the " + std::to_string(nslots) + " present");
  }
  // Which ranks ended before MPI_Finalize, and how; why the missing ones
  // left no data (one line per reason). The summary holds only the ranks
  // with something to say; with ranks missing or unwritten, the present
  // ones are listed too (rows left out) so that the missing are told apart.
  std::sort(summary.ranks.begin(), summary.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
  if (!run.missing_ranks.empty() || !summary.unwritten.empty()) {
    Profile all;
    all.meta.world_size = run.world_size;
    all.unwritten = summary.unwritten;
    size_t k = 0;
    for (int r : run.ranks) {
      if (k < summary.ranks.size() && summary.ranks[k].rank == r) {
        all.ranks.push_back(summary.ranks[k++]);
      } else {
        all.ranks.emplace_back();
        all.ranks.back().rank = r;
      }
    }
    for (const std::string &line : DescribeRankEnds(all))
      run.warnings.push_back(label + ": " + line);
  } else {
    for (const std::string &line : DescribeRankEnds(summary))
      run.warnings.push_back(label + ": " + line);
  }
  if (run.unresolved_contexts)
    run.warnings.push_back(label + ": " + std::to_string(run.unresolved_contexts) + " of " +
                           std::to_string(run.contexts) +
                           " contexts do not fit the binary's PSG (" +
                           std::to_string(run.unresolved_rows) + " rows ignored)");
  if (run.approximated_contexts) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3g", run.approximated_seconds);
    run.warnings.push_back(label + ": " + std::to_string(run.approximated_contexts) + " of " +
                           std::to_string(run.contexts) +
                           " contexts fit the PSG only in part (a chain of calls it does not "
                           "know); their " +
                           std::to_string(run.approximated_rows) + " rows (" + secs +
                           " s) are placed at the largest part that fits");
  }
  if (run.unmatched_p2p)
    run.warnings.push_back(label + ": " + std::to_string(run.unmatched_p2p) +
                           " point-to-point rows have no matching row on the peer rank");
  summary.meta.world_size = run.world_size;
  for (const std::string &w : SamplingWarnings(summary))
    run.warnings.push_back(label + ": " + w);
  return std::move(run);
}

} // namespace scalana
