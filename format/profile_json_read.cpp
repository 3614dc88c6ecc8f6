// Format 2's document read and checked (docs/formats.md section 3): rank
// ids, peers and communicator members must lie in [0, world_size); row
// indices must name existing contexts and communicators; counts are
// non-negative integers, times finite and non-negative: nothing later sizes
// an array or divides by a value that was not checked here.
#include "json_fields.h"
#include "profile_checks.h"
#include "profile_internal.h"
#include "profile_json.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

namespace scalana::detail {
namespace {

DepKind ParseDepKind(const std::string &s) {
  for (DepKind k : {DepKind::Send, DepKind::Recv, DepKind::Coll, DepKind::Rma})
    if (s == ToString(k))
      return k;
  throw Error("unknown dependence kind '" + s + "'");
}

// The thread dimension of rank R (optional; docs/formats.md section 3,
// "Threads"): rows name threads of thread_info and contexts of the file.
template <typename CtxIndex>
void ReadThreads(const json &r, const Path &at, RankData &d, const CtxIndex &ctx_index) {
  std::map<uint32_t, bool> known;
  if (const json *v = Opt(r, "thread_info")) {
    Path ip = Member(at, "thread_info");
    for (size_t k = 0; k < Arr(*v, ip).size(); ++k) {
      Path row = Element(ip, k);
      // [index, OpenMP thread] before a thread's samples and CPU time were
      // kept, [index, OpenMP thread, samples, CPU seconds] until its run
      // delay and lifetime were, [..., run delay, wall seconds] since.
      const json &t = (*v)[k];
      size_t n = Arr(t, row).size();
      if (n != 2 && n != 4 && n != 6)
        Bad(row, "has " + std::to_string(n) + " elements, expected 2, 4 or 6");
      ThreadInfo out;
      out.index = uint32_t(Int(t[0], Element(row, 0, "thread"), 0, INT32_MAX));
      out.omp_thread = int(Int(t[1], Element(row, 1, "OpenMP thread"), -1, INT32_MAX));
      if (n >= 4) {
        out.samples = Count(t[2], Element(row, 2, "samples"));
        out.cpu_seconds = Seconds(t[3], Element(row, 3, "CPU seconds"));
      }
      if (n == 6) {
        out.run_delay = Seconds(t[4], Element(row, 4, "run delay"));
        out.wall_seconds = Seconds(t[5], Element(row, 5, "wall seconds"));
      }
      if (!known.emplace(out.index, true).second)
        Bad(row, "names thread " + std::to_string(out.index) + " twice");
      d.thread_info.push_back(out);
    }
  }
  auto thread = [&](const json &v, const Path &p) {
    uint32_t t = uint32_t(Int(v, p, 0, INT32_MAX));
    if (!known.count(t))
      Bad(p, "names thread " + std::to_string(t) + ", which thread_info does not list");
    return t;
  };
  if (const json *v = Opt(r, "thread_vertices")) {
    Path vp = Member(at, "thread_vertices");
    for (size_t k = 0; k < Arr(*v, vp).size(); ++k) {
      Path row = Element(vp, k);
      const json &t = Row((*v)[k], row, 4);
      d.thread_vertices.push_back(ThreadRow{
          ctx_index(t[0], Element(row, 0, "context")), thread(t[1], Element(row, 1, "thread")),
          Count(t[2], Element(row, 2, "samples")), Seconds(t[3], Element(row, 3, "cpu seconds"))});
    }
  }
  if (const json *v = Opt(r, "off_cpu")) {
    Path op = Member(at, "off_cpu");
    for (size_t k = 0; k < Arr(*v, op).size(); ++k) {
      Path row = Element(op, k);
      const json &t = Row((*v)[k], row, 5);
      OffCpuRow out;
      out.ctx = ctx_index(t[0], Element(row, 0, "context"));
      // A rank of one thread lists no threads: its rows are thread 0's.
      out.thread = d.thread_info.empty() ? uint32_t(Int(t[1], Element(row, 1, "thread"), 0, 0))
                                         : thread(t[1], Element(row, 1, "thread"));
      out.switches = Count(t[2], Element(row, 2, "switches"));
      out.blocked = Seconds(t[3], Element(row, 3, "blocked"));
      out.run_delay = Seconds(t[4], Element(row, 4, "run delay"));
      d.off_cpu.push_back(out);
    }
  }
  if (const json *v = Opt(r, "omp")) {
    Path op = Member(at, "omp");
    for (size_t k = 0; k < Arr(*v, op).size(); ++k) {
      Path row = Element(op, k);
      const json &t = Row((*v)[k], row, 8);
      OmpRow out;
      out.ctx = ctx_index(t[0], Element(row, 0, "context"));
      out.thread = thread(t[1], Element(row, 1, "thread"));
      out.kind = Str(t[2], Element(row, 2, "kind"));
      out.count = Count(t[3], Element(row, 3, "count"));
      out.seconds = Seconds(t[4], Element(row, 4, "seconds"));
      out.samples = Count(t[5], Element(row, 5, "samples"));
      out.cpu_seconds = Seconds(t[6], Element(row, 6, "cpu seconds"));
      out.iterations = Count(t[7], Element(row, 7, "iterations"));
      d.omp.push_back(std::move(out));
    }
  }
}

void ReadSampling(const json &s, const Path &sp, SamplingInfo &out) {
  Obj(s, sp);
  for (auto [key, field] : {std::pair{"source", &out.source}, std::pair{"clock", &out.clock},
                            std::pair{"note", &out.note}})
    if (const json *v = Opt(s, key))
      *field = Str(*v, Member(sp, key));
  if (const json *v = Opt(s, "hz")) {
    Path p = Member(sp, "hz");
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0 ||
        (v->get<double>() != 0 && v->get<double>() < kMinSamplingHz) ||
        v->get<double>() > kMaxSamplingHz)
      // Times are samples / hz: a rate near 0 makes them infinite.
      Bad(p, (v->is_number() ? Num(v->get<double>()) : std::string(v->type_name())) +
                 " is not a sampling rate (0 for none, or " + Num(kMinSamplingHz) + " to " +
                 Num(kMaxSamplingHz) + " Hz)");
    out.hz = v->get<double>();
  }
  if (const json *v = Opt(s, "counters")) {
    Path p = Member(sp, "counters");
    if (Arr(*v, p).size() > kMaxCounters)
      Bad(p, "lists " + std::to_string(v->size()) + " counters, more than " +
                 std::to_string(kMaxCounters));
    out.counters = Strings(*v, p);
  }
  if (const json *v = Opt(s, "counters_real"))
    out.counters_real = Bool(*v, Member(sp, "counters_real"));
}

void ReadMeta(const json &m, const Path &mp, ProfileMeta &meta) {
  Obj(m, mp);
  if (const json *v = Opt(m, "complete"))
    meta.complete = Bool(*v, Member(mp, "complete"));
  // 0 or absent: unknown (a rank that failed before MPI_Init, a hand-written
  // file); the ranks present then define the run.
  if (const json *v = Opt(m, "world_size")) {
    Path p = Member(mp, "world_size");
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(kMaxWorldSize))
      Bad(p, std::to_string(v->get<uint64_t>()) + " is larger than " +
                 std::to_string(kMaxWorldSize) + ", the most ranks a profile may hold");
    meta.world_size = int(Int(*v, p, 0, kMaxWorldSize));
  }
  for (auto [key, field] :
       {std::pair{"binary", &meta.binary}, std::pair{"build_id", &meta.build_id},
        std::pair{"psg_id", &meta.psg_id}, std::pair{"mpi_library", &meta.mpi_library},
        std::pair{"start_time", &meta.start_time}, std::pair{"run_id", &meta.run_id}})
    if (const json *v = Opt(m, key))
      *field = Str(*v, Member(mp, key));
  if (const json *v = Opt(m, "args"))
    meta.args = Strings(*v, Member(mp, "args"));
  if (const json *v = Opt(m, "modules")) {
    Path sp = Member(mp, "modules");
    if (Arr(*v, sp).size() > kMaxModules)
      Bad(sp, "lists " + std::to_string(v->size()) + " modules, more than " +
                  std::to_string(kMaxModules));
    for (size_t i = 0; i < v->size(); ++i) {
      Path ep = Element(sp, i);
      const json &e = Obj((*v)[i], ep);
      ModuleInfo mod;
      mod.path = Str(Req(e, "path", ep), Member(ep, "path"));
      if (mod.path.empty())
        Bad(Member(ep, "path"), "is empty");
      if (const json *b = Opt(e, "build_id"))
        mod.build_id = Str(*b, Member(ep, "build_id"));
      if (const json *b = Opt(e, "psg_id"))
        mod.psg_id = Str(*b, Member(ep, "psg_id"));
      meta.modules.push_back(std::move(mod));
    }
  }
  if (const json *v = Opt(m, "wall_time"))
    meta.wall_time = Seconds(*v, Member(mp, "wall_time"));
  if (const json *v = Opt(m, "sampling"))
    ReadSampling(*v, Member(mp, "sampling"), meta.sampling);
  if (const json *cv = Opt(m, "config")) {
    Path cp = Member(mp, "config");
    for (const auto &[k, v] : Obj(*cv, cp).items())
      meta.config[k] = Str(v, Path{&cp, k.c_str()});
  }
  CheckMetaNumbers(meta);
}

// One document's reader: the checks that need what was read before (the
// world size for rank ids, the contexts and communicators for row indices)
// and one function a part of the document.
class DocumentReader {
public:
  explicit DocumentReader(const json &j) : j_(j) {}

  Profile Read() {
    const Path top{};
    ReadMeta(Req(j_, "meta", top), Path{nullptr, "meta"}, p_.meta);
    sized_ = p_.meta.world_size > 0;
    ranks_limit_ = sized_ ? p_.meta.world_size : kMaxWorldSize;
    ReadContexts(Arr(Req(j_, "contexts", top), Path{nullptr, "contexts"}));
    ReadComms(Arr(Req(j_, "comms", top), Path{nullptr, "comms"}));
    const Path rp{nullptr, "ranks"};
    const json &ranks = Arr(Req(j_, "ranks", top), rp);
    std::map<int, size_t> seen; // rank id -> its index in "ranks"
    for (size_t i = 0; i < ranks.size(); ++i)
      ReadRank(ranks[i], Element(rp, i), i, seen);
    std::sort(p_.ranks.begin(), p_.ranks.end(),
              [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
    return std::move(p_);
  }

private:
  void CheckRank(int64_t r, const Path &at) const {
    if (r < ranks_limit_)
      return;
    Bad(at, std::to_string(r) +
                (sized_ ? " is not below meta.world_size " + std::to_string(p_.meta.world_size) +
                              ": rank ids run from 0 to world_size-1"
                        : " is larger than " + std::to_string(kMaxWorldSize - 1) +
                              ", the largest rank id a profile may hold"));
  }

  uint32_t CtxIndex(const json &v, const Path &at) const {
    int64_t c = Int(v, at, 0, INT64_MAX);
    if (uint64_t(c) >= p_.contexts.size())
      throw Error(at.Str() + ": context index " + std::to_string(c) + " out of range (" +
                  std::to_string(p_.contexts.size()) + " contexts)");
    return uint32_t(c);
  }

  void ReadContexts(const json &contexts) {
    const Path xp{nullptr, "contexts"};
    p_.contexts.reserve(contexts.size());
    for (size_t i = 0; i < contexts.size(); ++i) {
      Path cp = Element(xp, i);
      const json &c = Arr(contexts[i], cp);
      if (c.size() > kMaxContextFrames)
        Bad(cp, "has " + std::to_string(c.size()) + " frames, more than " +
                    std::to_string(kMaxContextFrames));
      Context ctx;
      ctx.reserve(c.size());
      for (size_t k = 0; k < c.size(); ++k) {
        Path fp = Element(cp, k);
        std::string frame = Str(c[k], fp);
        try {
          ctx.push_back(ParseId(frame));
        } catch (const Error &e) {
          throw Error(fp.Str() + ": " + e.what());
        }
        if (ctx.back() != kFramesTruncated && FrameModule(ctx.back()) > p_.meta.modules.size())
          Bad(fp, "names module " + std::to_string(FrameModule(ctx.back())) +
                      " but meta.modules lists " + std::to_string(p_.meta.modules.size()));
      }
      p_.contexts.push_back(std::move(ctx));
    }
  }

  void ReadComms(const json &comms) {
    const Path cmp{nullptr, "comms"};
    for (size_t i = 0; i < comms.size(); ++i) {
      Path cp = Element(cmp, i);
      const json &c = Arr(comms[i], cp);
      if (c.size() > size_t(ranks_limit_))
        Bad(cp, "has " + std::to_string(c.size()) + " members, more than the " +
                    std::to_string(ranks_limit_) + " ranks of the run");
      CommMembers members;
      for (size_t k = 0; k < c.size(); ++k) {
        Path at = Element(cp, k, "world rank");
        members.push_back(int(Int(c[k], at, 0, INT32_MAX)));
        CheckRank(members.back(), at);
      }
      p_.comms.push_back(std::move(members));
    }
  }

  void ReadRank(const json &rank, const Path &at, size_t index, std::map<int, size_t> &seen) {
    const json &r = Obj(rank, at);
    RankData d;
    Path rankp = Member(at, "rank");
    d.rank = int(Int(Req(r, "rank", at), rankp, 0, INT32_MAX));
    CheckRank(d.rank, rankp);
    if (auto [it, fresh] = seen.emplace(d.rank, index); !fresh)
      Bad(rankp, std::to_string(d.rank) + " appears twice (also in ranks[" +
                     std::to_string(it->second) + "])");
    ReadRankFields(r, at, d);
    ReadVertexRows(Arr(Req(r, "vertices", at), Member(at, "vertices")), Member(at, "vertices"), d);
    ReadMpiRows(Arr(Req(r, "mpi", at), Member(at, "mpi")), Member(at, "mpi"), d);
    ReadDepRows(Arr(Req(r, "deps", at), Member(at, "deps")), Member(at, "deps"), d);
    ReadThreads(r, at, d, [this](const json &v, const Path &p) { return CtxIndex(v, p); });
    CheckRankNumbers(p_.meta, d, at.Str());
    p_.ranks.push_back(std::move(d));
  }

  // The rank's scalars, each optional.
  static void ReadRankFields(const json &r, const Path &at, RankData &d) {
    if (const json *v = Opt(r, "host"))
      d.host = Str(*v, Member(at, "host"));
    if (const json *v = Opt(r, "pid"))
      d.pid = Int(*v, Member(at, "pid"), 0, INT64_MAX);
    if (const json *v = Opt(r, "threads"))
      d.threads = int(Int(*v, Member(at, "threads"), 0, INT32_MAX));
    if (const json *v = Opt(r, "wall_time"))
      d.wall_time = Seconds(*v, Member(at, "wall_time"));
    if (const json *v = Opt(r, "samples"))
      d.samples = Count(*v, Member(at, "samples"));
    if (const json *v = Opt(r, "samples_dropped"))
      d.samples_dropped = Count(*v, Member(at, "samples_dropped"));
    if (const json *ev = Opt(r, "errors")) {
      Path ep = Member(at, "errors");
      for (const auto &[k, v] : Obj(*ev, ep).items())
        d.errors[k] = Count(v, Path{&ep, k.c_str()});
    }
    if (const json *v = Opt(r, "snapshot"))
      d.snapshot = Bool(*v, Member(at, "snapshot"));
    if (const json *v = Opt(r, "end_signal"))
      d.end_signal = int(Int(*v, Member(at, "end_signal"), 0, 255));
    if (const json *v = Opt(r, "cpu_time"))
      d.cpu_time = Seconds(*v, Member(at, "cpu_time"));
    if (const json *v = Opt(r, "sampling_blocked"))
      d.sampling_blocked = Seconds(*v, Member(at, "sampling_blocked"));
    if (const json *v = Opt(r, "on_cpu"))
      d.on_cpu = Seconds(*v, Member(at, "on_cpu"));
    if (const json *v = Opt(r, "run_delay"))
      d.run_delay = Seconds(*v, Member(at, "run_delay"));
    if (const json *v = Opt(r, "cores"))
      d.cores = int(Int(*v, Member(at, "cores"), 0, 1 << 20));
  }

  void ReadVertexRows(const json &vertices, const Path &vp, RankData &d) const {
    const size_t ncounters = p_.meta.sampling.counters.size();
    d.vertices.reserve(vertices.size());
    for (size_t k = 0; k < vertices.size(); ++k) {
      Path row = Element(vp, k);
      const json &v = Row(vertices[k], row, 4);
      VertexRow out;
      out.ctx = CtxIndex(v[0], Element(row, 0, "context"));
      out.samples = Count(v[1], Element(row, 1, "samples"));
      out.cpu_seconds = Seconds(v[2], Element(row, 2, "cpu seconds"));
      Path cp = Element(row, 3, "counters");
      if (Arr(v[3], cp).size() > ncounters)
        Bad(cp, "has " + std::to_string(v[3].size()) + " values for the " +
                    std::to_string(ncounters) + " counters of meta.sampling.counters");
      for (size_t c = 0; c < v[3].size(); ++c) // deltas of 64-bit counters
        out.counters.push_back(Real(v[3][c], Element(cp, c), 0, 0x1p64));
      d.vertices.push_back(std::move(out));
    }
  }

  void ReadMpiRows(const json &mpi, const Path &mpp, RankData &d) const {
    d.mpi.reserve(mpi.size());
    for (size_t k = 0; k < mpi.size(); ++k) {
      Path row = Element(mpp, k);
      // 4 elements, or 5 with the operation.
      const json &v = Arr(mpi[k], row);
      if (v.size() != 5)
        Row(v, row, 4);
      MpiRow out;
      out.ctx = CtxIndex(v[0], Element(row, 0, "context"));
      out.calls = Count(v[1], Element(row, 1, "calls"));
      out.seconds = Seconds(v[2], Element(row, 2, "seconds"));
      out.bytes = Count(v[3], Element(row, 3, "bytes"));
      if (v.size() == 5)
        out.op = Str(v[4], Element(row, 4, "operation"));
      d.mpi.push_back(out);
    }
  }

  void ReadDepRows(const json &deps, const Path &dp, RankData &d) const {
    d.deps.reserve(deps.size());
    for (size_t k = 0; k < deps.size(); ++k) {
      Path row = Element(dp, k);
      // 8 elements, or 9 with the message sequence ranges.
      const json &v = Arr(deps[k], row);
      if (v.size() != 9)
        Row(v, row, 8);
      DepRow out;
      out.ctx = CtxIndex(v[0], Element(row, 0, "context"));
      Path kp = Element(row, 1, "kind");
      std::string kind = Str(v[1], kp);
      try {
        out.kind = ParseDepKind(kind);
      } catch (const Error &e) {
        throw Error(kp.Str() + ": " + e.what());
      }
      // Negative peers are no particular rank (collectives, an unknown source).
      Path pp = Element(row, 2, "peer");
      out.peer = int32_t(Int(v[2], pp, INT32_MIN, INT32_MAX));
      CheckRank(out.peer, pp);
      out.tag = int32_t(Int(v[3], Element(row, 3, "tag"), INT32_MIN, INT32_MAX));
      Path cp = Element(row, 4, "communicator");
      int64_t comm = Int(v[4], cp, 0, INT64_MAX);
      if (uint64_t(comm) >= p_.comms.size() && !(p_.comms.empty() && comm == 0))
        throw Error(cp.Str() + ": communicator index " + std::to_string(comm) + " out of range (" +
                    std::to_string(p_.comms.size()) + " communicators)");
      out.comm = uint32_t(comm);
      out.count = Count(v[5], Element(row, 5, "count"));
      out.bytes = Count(v[6], Element(row, 6, "bytes"));
      out.wait_seconds = Seconds(v[7], Element(row, 7, "wait seconds"));
      if (v.size() == 9)
        ReadSeqRanges(v[8], Element(row, 8, "message sequence ranges"), out);
      d.deps.push_back(out);
    }
  }

  static void ReadSeqRanges(const json &v, const Path &sp, DepRow &out) {
    const json &seqs = Arr(v, sp);
    if (seqs.size() > kMaxSeqRanges)
      Bad(sp, "has " + std::to_string(seqs.size()) + " ranges, at most " +
                  std::to_string(kMaxSeqRanges) + " are written");
    for (size_t q = 0; q < seqs.size(); ++q) {
      Path qp = Element(sp, q);
      const json &pair = Row(seqs[q], qp, 2);
      SeqRange range{Count(pair[0], Element(qp, 0, "first")),
                     Count(pair[1], Element(qp, 1, "last"))};
      if (range.first == 0 || range.last < range.first)
        Bad(qp, "is not a range of message numbers (first >= 1, last >= first)");
      out.seqs.push_back(range);
    }
  }

  const json &j_;
  Profile p_;
  bool sized_ = false;
  int64_t ranks_limit_ = kMaxWorldSize;
};

} // namespace

Profile ProfileFromJsonValue(const json &j) {
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() ||
      j["format"].get<std::string>() != kProfileFormatName)
    throw Error("not a ScalAna profile (no \"format\": \"scalana-profile\")");
  const Path vp{nullptr, "version"};
  const json *ver = Opt(j, "version");
  int64_t version = ver ? Int(*ver, vp, INT32_MIN, INT32_MAX) : 0;
  if (version != kProfileFormatVersion)
    throw Error("profile version " + std::to_string(version) + " is not supported (expected " +
                std::to_string(kProfileFormatVersion) +
                "); re-run `scalana prof` with this version");
  return DocumentReader(j).Read();
}

ProfileMeta MetaFromSectionJson(const std::string &text, const std::string &origin) {
  json j;
  try {
    j = ParseJsonOnce(text);
  } catch (const Error &e) {
    throw Error(origin + ": " + e.what());
  } catch (const json::exception &e) {
    throw Error(origin + ": not valid JSON (" + e.what() + "); the file is damaged: re-run");
  }
  ProfileMeta meta;
  try {
    if (!j.is_object() || j.size() != 1 || !j.contains("meta"))
      throw Error("not a meta section (expected {\"meta\": {...}} and nothing else)");
    const Path mp{nullptr, "meta"};
    if (Obj(j["meta"], mp).contains("modules"))
      Bad(Member(mp, "modules"), "is in the meta section; modules belong to the group blocks");
    ReadMeta(j["meta"], mp, meta);
  } catch (const Error &e) {
    throw Error(origin + ": " + e.what());
  } catch (const json::exception &e) {
    throw Error(origin + ": malformed meta section (" + std::string(e.what()) + ")");
  }
  return meta;
}

} // namespace scalana::detail
