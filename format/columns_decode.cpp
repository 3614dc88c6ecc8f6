// The reader of the columnar block (docs/formats.md section 4.3) with the
// checks of format 2 (docs/formats.md section 3, "Readers"): every index
// names an existing entry, ranks and peers lie below the world size, times
// are at most 10^9 s, and the rank's numbers agree with each other. Rows are
// read as they come: a count is never trusted to size anything.
#include "columns.h"
#include "compress.h"
#include "profile_checks.h"
#include "varint.h"

#include <set>

namespace scalana::detail {
namespace {

// Where a value is ("rank 5: deps[3]"), spelled out only for a message:
// building the text for every row would cost more than decoding it.
struct Where {
  const std::string *rank;
  const char *table = nullptr;
  uint64_t row = 0;
  std::string Str() const {
    return table ? *rank + ": " + table + "[" + std::to_string(row) + "]" : *rank;
  }
};

struct Block {
  ByteReader in;
  const ProfileMeta &meta;
  Profile p;
  std::vector<std::string> strings{""};
  int64_t ranks_limit = kMaxWorldSize;
  uint64_t layout = kColumnsLayout;

  double Seconds(ByteReader &c, const Where &at, const char *what) {
    uint64_t ns = c.Var();
    if (ns > kMaxNanos)
      Bad(at, what, std::to_string(ns) + " ns is more than 10^9 s");
    return double(ns) / 1e9;
  }
  [[noreturn]] void Bad(const Where &at, const char *what, const std::string &why) {
    throw Error(in.Where() + ": " + at.Str() + " (" + what + "): " + why);
  }
  const std::string &String(ByteReader &c, const Where &at, const char *what) {
    uint64_t k = c.Var();
    if (k >= strings.size())
      Bad(at, what,
          "string index " + std::to_string(k) + " out of range (" +
              std::to_string(strings.size() - 1) + " strings)");
    return strings[size_t(k)];
  }
  uint32_t Ctx(ByteReader &c, const Where &at) {
    uint64_t k = c.Var();
    if (k >= p.contexts.size())
      Bad(at, "context",
          "context index " + std::to_string(k) + " out of range (" +
              std::to_string(p.contexts.size()) + " contexts)");
    return uint32_t(k);
  }
  void CheckRank(int64_t r, const Where &at, const char *what) {
    if (r >= ranks_limit)
      Bad(at, what,
          std::to_string(r) +
              (meta.world_size > 0
                   ? " is not below meta.world_size " + std::to_string(meta.world_size)
                   : " is larger than the largest rank id a profile may hold"));
  }

  void Modules(ByteReader c) {
    uint64_t n = c.Var(kMaxModules, "the module count");
    for (uint64_t k = 0; k < n; ++k) {
      ModuleInfo m;
      m.path = c.Str("a module's path");
      if (m.path.empty())
        c.Fail("modules[" + std::to_string(k) + "].path is empty");
      m.build_id = c.Str("a module's build id");
      m.psg_id = c.Str("a module's PSG id");
      p.meta.modules.push_back(std::move(m));
    }
    c.ExpectEnd();
  }
  void Strings(ByteReader c) {
    uint64_t n = c.Var();
    for (uint64_t k = 0; k < n; ++k)
      strings.push_back(c.Str("a string"));
    c.ExpectEnd();
  }
  void Contexts(ByteReader c) {
    uint64_t n = c.Var();
    for (uint64_t i = 0; i < n; ++i) {
      std::string at = "contexts[" + std::to_string(i) + "]";
      uint64_t shared = c.Var(), rest = c.Var();
      if (shared > (i ? p.contexts.back().size() : 0))
        c.Fail(at + " shares " + std::to_string(shared) + " frames with a context of " +
               std::to_string(i ? p.contexts.back().size() : 0));
      if (rest > kMaxContextFrames - shared)
        c.Fail(at + " has more than " + std::to_string(kMaxContextFrames) + " frames");
      Context ctx(p.contexts.empty() ? Context{} : p.contexts.back());
      ctx.resize(size_t(shared));
      uint64_t last = shared ? ctx.back() : 0;
      for (uint64_t k = 0; k < rest; ++k) {
        last += uint64_t(c.Signed());
        if (last != kFramesTruncated && FrameModule(last) > p.meta.modules.size())
          c.Fail(at + "[" + std::to_string(shared + k) + "] names module " +
                 std::to_string(FrameModule(last)) + " but the block lists " +
                 std::to_string(p.meta.modules.size()));
        ctx.push_back(last);
      }
      p.contexts.push_back(std::move(ctx));
    }
    c.ExpectEnd();
  }
  void Comms(ByteReader c) {
    uint64_t n = c.Var(), total = 0;
    for (uint64_t i = 0; i < n; ++i) {
      std::string at = "comms[" + std::to_string(i) + "]";
      uint64_t runs = c.Var();
      CommMembers members;
      int64_t prev = 0;
      for (uint64_t k = 0; k < runs; ++k) {
        // Hostile values must not overflow: every step is checked.
        int64_t delta = c.Signed(), first = 0;
        uint64_t count = c.Var();
        int64_t stride = c.Signed();
        auto outside = [&](const std::string &what) {
          c.Fail(at + ": " + what + " is not a rank of the run (0 to " +
                 std::to_string(ranks_limit - 1) + ")");
        };
        if (__builtin_add_overflow(prev, delta, &first) || first < 0 || first >= ranks_limit)
          outside("a run's first member");
        if (count == 0 || count > uint64_t(ranks_limit) - members.size())
          c.Fail(at + ": a run of " + std::to_string(count) + " members (at least 1, at most " +
                 "the " + std::to_string(ranks_limit) + " ranks of the run in all)");
        total += count;
        if (total > kMaxBlockCommMembers)
          c.Fail("the communicators have more than " + std::to_string(kMaxBlockCommMembers) +
                 " members in all");
        int64_t span = 0, last = 0;
        if (__builtin_mul_overflow(stride, int64_t(count - 1), &span) ||
            __builtin_add_overflow(first, span, &last) || last < 0 || last >= ranks_limit)
          outside("a run's last member");
        // FIRST and LAST are ranks, so a run of two or more has a stride of
        // at most their difference; a lone member's stride means nothing.
        members.AppendRun(int(first), count > 1 ? int(stride) : 0, uint32_t(count));
        prev = last;
      }
      p.comms.push_back(std::move(members));
    }
    c.ExpectEnd();
  }

  void Ranks(uint64_t nranks);
};

const char *const kRankColNames[kRankCols] = {"ranks.rank",
                                              "ranks.host",
                                              "ranks.pid",
                                              "ranks.threads",
                                              "ranks.wall_time",
                                              "ranks.samples",
                                              "ranks.samples_dropped",
                                              "ranks.cpu_time",
                                              "ranks.sampling_blocked",
                                              "ranks.end",
                                              "ranks.vertices",
                                              "ranks.mpi",
                                              "ranks.deps",
                                              "ranks.thread_info",
                                              "ranks.thread_vertices",
                                              "ranks.omp",
                                              "ranks.errors"};

void Block::Ranks(uint64_t nranks) {
  ByteReader rc[kRankCols];
  for (int k = 0; k < kRankCols; ++k)
    rc[k] = in.Column(kRankColNames[k]);
  auto cols = [&](const char *table, std::initializer_list<const char *> names) {
    std::vector<ByteReader> out;
    for (const char *n : names)
      out.push_back(in.Column(std::string(table) + "." + n));
    return out;
  };
  auto err = cols("errors", {"name", "count"});
  auto vert = cols("vertices", {"ctx", "samples", "cpu_seconds", "counters"});
  auto mpi = cols("mpi", {"ctx", "calls", "seconds", "bytes", "op"});
  auto deps = cols(
      "deps", {"ctx", "kind", "peer", "tag", "comm", "count", "bytes", "wait_seconds", "seqs"});
  auto info = cols("thread_info", {"thread", "omp_thread", "samples", "cpu_seconds"});
  auto tv = cols("thread_vertices", {"ctx", "thread", "samples", "cpu_seconds"});
  auto omp = cols(
      "omp", {"ctx", "thread", "kind", "count", "seconds", "samples", "cpu_seconds", "iterations"});
  // Layout 1 has no time-accounting columns: those figures stay 0 (not measured).
  std::vector<ByteReader> timed;
  if (layout >= 2)
    for (const char *n : {"ranks.on_cpu", "ranks.run_delay", "ranks.cores", "thread_info.run_delay",
                          "thread_info.wall_seconds"})
      timed.push_back(in.Column(n));
  // Layout 3's off-CPU rows; before, none (the source did not exist).
  std::vector<ByteReader> off;
  if (layout >= 3)
    for (const char *n : {"ranks.off_cpu", "off_cpu.ctx", "off_cpu.thread", "off_cpu.switches",
                          "off_cpu.blocked", "off_cpu.run_delay"})
      off.push_back(in.Column(n));
  in.ExpectEnd();
  const size_t ncounters = meta.sampling.counters.size();
  const size_t max_counters = meta.world_size > 0 || ncounters ? ncounters : kMaxCounters;
  int64_t prev_rank = -1, prev_pid = 0;
  for (uint64_t i = 0; i < nranks; ++i) {
    RankData d;
    int64_t rank = prev_rank + 1 + int64_t(rc[kRank].Var(INT32_MAX, "a rank step"));
    const std::string at = "rank " + std::to_string(rank);
    const Where here{&at};
    if (rank > INT32_MAX)
      Bad(here, "rank", "is larger than " + std::to_string(INT32_MAX));
    CheckRank(rank, here, "rank");
    d.rank = int(rank);
    prev_rank = rank;
    d.host = String(rc[kHost], here, "host");
    int64_t pid = 0;
    if (__builtin_add_overflow(prev_pid, rc[kPid].Signed(), &pid) || pid < 0)
      Bad(here, "pid", "is negative or past 64 bits");
    d.pid = prev_pid = pid;
    d.threads = int(rc[kThreads].Var(INT32_MAX, "threads"));
    d.wall_time = Seconds(rc[kWall], here, "wall_time");
    d.samples = rc[kSamples].Var();
    d.samples_dropped = rc[kDropped].Var();
    d.cpu_time = Seconds(rc[kCpu], here, "cpu_time");
    d.sampling_blocked = Seconds(rc[kBlocked], here, "sampling_blocked");
    if (!timed.empty()) {
      d.on_cpu = Seconds(timed[0], here, "on_cpu");
      d.run_delay = Seconds(timed[1], here, "run_delay");
      d.cores = int(timed[2].Var(1 << 20, "cores"));
    }
    uint64_t end = rc[kEnd].Var(511, "the end flags");
    d.snapshot = end & 1;
    d.end_signal = int(end >> 1);
    uint64_t n[7];
    for (int k = 0; k < 7; ++k)
      n[k] = rc[kNVert + k].Var();
    for (uint64_t k = 0; k < n[6]; ++k) {
      const std::string &name = String(err[0], here, "errors");
      if (!d.errors.emplace(name, err[1].Var()).second)
        Bad(here, "errors", "names \"" + name + "\" twice");
    }
    for (uint64_t k = 0; k < n[0]; ++k) {
      const Where row{&at, "vertices", k};
      VertexRow v;
      v.ctx = Ctx(vert[0], row);
      v.samples = vert[1].Var();
      v.cpu_seconds = Seconds(vert[2], row, "cpu seconds");
      uint64_t nc = vert[3].Var();
      if (nc > max_counters)
        Bad(row, "counters",
            "has " + std::to_string(nc) + " values for the " + std::to_string(ncounters) +
                " counters of meta.sampling.counters");
      for (uint64_t c = 0; c < nc; ++c) {
        uint64_t x = vert[3].Var();
        double value;
        if (x == 1) {
          uint64_t bits = vert[3].Raw64();
          std::memcpy(&value, &bits, 8);
          if (!std::isfinite(value) || value < 0 || value > 0x1p64)
            Bad(row, "counters", "a value is not a counter delta (0 to 2^64)");
        } else if (x & 1) {
          Bad(row, "counters", "a value has an unknown encoding");
        } else {
          value = double(x >> 1);
        }
        v.counters.push_back(value);
      }
      d.vertices.push_back(std::move(v));
    }
    for (uint64_t k = 0; k < n[1]; ++k) {
      const Where row{&at, "mpi", k};
      MpiRow m;
      m.ctx = Ctx(mpi[0], row);
      m.calls = mpi[1].Var();
      m.seconds = Seconds(mpi[2], row, "seconds");
      m.bytes = mpi[3].Var();
      m.op = String(mpi[4], row, "operation");
      d.mpi.push_back(std::move(m));
    }
    for (uint64_t k = 0; k < n[2]; ++k) {
      const Where row{&at, "deps", k};
      DepRow x;
      x.ctx = Ctx(deps[0], row);
      uint64_t kind = deps[1].Var();
      if (kind > uint64_t(DepKind::Rma))
        Bad(row, "kind", "unknown dependence kind " + std::to_string(kind));
      x.kind = DepKind(kind);
      uint64_t code = deps[2].Var();
      int64_t peer = -1;
      bool wraps = false;
      if (code == 1)
        peer = -int64_t(deps[2].Var(uint64_t(INT32_MAX) - 1, "peer")) - 2;
      else if (code >= 2)
        wraps = __builtin_add_overflow(rank, Unzig(code - 2), &peer);
      if (wraps || peer > INT32_MAX || peer < INT32_MIN)
        Bad(row, "peer", "is not a 32-bit rank");
      CheckRank(peer, row, "peer");
      x.peer = int32_t(peer);
      int64_t tag = deps[3].Signed();
      if (tag > INT32_MAX || tag < INT32_MIN)
        Bad(row, "tag", std::to_string(tag) + " is not a 32-bit tag");
      x.tag = int32_t(tag);
      uint64_t comm = deps[4].Var();
      if (comm >= p.comms.size() && !(p.comms.empty() && comm == 0))
        Bad(row, "communicator",
            "communicator index " + std::to_string(comm) + " out of range (" +
                std::to_string(p.comms.size()) + " communicators)");
      x.comm = uint32_t(comm);
      x.count = deps[5].Var();
      x.bytes = deps[6].Var();
      x.wait_seconds = Seconds(deps[7], row, "wait seconds");
      uint64_t nq = deps[8].Var();
      if (nq > kMaxSeqRanges)
        Bad(row, "message sequence ranges",
            "has " + std::to_string(nq) + " ranges, at most " + std::to_string(kMaxSeqRanges) +
                " are written");
      uint64_t last = 0;
      for (uint64_t q = 0; q < nq; ++q) {
        SeqRange r;
        r.first = last + uint64_t(deps[8].Signed());
        uint64_t len = deps[8].Var();
        r.last = r.first + len;
        if (r.first == 0 || r.last < r.first)
          Bad(row, "message sequence ranges",
              "not a range of message numbers (first >= 1, last >= first)");
        x.seqs.push_back(r);
        last = r.last;
      }
      d.deps.push_back(std::move(x));
    }
    std::set<uint32_t> known;
    for (uint64_t k = 0; k < n[3]; ++k) {
      const Where row{&at, "thread_info", k};
      ThreadInfo t;
      t.index = uint32_t(info[0].Var(INT32_MAX, "thread"));
      int64_t omp_thread = info[1].Signed();
      if (omp_thread < -1 || omp_thread > INT32_MAX)
        Bad(row, "OpenMP thread", std::to_string(omp_thread) + " is not -1 or a thread number");
      t.omp_thread = int(omp_thread);
      t.samples = info[2].Var();
      t.cpu_seconds = Seconds(info[3], row, "CPU seconds");
      if (!timed.empty()) {
        t.run_delay = Seconds(timed[3], row, "run delay");
        t.wall_seconds = Seconds(timed[4], row, "wall seconds");
      }
      if (!known.insert(t.index).second)
        Bad(row, "thread", "names thread " + std::to_string(t.index) + " twice");
      d.thread_info.push_back(t);
    }
    auto thread = [&](ByteReader &c, const Where &row) {
      uint64_t t = c.Var();
      if (t > INT32_MAX || !known.count(uint32_t(t)))
        Bad(row, "thread",
            "names thread " + std::to_string(t) + ", which thread_info does not list");
      return uint32_t(t);
    };
    for (uint64_t k = 0; k < n[4]; ++k) {
      const Where row{&at, "thread_vertices", k};
      ThreadRow t;
      t.ctx = Ctx(tv[0], row);
      t.thread = thread(tv[1], row);
      t.samples = tv[2].Var();
      t.cpu_seconds = Seconds(tv[3], row, "cpu seconds");
      d.thread_vertices.push_back(t);
    }
    for (uint64_t k = 0; k < n[5]; ++k) {
      const Where row{&at, "omp", k};
      OmpRow o;
      o.ctx = Ctx(omp[0], row);
      o.thread = thread(omp[1], row);
      o.kind = String(omp[2], row, "kind");
      o.count = omp[3].Var();
      o.seconds = Seconds(omp[4], row, "seconds");
      o.samples = omp[5].Var();
      o.cpu_seconds = Seconds(omp[6], row, "cpu seconds");
      o.iterations = omp[7].Var();
      d.omp.push_back(std::move(o));
    }
    const uint64_t noff = off.empty() ? 0 : off[0].Var();
    for (uint64_t k = 0; k < noff; ++k) {
      const Where row{&at, "off_cpu", k};
      OffCpuRow o;
      o.ctx = Ctx(off[1], row);
      // A rank of one thread lists no threads: its rows are thread 0's.
      o.thread = d.thread_info.empty() ? uint32_t(off[2].Var(0, "thread")) : thread(off[2], row);
      o.switches = off[3].Var();
      o.blocked = Seconds(off[4], row, "blocked");
      o.run_delay = Seconds(off[5], row, "run delay");
      d.off_cpu.push_back(o);
    }
    try {
      CheckRankNumbers(meta, d, at);
    } catch (const Error &e) {
      throw Error(in.Where() + ": " + e.what());
    }
    p.ranks.push_back(std::move(d));
  }
  for (auto *cs : {&err, &vert, &mpi, &deps, &info, &tv, &omp, &timed, &off})
    for (const ByteReader &c : *cs)
      c.ExpectEnd();
  for (const ByteReader &c : rc)
    c.ExpectEnd();
}

} // namespace

Profile DecodeColumns(const std::string &bytes, const std::string &origin,
                      const ProfileMeta &meta) {
  std::string data = Inflate(bytes, origin);
  Block b{ByteReader(data.data(), data.size(), origin), meta, {}};
  b.p.meta = meta;
  b.p.meta.modules.clear();
  if (meta.world_size > 0)
    b.ranks_limit = meta.world_size;
  uint64_t layout = b.in.Var();
  if (layout < 1 || layout > kColumnsLayout)
    b.in.Fail("columnar layout " + std::to_string(layout) + " is not supported (expected 1 to " +
              std::to_string(kColumnsLayout) + ")");
  b.layout = layout;
  uint64_t nranks = b.in.Var();
  if (nranks > uint64_t(b.ranks_limit))
    b.in.Fail(std::to_string(nranks) + " ranks, more than the " + std::to_string(b.ranks_limit) +
              " of the run");
  b.Modules(b.in.Column("modules"));
  b.Strings(b.in.Column("strings"));
  b.Contexts(b.in.Column("contexts"));
  b.Comms(b.in.Column("comms"));
  b.Ranks(nranks);
  return std::move(b.p);
}

} // namespace scalana::detail
