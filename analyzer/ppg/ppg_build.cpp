#include "ppg/ppg_build_state.h"
#include "ppg/rank_time.h"
#include "scalana/sampling_checks.h"

namespace scalana {

RunBuilder::RunBuilder(Psg &psg, const std::string &label, const ProgressFn &progress)
    : st_(new State(psg, label, progress)) {}
RunBuilder::~RunBuilder() = default;
void RunBuilder::Add(const Profile &part) { st_->AddPart(part); }
Run RunBuilder::Finish() { return st_->Finish(); }
void RunBuilder::SendTo(ShardLink &link, int to) { st_->SendTo(link, to); }
void RunBuilder::ReceiveFrom(ShardLink &link, int from) { st_->ReceiveFrom(link, from); }

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
    min_rank = std::min(min_rank, rd.rank);
  }
  max_rank = std::max(max_rank, part_max);
  Reserve(declared > 0 ? size_t(declared) : size_t(part_max + 1));
  for (const auto &[rank, why] : part.unwritten)
    summary.unwritten.emplace(rank, why);
  summary.skipped.insert(summary.skipped.end(), part.skipped.begin(), part.skipped.end());

  // 1. The part's contexts -> contracted vertices; each distinct context of
  // the run is resolved once.
  std::vector<Resolved> ctx(part.contexts.size());
  for (size_t i = 0; i < part.contexts.size(); ++i)
    ctx[i] = ResolveContext(part.contexts[i]);
  auto at = [&](uint32_t c) { return c < ctx.size() ? ctx[c] : Resolved{}; };
  auto count_approximated = [&](const Resolved &r, double seconds) {
    if (r.approximated) {
      ++run.approximated_rows;
      run.approximated_seconds += seconds;
    }
  };
  // Whether a row of SECONDS at RES lands on a vertex; where it does not,
  // the seconds are counted where the report says what was not placed.
  auto on_vertex = [&](const Resolved &res, double seconds) {
    if (res.outside)
      run.outside_seconds += seconds;
    else if (res.unplaced)
      run.unplaced_seconds += seconds;
    else if (res.vertex == kNoVertex)
      ++run.unresolved_rows, run.unresolved_seconds += seconds;
    else {
      count_approximated(res, seconds);
      return true;
    }
    return false;
  };
  // 2. Communicators: numbered run-wide; duplicates within a part (MPI_Comm_dup)
  // stay distinct.
  std::vector<uint32_t> comm(part.comms.size());
  for (size_t i = 0; i < part.comms.size(); ++i) {
    int k = 0;
    for (size_t j = 0; j < i; ++j)
      k += part.comms[j] == part.comms[i];
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
    // This rank's seconds start from 0 (Sums).
    run.outside_seconds = run.unresolved_seconds = run.approximated_seconds = 0;
    run.unplaced_seconds = 0;
    const uint64_t unplaced_before = run.unplaced_samples;
    run.samples_taken += rd.samples;
    if (rd.samples_dropped) {
      run.samples_dropped += rd.samples_dropped;
      ++run.dropped_ranks;
      const double share = double(rd.samples_dropped) / double(std::max<uint64_t>(rd.samples, 1));
      if (share > run.most_dropped_share)
        run.most_dropped_share = share, run.most_dropped_rank = r;
    }
    run.omp_wait_cpu = rate_seconds = 0;
    if (Notable(rd)) {
      RankData head = rd;
      head.vertices.clear(), head.mpi.clear(), head.deps.clear();
      head.thread_vertices.clear(), head.omp.clear(), head.off_cpu.clear();
      summary.ranks.push_back(std::move(head));
    }
    // The rate obtained: samples over the CPU time they could have come in,
    // as `scalana show` counts it (sampling_checks.h).
    const RateTerms obtained = RankRateTerms(rd);
    obtained_samples += obtained.samples;
    sums.obtained += Fixed(obtained.seconds);
    double sampled = 0, sampled_in_mpi = 0;
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
      if (res.unplaced) {
        run.unplaced_seconds += secs;
        run.unplaced_samples += row.samples;
        continue;
      }
      if (res.vertex == kNoVertex) {
        ++run.unresolved_rows;
        run.unresolved_seconds += secs;
        continue;
      }
      count_approximated(res, secs);
      if (psg.vertex(res.vertex).kind == VertexKind::Mpi)
        sampled_in_mpi += secs;
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
      if (!on_vertex(res, row.seconds))
        continue;
      VertexSeries &s = SeriesOf(res.vertex);
      s.own_data = true;
      if (s.mpi.empty()) {
        s.mpi.assign(cap, 0.f);
        s.calls.assign(cap, 0);
      }
      s.mpi[r] += float(row.seconds);
      s.mpi_rows |= IsIoOperation(row.op) ? kMpiRowsIo : kMpiRowsCommunication;
      s.calls[r] += uint32_t(std::min<uint64_t>(row.calls, UINT32_MAX - s.calls[r]));
    }
    for (const OffCpuRow &row : rd.off_cpu) {
      const Resolved res = at(row.ctx);
      // Run delay is left out of the vertices: the scheduler's, never a line's.
      if (!on_vertex(res, row.blocked))
        continue;
      VertexSeries &s = SeriesOf(res.vertex);
      s.own_data = true;
      if (s.off_cpu.empty())
        s.off_cpu.assign(cap, 0.f);
      s.off_cpu[r] += float(row.blocked);
    }
    arrived_time.push_back({int32_t(r), MainThreadTime(rd, sampled, sampled_in_mpi)});
    if (!rd.thread_info.empty() && run.omp_threads.empty())
      run.omp_threads.assign(cap, 0);
    AddThreadTimes(
        psg, run, rd, r, [&](uint32_t c) { return at(c).vertex; },
        [&](VertexId v) -> VertexSeries & { return SeriesOf(v); });
    for (const DepRow &row : rd.deps) {
      ++run.dep_rows;
      const Resolved res = at(row.ctx);
      if (res.vertex == kNoVertex) {
        if (!res.outside && !res.unplaced)
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
          seq_overflow.emplace_back(row.seqs.begin(), row.seqs.end());
        }
      }
      seq_refs[si].push_back(ref);
    }
    // The rank's new edges in each vertex sorted by peer: edges then stay
    // sorted by (rank, peer) when parts come in rank order.
    for (const auto &[si, start] : touched)
      SortEdges(run.series[si].edges, seq_refs[si], start);
    touched.clear();
    sums.outside += Fixed(run.outside_seconds);
    sums.unplaced += Fixed(run.unplaced_seconds);
    run.unplaced_ranks += run.unplaced_samples > unplaced_before;
    sums.unresolved += Fixed(run.unresolved_seconds);
    sums.approximated += Fixed(run.approximated_seconds);
    sums.omp_wait += Fixed(run.omp_wait_cpu);
    sums.rate += Fixed(rate_seconds);
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

} // namespace scalana
