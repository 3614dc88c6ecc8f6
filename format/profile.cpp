// Profile reader and writer: gzip-compressed JSON, schema in docs/formats.md
// section 3. Every failure becomes a scalana::Error naming the file and, for
// bad content, the field. Files are untrusted: only regular files are read,
// inflation is bounded, and every number is checked before anything uses it.
#include "scalana/profile.h"
#include "compress.h"
#include "profile_checks.h"
#include "profile_internal.h"
#include "scalana/container_format.h"
#include "scalana/regular_file.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <map>
#include <new>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace scalana {
namespace {

using json = nlohmann::json;
using detail::Gunzip;
using detail::Size;

constexpr const char *kFormatName = "scalana-profile";
constexpr int kFormatVersion = 2; // 2: contexts are frames, not instrumentation ids

// Format 2 lists every member.
json CommsJson(const std::vector<CommMembers> &comms) {
  json out = json::array();
  for (const CommMembers &m : comms)
    out.push_back(m.ToVector());
  return out;
}

json MetaToJson(const ProfileMeta &m) {
  json s = {{"source", m.sampling.source},
            {"hz", m.sampling.hz},
            {"clock", m.sampling.clock},
            {"counters", m.sampling.counters},
            {"counters_real", m.sampling.counters_real},
            {"note", m.sampling.note}};
  json modules = json::array();
  for (const ModuleInfo &mod : m.modules)
    modules.push_back({{"path", mod.path}, {"build_id", mod.build_id}, {"psg_id", mod.psg_id}});
  return {{"complete", m.complete}, {"world_size", m.world_size},   {"binary", m.binary},
          {"build_id", m.build_id}, {"psg_id", m.psg_id},           {"modules", std::move(modules)},
          {"args", m.args},         {"mpi_library", m.mpi_library}, {"start_time", m.start_time},
          {"run_id", m.run_id},     {"wall_time", m.wall_time},     {"sampling", s},
          {"config", m.config}};
}

json ToJson(const Profile &p) {
  json contexts = json::array();
  for (const Context &c : p.contexts) {
    json ids = json::array();
    for (uint64_t id : c)
      ids.push_back(FormatId(id));
    contexts.push_back(std::move(ids));
  }
  json ranks = json::array();
  for (const RankData &r : p.ranks) {
    json vertices = json::array(), mpi = json::array(), deps = json::array();
    for (const VertexRow &v : r.vertices)
      vertices.push_back({v.ctx, v.samples, v.cpu_seconds, v.counters});
    for (const MpiRow &m : r.mpi) {
      mpi.push_back({m.ctx, m.calls, m.seconds, m.bytes});
      if (!m.op.empty())
        mpi.back().push_back(m.op);
    }
    for (const DepRow &d : r.deps) {
      deps.push_back(
          {d.ctx, ToString(d.kind), d.peer, d.tag, d.comm, d.count, d.bytes, d.wait_seconds});
      if (!d.seqs.empty()) {
        json seqs = json::array();
        for (const SeqRange &q : d.seqs)
          seqs.push_back({q.first, q.last});
        deps.back().push_back(std::move(seqs));
      }
    }
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"pid", r.pid},
                     {"threads", r.threads},
                     {"wall_time", r.wall_time},
                     {"samples", r.samples},
                     {"samples_dropped", r.samples_dropped},
                     {"errors", r.errors},
                     {"vertices", std::move(vertices)},
                     {"mpi", std::move(mpi)},
                     {"deps", std::move(deps)}});
    // How the rank ended (optional): only in files of runs that did not
    // reach a complete profile.
    if (r.snapshot)
      ranks.back()["snapshot"] = true;
    if (r.end_signal)
      ranks.back()["end_signal"] = r.end_signal;
    if (r.cpu_time > 0)
      ranks.back()["cpu_time"] = r.cpu_time;
    if (r.sampling_blocked > 0)
      ranks.back()["sampling_blocked"] = r.sampling_blocked;
    // The thread dimension (optional): only where the rank had threads.
    if (!r.thread_info.empty()) {
      json info = json::array(), rows = json::array(), omp = json::array();
      for (const ThreadInfo &t : r.thread_info)
        info.push_back({t.index, t.omp_thread, t.samples, t.cpu_seconds});
      for (const ThreadRow &t : r.thread_vertices)
        rows.push_back({t.ctx, t.thread, t.samples, t.cpu_seconds});
      for (const OmpRow &o : r.omp)
        omp.push_back(
            {o.ctx, o.thread, o.kind, o.count, o.seconds, o.samples, o.cpu_seconds, o.iterations});
      ranks.back()["thread_info"] = std::move(info);
      ranks.back()["thread_vertices"] = std::move(rows);
      ranks.back()["omp"] = std::move(omp);
    }
  }
  return {{"format", kFormatName},       {"version", kFormatVersion},
          {"meta", MetaToJson(p.meta)},  {"contexts", std::move(contexts)},
          {"comms", CommsJson(p.comms)}, {"ranks", std::move(ranks)}};
}

DepKind ParseDepKind(const std::string &s) {
  for (DepKind k : {DepKind::Send, DepKind::Recv, DepKind::Coll, DepKind::Rma})
    if (s == ToString(k))
      return k;
  throw Error("unknown dependence kind '" + s + "'");
}

// Where a value sits in the document ("ranks[3].vertices[7][1] (samples)"),
// spelled out only when a message needs it.
struct Path {
  const Path *parent = nullptr;
  const char *key = nullptr; // member name, or nullptr for an array index
  size_t index = 0;
  const char *label = nullptr; // what an array element means
  std::string Str() const {
    if (!parent && !key)
      return ""; // the document
    std::string s = parent ? parent->Str() : "";
    if (key)
      s += (s.empty() ? "" : ".") + std::string(key);
    else
      s += "[" + std::to_string(index) + "]";
    return label ? s + " (" + label + ")" : s;
  }
};

Path Member(const Path &p, const char *key) { return {&p, key}; }
Path Element(const Path &p, size_t i, const char *label = nullptr) {
  return {&p, nullptr, i, label};
}

[[noreturn]] void Bad(const Path &p, const std::string &what) { throw Error(p.Str() + " " + what); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The member KEY of OBJ, or nullptr when absent or null (optional fields:
// hand-written files may omit them).
const json *Opt(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json &Req(const json &obj, const char *key, const Path &p) {
  const json *v = Opt(obj, key);
  if (!v)
    Bad(Member(p, key), "is missing");
  return *v;
}

const json &Obj(const json &v, const Path &p) {
  if (!v.is_object())
    Bad(p, std::string("is not an object (") + v.type_name() + ")");
  return v;
}

const json &Arr(const json &v, const Path &p) {
  if (!v.is_array())
    Bad(p, std::string("is not an array (") + v.type_name() + ")");
  return v;
}

std::string Str(const json &v, const Path &p) {
  if (!v.is_string())
    Bad(p, std::string("is not a string (") + v.type_name() + ")");
  return v.get<std::string>();
}

bool Bool(const json &v, const Path &p) {
  if (!v.is_boolean())
    Bad(p, std::string("is not true or false (") + v.type_name() + ")");
  return v.get<bool>();
}

// An integer in [LO, HI]. Floats are refused: converting 1e300 to an integer
// is undefined, and no writer puts a fraction in an integer field.
int64_t Int(const json &v, const Path &p, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi))
    Bad(p, std::to_string(v.get<uint64_t>()) + " is larger than " + std::to_string(hi));
  if (!v.is_number_integer())
    Bad(p, "is not an integer (" + (v.is_number() ? Num(v.get<double>()) : v.type_name()) + ")");
  int64_t x = v.get<int64_t>();
  if (x < lo)
    Bad(p, std::to_string(x) + (lo == 0 ? " is negative" : " is less than " + std::to_string(lo)));
  if (x > hi)
    Bad(p, std::to_string(x) + " is larger than " + std::to_string(hi));
  return x;
}

// A count: a non-negative 64-bit integer (a negative one would wrap).
uint64_t Count(const json &v, const Path &p) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>();
  return uint64_t(Int(v, p, 0, INT64_MAX));
}

// A finite number in [LO, HI].
double Real(const json &v, const Path &p, double lo, double hi) {
  if (!v.is_number())
    Bad(p, std::string("is not a number (") + v.type_name() + ")");
  double x = v.get<double>();
  if (!std::isfinite(x))
    Bad(p, "is not finite");
  if (x < lo)
    Bad(p, Num(x) + (lo == 0 ? " is negative" : " is less than " + Num(lo)));
  if (x > hi)
    Bad(p, Num(x) + " is larger than " + Num(hi));
  return x;
}

// Any time field: non-negative, finite and below a bound that keeps every
// sum of them finite, also in float.
double Seconds(const json &v, const Path &p) { return Real(v, p, 0, kMaxSeconds); }

std::vector<std::string> Strings(const json &v, const Path &p) {
  std::vector<std::string> out;
  for (size_t i = 0; i < Arr(v, p).size(); ++i)
    out.push_back(Str(v[i], Element(p, i)));
  return out;
}

// A row [a, b, c, ...] of exactly N elements.
const json &Row(const json &v, const Path &p, size_t n) {
  if (Arr(v, p).size() != n)
    Bad(p, "has " + std::to_string(v.size()) + " elements, expected " + std::to_string(n));
  return v;
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
      // kept, [index, OpenMP thread, samples, CPU seconds] since.
      const json &t = (*v)[k];
      if (Arr(t, row).size() != 2)
        Row(t, row, 4);
      ThreadInfo out;
      out.index = uint32_t(Int(t[0], Element(row, 0, "thread"), 0, INT32_MAX));
      out.omp_thread = int(Int(t[1], Element(row, 1, "OpenMP thread"), -1, INT32_MAX));
      if (t.size() == 4) {
        out.samples = Count(t[2], Element(row, 2, "samples"));
        out.cpu_seconds = Seconds(t[3], Element(row, 3, "CPU seconds"));
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
}

// Reads and checks the document. Rank ids, peers and communicator members
// must lie in [0, world_size); row indices must name existing contexts and
// communicators; counts are non-negative integers, times finite and
// non-negative: nothing later sizes an array or divides by a value that was
// not checked here.
Profile FromJson(const json &j) {
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() ||
      j["format"].get<std::string>() != kFormatName)
    throw Error("not a ScalAna profile (no \"format\": \"scalana-profile\")");
  const Path top{};
  const Path vp{nullptr, "version"};
  const json *ver = Opt(j, "version");
  int64_t version = ver ? Int(*ver, vp, INT32_MIN, INT32_MAX) : 0;
  if (version != kFormatVersion)
    throw Error("profile version " + std::to_string(version) + " is not supported (expected " +
                std::to_string(kFormatVersion) + "); re-run `scalana prof` with this version");
  Profile p;
  ReadMeta(Req(j, "meta", top), Path{nullptr, "meta"}, p.meta);
  const bool sized = p.meta.world_size > 0;
  const int64_t ranks_limit = sized ? p.meta.world_size : kMaxWorldSize;
  auto check_rank = [&](int64_t r, const Path &at) {
    if (r < ranks_limit)
      return;
    Bad(at, std::to_string(r) +
                (sized ? " is not below meta.world_size " + std::to_string(p.meta.world_size) +
                             ": rank ids run from 0 to world_size-1"
                       : " is larger than " + std::to_string(kMaxWorldSize - 1) +
                             ", the largest rank id a profile may hold"));
  };

  const Path xp{nullptr, "contexts"};
  const json &contexts = Arr(Req(j, "contexts", top), xp);
  p.contexts.reserve(contexts.size());
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
      if (ctx.back() != kFramesTruncated && FrameModule(ctx.back()) > p.meta.modules.size())
        Bad(fp, "names module " + std::to_string(FrameModule(ctx.back())) +
                    " but meta.modules lists " + std::to_string(p.meta.modules.size()));
    }
    p.contexts.push_back(std::move(ctx));
  }

  const Path cmp{nullptr, "comms"};
  const json &comms = Arr(Req(j, "comms", top), cmp);
  for (size_t i = 0; i < comms.size(); ++i) {
    Path cp = Element(cmp, i);
    const json &c = Arr(comms[i], cp);
    if (c.size() > size_t(ranks_limit))
      Bad(cp, "has " + std::to_string(c.size()) + " members, more than the " +
                  std::to_string(ranks_limit) + " ranks of the run");
    CommMembers members;
    for (size_t k = 0; k < c.size(); ++k) {
      Path at = Element(cp, k, "world rank");
      members.push_back(int(Int(c[k], at, 0, INT32_MAX)));
      check_rank(members.back(), at);
    }
    p.comms.push_back(std::move(members));
  }

  auto ctx_index = [&](const json &v, const Path &at) {
    int64_t c = Int(v, at, 0, INT64_MAX);
    if (uint64_t(c) >= p.contexts.size())
      throw Error(at.Str() + ": context index " + std::to_string(c) + " out of range (" +
                  std::to_string(p.contexts.size()) + " contexts)");
    return uint32_t(c);
  };
  const size_t ncounters = p.meta.sampling.counters.size();
  const Path rp{nullptr, "ranks"};
  const json &ranks = Arr(Req(j, "ranks", top), rp);
  std::map<int, size_t> seen; // rank id -> its index in "ranks"
  for (size_t i = 0; i < ranks.size(); ++i) {
    Path at = Element(rp, i);
    const json &r = Obj(ranks[i], at);
    RankData d;
    Path rankp = Member(at, "rank");
    d.rank = int(Int(Req(r, "rank", at), rankp, 0, INT32_MAX));
    check_rank(d.rank, rankp);
    if (auto [it, fresh] = seen.emplace(d.rank, i); !fresh)
      Bad(rankp, std::to_string(d.rank) + " appears twice (also in ranks[" +
                     std::to_string(it->second) + "])");
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

    Path vp = Member(at, "vertices");
    const json &vertices = Arr(Req(r, "vertices", at), vp);
    d.vertices.reserve(vertices.size());
    for (size_t k = 0; k < vertices.size(); ++k) {
      Path row = Element(vp, k);
      const json &v = Row(vertices[k], row, 4);
      VertexRow out;
      out.ctx = ctx_index(v[0], Element(row, 0, "context"));
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

    Path mpp = Member(at, "mpi");
    const json &mpi = Arr(Req(r, "mpi", at), mpp);
    d.mpi.reserve(mpi.size());
    for (size_t k = 0; k < mpi.size(); ++k) {
      Path row = Element(mpp, k);
      // 4 elements, or 5 with the operation.
      const json &v = Arr(mpi[k], row);
      if (v.size() != 5)
        Row(v, row, 4);
      MpiRow out;
      out.ctx = ctx_index(v[0], Element(row, 0, "context"));
      out.calls = Count(v[1], Element(row, 1, "calls"));
      out.seconds = Seconds(v[2], Element(row, 2, "seconds"));
      out.bytes = Count(v[3], Element(row, 3, "bytes"));
      if (v.size() == 5)
        out.op = Str(v[4], Element(row, 4, "operation"));
      d.mpi.push_back(out);
    }

    Path dp = Member(at, "deps");
    const json &deps = Arr(Req(r, "deps", at), dp);
    d.deps.reserve(deps.size());
    for (size_t k = 0; k < deps.size(); ++k) {
      Path row = Element(dp, k);
      // 8 elements, or 9 with the message sequence ranges.
      const json &v = Arr(deps[k], row);
      if (v.size() != 9)
        Row(v, row, 8);
      DepRow out;
      out.ctx = ctx_index(v[0], Element(row, 0, "context"));
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
      check_rank(out.peer, pp);
      out.tag = int32_t(Int(v[3], Element(row, 3, "tag"), INT32_MIN, INT32_MAX));
      Path cp = Element(row, 4, "communicator");
      int64_t comm = Int(v[4], cp, 0, INT64_MAX);
      if (uint64_t(comm) >= p.comms.size() && !(p.comms.empty() && comm == 0))
        throw Error(cp.Str() + ": communicator index " + std::to_string(comm) + " out of range (" +
                    std::to_string(p.comms.size()) + " communicators)");
      out.comm = uint32_t(comm);
      out.count = Count(v[5], Element(row, 5, "count"));
      out.bytes = Count(v[6], Element(row, 6, "bytes"));
      out.wait_seconds = Seconds(v[7], Element(row, 7, "wait seconds"));
      if (v.size() == 9) {
        Path sp = Element(row, 8, "message sequence ranges");
        const json &seqs = Arr(v[8], sp);
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
      d.deps.push_back(out);
    }
    ReadThreads(r, at, d, ctx_index);
    CheckRankNumbers(p.meta, d, at.Str());
    p.ranks.push_back(std::move(d));
  }
  std::sort(p.ranks.begin(), p.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
  return p;
}

// The bytes of the regular file PATH (never a FIFO or a device), bounded.
std::string ReadBytes(const std::string &path) {
  std::string error, bytes;
  uint64_t size = 0;
  int fd = OpenRegularFile(path, &size, &error);
  if (fd < 0)
    throw Error(path + ": cannot read: " + error);
  if (size > kMaxProfileBytes) {
    ::close(fd);
    throw Error(path + ": " + std::to_string(size) + " bytes, larger than any profile (at most " +
                Size(kMaxProfileBytes) + " compressed)");
  }
  bool ok = ReadAllBounded(fd, kMaxProfileBytes, &bytes, &error);
  ::close(fd);
  if (!ok)
    throw Error(path + ": cannot read: " + error);
  return bytes;
}

// R from the name of a per-rank file "rank-<R>.json.gz"; -1 for other names.
int RankOfFileName(const std::string &name) {
  static const std::string kPrefix = "rank-", kSuffix = ".json.gz";
  if (name.size() <= kPrefix.size() + kSuffix.size() ||
      name.compare(0, kPrefix.size(), kPrefix) != 0 ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return -1;
  std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  // The runtime writes rank-%d: no sign, no leading zero, so one name per rank.
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return -1;
  return std::stoi(digits);
}

// "rank 3 could not write: no space left on the device" (profile.cpp, below).
std::string DescribeUnwritten(const std::vector<int> &ranks, const std::string &why);

// R from the name of a marker "rank-<R>.unwritten.<REASON>" (the runtime
// could not write rank R's file), *WHY the reason; -1 for other names.
int RankOfMarkerName(const std::string &name, std::string *why) {
  static const std::string kInfix = ".unwritten.";
  size_t at = name.find(kInfix);
  if (at == std::string::npos || at + kInfix.size() >= name.size())
    return -1;
  int rank = RankOfFileName(name.substr(0, at) + ".json.gz");
  if (rank >= 0)
    *why = name.substr(at + kInfix.size());
  return rank;
}

// Per-rank files must come from one run: one build, one world, and each
// holds the rank its name says. Stale files of an earlier run fail here
// instead of being merged into this one.
void CheckRankFiles(const std::vector<Profile> &parts, const std::vector<std::string> &files,
                    const std::vector<int> &ranks) {
  for (size_t i = 0; i < parts.size(); ++i) {
    const Profile &p = parts[i];
    if (p.ranks.size() != 1 || p.ranks[0].rank != ranks[i])
      throw Error(files[i] + ": " +
                  (p.ranks.size() == 1
                       ? "holds rank " + std::to_string(p.ranks[0].rank) + ", not rank " +
                             std::to_string(ranks[i]) + " as its name says"
                       : "holds " + std::to_string(p.ranks.size()) +
                             " ranks; a rank file holds exactly one") +
                  ": it was renamed or copied from another run; remove it");
    const ProfileMeta &a = p.meta, &b = parts[0].meta;
    auto differ = [&](const char *field, const std::string &x, const std::string &y) {
      throw Error(files[i] + ": meta." + field + " " + x + " differs from " + y + " in " +
                  files[0] +
                  ": the run directory mixes rank files of different runs or builds (stale files "
                  "of an earlier run?); remove them, or re-run into an empty directory");
    };
    if (a.psg_id != b.psg_id)
      differ("psg_id", a.psg_id, b.psg_id);
    if (a.build_id != b.build_id)
      differ("build_id", a.build_id, b.build_id);
    if (a.binary != b.binary)
      differ("binary", a.binary, b.binary);
    if (a.world_size != b.world_size && a.world_size > 0 && b.world_size > 0)
      differ("world_size", std::to_string(a.world_size), std::to_string(b.world_size));
  }
}

} // namespace

namespace detail {

std::string ReadProfileBytes(const std::string &path) { return ReadBytes(path); }

std::string MetaSectionJson(const ProfileMeta &meta) {
  json m = MetaToJson(meta);
  m.erase("modules");
  return json{{"meta", std::move(m)}}.dump();
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

} // namespace detail

bool IsOmpWait(const std::string &kind) { return kind != "loop" && kind != "work"; }

const char *ToString(DepKind k) {
  switch (k) {
  case DepKind::Send:
    return "send";
  case DepKind::Recv:
    return "recv";
  case DepKind::Coll:
    return "coll";
  case DepKind::Rma:
    return "rma";
  }
  return "?";
}

std::string FormatId(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

uint64_t ParseId(const std::string &text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
    throw Error("'" + text + "' is not a vertex id (expected 0x followed by hex digits)");
  uint64_t v = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    char c = text[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      throw Error("'" + text + "' is not a vertex id (bad hex digit)");
    v = v << 4 | uint64_t(d);
  }
  return v;
}

Profile ReadProfileFile(const std::string &path) {
  return ProfileFromGzip(detail::ReadProfileBytes(path), path);
}

Profile ProfileFromGzip(const std::string &bytes, const std::string &origin) {
  return ProfileFromJson(Gunzip(bytes, origin), origin);
}

Profile ProfileFromJson(const std::string &text, const std::string &path) {
  json j;
  try {
    j = ParseJsonOnce(text);
  } catch (const Error &e) {
    throw Error(path + ": " + e.what());
  } catch (const json::exception &e) {
    throw Error(path + ": not valid JSON (" + e.what() + "); the file is corrupt: re-run");
  }
  try {
    return FromJson(j);
  } catch (const Error &e) {
    throw Error(path + ": " + e.what());
  } catch (const json::exception &e) {
    throw Error(path + ": malformed profile (" + std::string(e.what()) + ")");
  }
}

Profile ReadProfile(const std::string &run_dir) {
  struct stat st;
  if (stat(run_dir.c_str(), &st) != 0) {
    int err = errno;
    if (err == ELOOP)
      throw Error(run_dir + ": symbolic link loop (the run directory is a link that leads back "
                            "to itself); give the directory `scalana prof -o` wrote");
    if (err == ENOENT && lstat(run_dir.c_str(), &st) == 0)
      throw Error(run_dir + ": symbolic link to a missing run directory; give the directory "
                            "`scalana prof -o` wrote");
    if (err == ENOENT)
      throw Error(run_dir + ": no such run directory; run `scalana prof -o " + run_dir +
                  " -- ./app` first");
    throw Error(run_dir + ": cannot read the run directory: " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) // a profile file given directly
    return detail::IsV3Magic(run_dir) ? detail::ReadV3Whole(run_dir, "") : ReadProfileFile(run_dir);
  // lstat: a dangling link or a link loop named profile.scalana or
  // profile.json.gz is there, and reading it says what is wrong with it.
  // Format 3 first: a run writes it in place of format 2.
  std::string v3 = run_dir + "/" + container::kFileName;
  if (lstat(v3.c_str(), &st) == 0)
    return detail::ReadV3Whole(v3, run_dir);
  std::string whole = run_dir + "/profile.json.gz";
  if (lstat(whole.c_str(), &st) == 0)
    return ReadProfileFile(whole);
  detail::RankFiles found = detail::ListRankFiles(run_dir);
  if (found.files.empty() && !found.unwritten.empty()) {
    std::vector<int> ranks;
    for (const auto &[rank, why] : found.unwritten)
      ranks.push_back(rank);
    throw Error(run_dir + ": no profile.scalana, profile.json.gz or rank-*.json.gz: " +
                DescribeUnwritten(ranks, found.unwritten.begin()->second) +
                "; free space there, or choose another --output, and re-run");
  }
  if (found.files.empty())
    throw Error(run_dir + ": no profile.scalana, profile.json.gz or rank-*.json.gz; the program did not run "
                          "under `scalana prof`, or died before the profiler could write");
  return detail::MergeRankFiles(run_dir, std::move(found));
}

namespace detail {

RankFiles ListRankFiles(const std::string &run_dir) {
  RankFiles out;
  DIR *d = opendir(run_dir.c_str());
  if (!d)
    throw Error(run_dir + ": cannot list the run directory: " + std::strerror(errno));
  while (dirent *e = readdir(d)) {
    int rank = RankOfFileName(e->d_name);
    if (rank >= 0)
      out.files.emplace_back(rank, run_dir + "/" + e->d_name);
    std::string why;
    rank = RankOfMarkerName(e->d_name, &why);
    if (rank >= 0)
      out.unwritten[rank] = why;
  }
  closedir(d);
  std::sort(out.files.begin(), out.files.end());
  return out;
}

// The per-rank files left by a run that ended before MPI_Finalize, merged:
// each file's context and comm indices remapped.
Profile MergeRankFiles(const std::string &run_dir, RankFiles found) {
  std::vector<Profile> parts;
  std::vector<std::string> names;
  std::vector<int> ranks;
  for (const auto &[rank, f] : found.files) {
    parts.push_back(ReadProfileFile(f));
    names.push_back(f);
    ranks.push_back(rank);
  }
  std::map<int, std::string> unwritten = std::move(found.unwritten);
  std::vector<std::string> run_ids;
  for (const Profile &p : parts)
    run_ids.push_back(p.meta.run_id);
  CheckOneRun(run_dir, names, run_ids);
  CheckRankFiles(parts, names, ranks);
  int world_size = 0; // the files that know it agree on it
  for (const Profile &p : parts)
    world_size = std::max(world_size, p.meta.world_size);
  Profile merged = MergeProfiles(std::move(parts));
  for (RankData &r : merged.ranks)
    if (auto it = unwritten.find(r.rank); it != unwritten.end()) {
      r.unwritten = it->second;
      unwritten.erase(it);
    }
  merged.unwritten = std::move(unwritten);
  merged.meta.complete = false;
  merged.meta.world_size = world_size;
  return merged;
}

} // namespace detail

Profile MergeProfiles(std::vector<Profile> parts) {
  Profile merged;
  std::map<Context, uint32_t> ctx_index;
  std::map<CommMembers, uint32_t> comm_index;
  std::vector<ModuleInfo> merged_modules;
  bool first = true;
  for (Profile &part : parts) {
    if (first) {
      merged.meta = part.meta;
      first = false;
    }
    merged.meta.wall_time = std::max(merged.meta.wall_time, part.meta.wall_time);
    // The part's module K is the merged list's module_map[K].
    std::vector<uint32_t> module_map{0};
    for (const ModuleInfo &mod : part.meta.modules) {
      auto at = std::find(merged_modules.begin(), merged_modules.end(), mod);
      if (at == merged_modules.end()) {
        if (merged_modules.size() == kMaxModules)
          throw Error("merging profiles: more than " + std::to_string(kMaxModules) +
                      " modules in all");
        at = merged_modules.insert(merged_modules.end(), mod);
      }
      module_map.push_back(uint32_t(at - merged_modules.begin()) + 1);
    }
    std::vector<uint32_t> ctx_map, comm_map;
    for (Context c : part.contexts) {
      for (uint64_t &f : c) {
        uint32_t k = f == kFramesTruncated ? 0 : FrameModule(f);
        if (k >= module_map.size())
          throw Error("merging profiles: frame of module " + std::to_string(k) + " out of range");
        if (k)
          f = WithFrameModule(f, module_map[k]);
      }
      auto [it, fresh] = ctx_index.emplace(c, uint32_t(merged.contexts.size()));
      if (fresh)
        merged.contexts.push_back(c);
      ctx_map.push_back(it->second);
    }
    for (const auto &c : part.comms) {
      auto [it, fresh] = comm_index.emplace(c, uint32_t(merged.comms.size()));
      if (fresh)
        merged.comms.push_back(c);
      comm_map.push_back(it->second);
    }
    // Parts from ProfileFromJson have been checked; others must be as sound.
    auto ctx_of = [&](uint32_t ctx) {
      if (ctx >= ctx_map.size())
        throw Error("merging profiles: context index " + std::to_string(ctx) + " out of range");
      return ctx_map[ctx];
    };
    for (RankData &r : part.ranks) {
      for (auto &v : r.vertices)
        v.ctx = ctx_of(v.ctx);
      for (auto &m : r.mpi)
        m.ctx = ctx_of(m.ctx);
      for (auto &t : r.thread_vertices)
        t.ctx = ctx_of(t.ctx);
      for (auto &o : r.omp)
        o.ctx = ctx_of(o.ctx);
      for (auto &d : r.deps) {
        d.ctx = ctx_of(d.ctx);
        if (d.comm < comm_map.size())
          d.comm = comm_map[d.comm];
      }
      merged.ranks.push_back(std::move(r));
    }
  }
  std::sort(merged.ranks.begin(), merged.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
  merged.meta.modules = std::move(merged_modules);
  return merged;
}

std::string ProfileToJson(const Profile &p) { return ToJson(p).dump(); }

void WriteProfileFile(const Profile &p, const std::string &path) {
  std::string text = ProfileToJson(p);
  // Unique temporary name in the same directory so rename() is atomic and
  // concurrent writers (per-rank fallbacks) never share one.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  gzFile f = gzopen(tmp.c_str(), "wb6");
  if (!f)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  bool ok = gzwrite(f, text.data(), unsigned(text.size())) == int(text.size());
  ok = gzclose(f) == Z_OK && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write: " + why);
  }
}

// ---- how the ranks of an incomplete run ended (reports; see profile.h)

namespace {

std::string SignalName(int sig) {
  static const std::pair<int, const char *> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
      {SIGSEGV, "SIGSEGV"}, {SIGPIPE, "SIGPIPE"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}};
  for (const auto &[n, name] : kNames)
    if (n == sig)
      return name;
  return "signal " + std::to_string(sig);
}

// "rank 1", "ranks 0,2,3", "ranks 4-9,12,...": runs of three or more as
// ranges, at most 20 items.
std::string RankList(const std::vector<int> &ranks) {
  std::string s;
  size_t items = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (items++ == 20) {
      s += ",...";
      break;
    }
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    s += (s.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j >= i + 2) {
      s += "-" + std::to_string(ranks[j]);
      i = j;
    }
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

// What a marker's reason means.
std::string UnwrittenReason(const std::string &why) {
  return why == "ENOSPC" ? "could not write: no space left on the device"
                         : "could not write (" + why + ")";
}

std::string DescribeUnwritten(const std::vector<int> &ranks, const std::string &why) {
  return RankList(ranks) + " " + UnwrittenReason(why);
}

} // namespace

std::string DescribeRankEnd(const RankData &r) {
  auto has = [&](const char *what) {
    auto it = r.errors.find(what);
    return it != r.errors.end() && it->second > 0;
  };
  std::string sig = r.end_signal ? SignalName(r.end_signal) : "";
  char at[32];
  std::snprintf(at, sizeof at, "%.1f s", r.wall_time);
  // The rank's last write failed: what its file holds is older than its end.
  if (!r.unwritten.empty())
    return UnwrittenReason(r.unwritten) + (r.snapshot ? "; data up to its last periodic "
                                                        "snapshot, " +
                                                            std::string(at) + " after it started"
                                                      : std::string());
  // An end record made from the last snapshot (no time was left for more).
  std::string data = r.snapshot ? std::string("; data up to its last periodic snapshot, ") + at +
                                      " after it started"
                                : std::string();
  if (has("ended_by_MPI_Abort"))
    return "called MPI_Abort" + data;
  if (has("ended_by_signal_term"))
    return (sig.empty() ? std::string("SIGTERM or SIGINT") : sig) +
           ", a request to stop (the MPI launcher sends it to every rank when one fails)" + data;
  if (has("ended_by_signal_fatal"))
    return "fatal signal" + (sig.empty() ? std::string() : " " + sig) + data;
  if (has("ended_by_exit_without_finalize"))
    return "exit without MPI_Finalize" + data;
  if (has("ended_by_final_profile_failed"))
    return "reached MPI_Finalize, but rank 0 could not write profile.json.gz" + data;
  for (const auto &[what, n] : r.errors)
    if (n > 0 && what.rfind("ended_by_", 0) == 0)
      return what.substr(9) + data;
  if (r.snapshot)
    return std::string("no end recorded, data up to its last periodic snapshot ") + at +
           " after it started (killed, e.g. by SIGKILL, or still running)";
  return "";
}

std::vector<std::string> DescribeRankEnds(const Profile &p) {
  std::map<std::string, std::vector<int>> by_end;
  std::vector<char> present(size_t(std::max(p.meta.world_size, 0)), 0);
  bool not_gathered = false;
  for (const RankData &r : p.ranks) {
    if (r.rank >= 0 && size_t(r.rank) < present.size())
      present[size_t(r.rank)] = 1;
    if (auto it = r.errors.find("ranks_missing"); it != r.errors.end() && it->second)
      not_gathered = true;
    std::string end = DescribeRankEnd(r);
    if (!end.empty())
      by_end[end].push_back(r.rank);
  }
  std::vector<std::string> lines;
  for (auto &[end, ranks] : by_end) {
    std::sort(ranks.begin(), ranks.end());
    lines.push_back(RankList(ranks) + " ended before MPI_Finalize: " + end);
  }
  std::map<std::string, std::vector<int>> unwritten; // reason -> ranks without data
  for (const auto &[rank, why] : p.unwritten)
    if (rank >= 0 && size_t(rank) < present.size() && !present[size_t(rank)]) {
      unwritten[why].push_back(rank);
      present[size_t(rank)] = 1;
    }
  for (const auto &[why, ranks] : unwritten)
    lines.push_back(RankList(ranks) + " left no data: it " + UnwrittenReason(why));
  std::vector<int> missing;
  for (size_t r = 0; r < present.size(); ++r)
    if (!present[r])
      missing.push_back(int(r));
  if (!missing.empty())
    lines.push_back(RankList(missing) + " left no data: " +
                    (not_gathered ? std::string("its data could not be gathered at MPI_Finalize")
                                  : std::string("no file in the run directory (it ended before "
                                                "MPI_Init returned, or without snapshots "
                                                "(--snapshot 0) and without recording its end, "
                                                "or could not write there)")));
  return lines;
}

} // namespace scalana
