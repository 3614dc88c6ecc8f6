// The writer of the columnar block (docs/formats.md section 4.3). Why this
// shape: a group's ranks mostly repeat each other (the same contexts, the
// same halo peers relative to themselves, similar times), so writing each
// field as one column over all the group's ranks lines up the repeats for
// deflate, and the varints keep small numbers small before it runs.
#include "columns.h"
#include "compress.h"
#include "varint.h"

#include <map>

namespace scalana::detail {
namespace {

// Strings of the block (hosts, operations, OpenMP kinds, error names) by
// index: 0 is "", the others in order of first use.
struct Strings {
  std::map<std::string, uint64_t> index;
  ByteWriter table;
  uint64_t n = 0;
  uint64_t operator()(const std::string &s) {
    if (s.empty())
      return 0;
    auto [it, fresh] = index.emplace(s, n + 1);
    if (fresh) {
      ++n;
      table.Str(s);
    }
    return it->second;
  }
};

void PutContexts(ByteWriter &w, const std::vector<Context> &contexts) {
  w.Var(contexts.size());
  const Context *prev = nullptr;
  for (const Context &c : contexts) {
    // Contexts of one program share their outer frames: the prefix shared
    // with the previous context is a count, the rest deltas of frames.
    size_t shared = 0;
    if (prev)
      while (shared < c.size() && shared < prev->size() && c[shared] == (*prev)[shared])
        ++shared;
    w.Var(shared);
    w.Var(c.size() - shared);
    uint64_t last = shared ? c[shared - 1] : 0;
    for (size_t k = shared; k < c.size(); ++k) {
      w.Signed(int64_t(c[k] - last));
      last = c[k];
    }
    prev = &c;
  }
}

// Each communicator as its canonical arithmetic runs (CommMembers: a world
// communicator, or every other rank, is one run), every run's first member
// relative to the last member of the run before it.
void PutComms(ByteWriter &w, const std::vector<CommMembers> &comms) {
  w.Var(comms.size());
  for (const CommMembers &m : comms) {
    w.Var(m.runs().size());
    int64_t prev = 0;
    for (const CommMembers::Run &r : m.runs()) {
      w.Signed(int64_t(r.first) - prev);
      w.Var(r.count);
      w.Signed(r.stride);
      prev = int64_t(r.first) + int64_t(r.stride) * (r.count - 1);
    }
  }
}

// A counter delta: an integer below 2^63 as twice itself, anything else as
// 1 and its 8 bytes (exact either way).
void PutCounter(ByteWriter &w, double v) {
  if (v >= 0 && v < 0x1p63 && double(uint64_t(v)) == v) {
    w.Var(uint64_t(v) << 1);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    w.Var(1);
    w.Raw64(bits);
  }
}

// A peer relative to its rank (a halo's peers are then the same few small
// numbers on every rank): 0 is -1 (no particular rank), 1 another negative
// peer (its value follows), 2 + zigzag(peer - rank) a rank.
void PutPeer(ByteWriter &w, int rank, int32_t peer) {
  if (peer == -1) {
    w.Var(0);
  } else if (peer < 0) {
    w.Var(1);
    w.Var(uint64_t(-int64_t(peer) - 2));
  } else {
    w.Var(2 + Zig(int64_t(peer) - rank));
  }
}

} // namespace

std::string EncodeColumns(const Profile &g) {
  ByteWriter out;
  out.Var(kColumnsLayout);
  out.Var(g.ranks.size());
  ByteWriter modules;
  modules.Var(g.meta.modules.size());
  for (const ModuleInfo &m : g.meta.modules) {
    modules.Str(m.path);
    modules.Str(m.build_id);
    modules.Str(m.psg_id);
  }
  ByteWriter contexts, comms;
  PutContexts(contexts, g.contexts);
  PutComms(comms, g.comms);

  Strings strings;
  ByteWriter rc[kRankCols];
  ByteWriter err[2], vert[4], mpi[5], deps[9], info[4], tv[4], omp[8];
  ByteWriter timed[5]; // layout 2: ranks' on_cpu, run_delay, cores; threads' run_delay, wall
  ByteWriter off_rows, off[5]; // layout 3: the off-CPU rows' count per rank, then the rows
  int prev_rank = -1;
  int64_t prev_pid = 0;
  for (const RankData &r : g.ranks) {
    if (r.rank <= prev_rank)
      throw Error("encoding a group: ranks must be sorted and distinct (rank " +
                  std::to_string(r.rank) + " after " + std::to_string(prev_rank) + ")");
    rc[kRank].Var(uint64_t(r.rank - prev_rank - 1));
    prev_rank = r.rank;
    rc[kHost].Var(strings(r.host));
    rc[kPid].Signed(r.pid - prev_pid);
    prev_pid = r.pid;
    rc[kThreads].Var(uint64_t(uint32_t(r.threads)));
    rc[kWall].Var(Nanos(r.wall_time));
    rc[kSamples].Var(r.samples);
    rc[kDropped].Var(r.samples_dropped);
    rc[kCpu].Var(Nanos(r.cpu_time));
    rc[kBlocked].Var(Nanos(r.sampling_blocked));
    timed[0].Var(Nanos(r.on_cpu));
    timed[1].Var(Nanos(r.run_delay));
    timed[2].Var(uint64_t(uint32_t(r.cores)));
    rc[kEnd].Var(uint64_t(uint32_t(r.end_signal)) << 1 | (r.snapshot ? 1 : 0));
    rc[kNVert].Var(r.vertices.size());
    rc[kNMpi].Var(r.mpi.size());
    rc[kNDeps].Var(r.deps.size());
    rc[kNInfo].Var(r.thread_info.size());
    rc[kNTv].Var(r.thread_vertices.size());
    rc[kNOmp].Var(r.omp.size());
    rc[kNErr].Var(r.errors.size());
    for (const auto &[name, n] : r.errors) {
      err[0].Var(strings(name));
      err[1].Var(n);
    }
    for (const VertexRow &v : r.vertices) {
      vert[0].Var(v.ctx);
      vert[1].Var(v.samples);
      vert[2].Var(Nanos(v.cpu_seconds));
      vert[3].Var(v.counters.size());
      for (double c : v.counters)
        PutCounter(vert[3], c);
    }
    for (const MpiRow &m : r.mpi) {
      mpi[0].Var(m.ctx);
      mpi[1].Var(m.calls);
      mpi[2].Var(Nanos(m.seconds));
      mpi[3].Var(m.bytes);
      mpi[4].Var(strings(m.op));
    }
    for (const DepRow &d : r.deps) {
      deps[0].Var(d.ctx);
      deps[1].Var(uint64_t(d.kind));
      PutPeer(deps[2], r.rank, d.peer);
      deps[3].Signed(d.tag);
      deps[4].Var(d.comm);
      deps[5].Var(d.count);
      deps[6].Var(d.bytes);
      deps[7].Var(Nanos(d.wait_seconds));
      deps[8].Var(d.seqs.size());
      uint64_t last = 0;
      for (const SeqRange &q : d.seqs) {
        deps[8].Signed(int64_t(q.first - last));
        deps[8].Var(q.last - q.first);
        last = q.last;
      }
    }
    for (const ThreadInfo &t : r.thread_info) {
      info[0].Var(t.index);
      info[1].Signed(t.omp_thread);
      info[2].Var(t.samples);
      info[3].Var(Nanos(t.cpu_seconds));
      timed[3].Var(Nanos(t.run_delay));
      timed[4].Var(Nanos(t.wall_seconds));
    }
    for (const ThreadRow &t : r.thread_vertices) {
      tv[0].Var(t.ctx);
      tv[1].Var(t.thread);
      tv[2].Var(t.samples);
      tv[3].Var(Nanos(t.cpu_seconds));
    }
    off_rows.Var(r.off_cpu.size());
    for (const OffCpuRow &o : r.off_cpu) {
      off[0].Var(o.ctx);
      off[1].Var(o.thread);
      off[2].Var(o.switches);
      off[3].Var(Nanos(o.blocked));
      off[4].Var(Nanos(o.run_delay));
    }
    for (const OmpRow &o : r.omp) {
      omp[0].Var(o.ctx);
      omp[1].Var(o.thread);
      omp[2].Var(strings(o.kind));
      omp[3].Var(o.count);
      omp[4].Var(Nanos(o.seconds));
      omp[5].Var(o.samples);
      omp[6].Var(Nanos(o.cpu_seconds));
      omp[7].Var(o.iterations);
    }
  }
  ByteWriter string_table;
  string_table.Var(strings.n);
  string_table.out += strings.table.out;
  for (const ByteWriter *c : {&modules, &string_table, &contexts, &comms})
    out.Column(*c);
  for (const ByteWriter &c : rc)
    out.Column(c);
  for (const auto &[table, n] :
       {std::pair{err, 2}, std::pair{vert, 4}, std::pair{mpi, 5}, std::pair{deps, 9},
        std::pair{info, 4}, std::pair{tv, 4}, std::pair{omp, 8}})
    for (int k = 0; k < n; ++k)
      out.Column(table[k]);
  for (const ByteWriter &c : timed)
    out.Column(c);
  out.Column(off_rows);
  for (const ByteWriter &c : off)
    out.Column(c);
  return Deflate(out.out);
}

} // namespace scalana::detail
