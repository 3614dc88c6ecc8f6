// The end of a run's build: messages matched, arrays compacted (ppg_build.h).
#include "detect/ppg_build_state.h"

#include <atomic>
#include <thread>
#include <tuple>

namespace scalana {

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
  run.outside_seconds = Seconds(sums.outside);
  run.unresolved_seconds = Seconds(sums.unresolved);
  run.approximated_seconds = Seconds(sums.approximated);
  run.omp_wait_cpu = Seconds(sums.omp_wait);
  rate_seconds = Seconds(sums.rate);
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
  // One edge's match reads only the peer's rows and writes only its own
  // peer_vertex: the edges are cut into ranges matched by threads (the
  // cores idle while the run is finished; 10^8 edges at a million ranks).
  auto match = [&](size_t i, size_t k0, size_t k1) -> uint64_t {
    VertexSeries &s = run.series[i];
    uint64_t unmatched = 0;
    for (size_t k = k0; k < k1; ++k) {
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
        ++unmatched;
    }
    return unmatched;
  };
  std::vector<std::tuple<size_t, size_t, size_t>> ranges; // (series, first edge, end)
  size_t total = 0;
  for (size_t i : p2p)
    total += run.series[i].edges.size();
  const size_t threads =
      total < (size_t(1) << 20) ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  const size_t piece = std::max<size_t>(total / (threads * 16), 1);
  for (size_t i : p2p)
    for (size_t k = 0; k < run.series[i].edges.size(); k += piece)
      ranges.emplace_back(i, k, std::min(run.series[i].edges.size(), k + piece));
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> unmatched{0};
  auto worker = [&] {
    uint64_t n = 0;
    for (size_t r; (r = next++) < ranges.size();)
      n += match(std::get<0>(ranges[r]), std::get<1>(ranges[r]), std::get<2>(ranges[r]));
    unmatched += n;
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  run.unmatched_p2p += unmatched;
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
    all.skipped = summary.skipped;
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
