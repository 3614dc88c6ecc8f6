// Profile reader and writer: gzip-compressed JSON, schema in docs/formats.md
// section 3. Every failure becomes a scalana::Error naming the file.
#include "scalana/profile.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace scalana {
namespace {

using json = nlohmann::json;

constexpr const char *kFormatName = "scalana-profile";
constexpr int kFormatVersion = 2; // 2: contexts are frames, not instrumentation ids

json MetaToJson(const ProfileMeta &m) {
  json s = {{"source", m.sampling.source},
            {"hz", m.sampling.hz},
            {"clock", m.sampling.clock},
            {"counters", m.sampling.counters},
            {"counters_real", m.sampling.counters_real},
            {"note", m.sampling.note}};
  return {{"complete", m.complete},
          {"world_size", m.world_size},
          {"binary", m.binary},
          {"build_id", m.build_id},
          {"psg_id", m.psg_id},
          {"args", m.args},
          {"mpi_library", m.mpi_library},
          {"start_time", m.start_time},
          {"wall_time", m.wall_time},
          {"sampling", s},
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
    for (const MpiRow &m : r.mpi)
      mpi.push_back({m.ctx, m.calls, m.seconds, m.bytes});
    for (const DepRow &d : r.deps)
      deps.push_back(
          {d.ctx, ToString(d.kind), d.peer, d.tag, d.comm, d.count, d.bytes, d.wait_seconds});
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
  }
  return {{"format", kFormatName},      {"version", kFormatVersion},
          {"meta", MetaToJson(p.meta)}, {"contexts", std::move(contexts)},
          {"comms", p.comms},           {"ranks", std::move(ranks)}};
}

DepKind ParseDepKind(const std::string &s) {
  for (DepKind k : {DepKind::Send, DepKind::Recv, DepKind::Coll, DepKind::Rma})
    if (s == ToString(k))
      return k;
  throw Error("unknown dependence kind '" + s + "'");
}

// Optional field with a default: older or hand-written files may omit it.
template <typename T> T Get(const json &j, const char *key, T fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

Profile FromJson(const json &j) {
  if (!j.is_object() || Get<std::string>(j, "format", "") != kFormatName)
    throw Error("not a ScalAna profile (no \"format\": \"scalana-profile\")");
  int version = Get<int>(j, "version", 0);
  if (version != kFormatVersion)
    throw Error("profile version " + std::to_string(version) + " is not supported (expected " +
                std::to_string(kFormatVersion) + "); re-run `scalana prof` with this version");
  Profile p;
  const json &m = j.at("meta");
  p.meta.complete = Get<bool>(m, "complete", true);
  p.meta.world_size = Get<int>(m, "world_size", 0);
  p.meta.binary = Get<std::string>(m, "binary", "");
  p.meta.build_id = Get<std::string>(m, "build_id", "");
  p.meta.psg_id = Get<std::string>(m, "psg_id", "");
  p.meta.args = Get<std::vector<std::string>>(m, "args", {});
  p.meta.mpi_library = Get<std::string>(m, "mpi_library", "");
  p.meta.start_time = Get<std::string>(m, "start_time", "");
  p.meta.wall_time = Get<double>(m, "wall_time", 0);
  if (auto it = m.find("sampling"); it != m.end()) {
    const json &s = *it;
    p.meta.sampling.source = Get<std::string>(s, "source", "none");
    p.meta.sampling.hz = Get<double>(s, "hz", 0);
    p.meta.sampling.clock = Get<std::string>(s, "clock", "cpu");
    p.meta.sampling.counters = Get<std::vector<std::string>>(s, "counters", {});
    p.meta.sampling.counters_real = Get<bool>(s, "counters_real", false);
    p.meta.sampling.note = Get<std::string>(s, "note", "");
  }
  p.meta.config = Get<std::map<std::string, std::string>>(m, "config", {});
  for (const json &c : j.at("contexts")) {
    Context ctx;
    for (const json &id : c)
      ctx.push_back(ParseId(id.get<std::string>()));
    p.contexts.push_back(std::move(ctx));
  }
  p.comms = j.at("comms").get<std::vector<std::vector<int>>>();
  auto check_ctx = [&](uint32_t ctx) {
    if (ctx >= p.contexts.size())
      throw Error("context index " + std::to_string(ctx) + " out of range");
    return ctx;
  };
  for (const json &r : j.at("ranks")) {
    RankData d;
    d.rank = r.at("rank").get<int>();
    d.host = Get<std::string>(r, "host", "");
    d.pid = Get<int64_t>(r, "pid", 0);
    d.threads = Get<int>(r, "threads", 1);
    d.wall_time = Get<double>(r, "wall_time", 0);
    d.samples = Get<uint64_t>(r, "samples", 0);
    d.samples_dropped = Get<uint64_t>(r, "samples_dropped", 0);
    d.errors = Get<std::map<std::string, uint64_t>>(r, "errors", {});
    for (const json &v : r.at("vertices")) {
      VertexRow row;
      row.ctx = check_ctx(v.at(0).get<uint32_t>());
      row.samples = v.at(1).get<uint64_t>();
      row.cpu_seconds = v.at(2).get<double>();
      row.counters = v.at(3).get<std::vector<double>>();
      d.vertices.push_back(std::move(row));
    }
    for (const json &v : r.at("mpi")) {
      MpiRow row;
      row.ctx = check_ctx(v.at(0).get<uint32_t>());
      row.calls = v.at(1).get<uint64_t>();
      row.seconds = v.at(2).get<double>();
      row.bytes = v.at(3).get<uint64_t>();
      d.mpi.push_back(row);
    }
    for (const json &v : r.at("deps")) {
      DepRow row;
      row.ctx = check_ctx(v.at(0).get<uint32_t>());
      row.kind = ParseDepKind(v.at(1).get<std::string>());
      row.peer = v.at(2).get<int32_t>();
      row.tag = v.at(3).get<int32_t>();
      row.comm = v.at(4).get<uint32_t>();
      if (row.comm >= p.comms.size() && !(p.comms.empty() && row.comm == 0))
        throw Error("communicator index " + std::to_string(row.comm) + " out of range");
      row.count = v.at(5).get<uint64_t>();
      row.bytes = v.at(6).get<uint64_t>();
      row.wait_seconds = v.at(7).get<double>();
      d.deps.push_back(row);
    }
    p.ranks.push_back(std::move(d));
  }
  std::sort(p.ranks.begin(), p.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
  return p;
}

std::string ReadGzip(const std::string &path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    text.append(buf, n);
  int err = Z_OK;
  const char *msg = gzerror(f, &err);
  std::string what = err != Z_OK && err != Z_STREAM_END ? msg : "";
  gzclose(f);
  if (n < 0 || !what.empty())
    throw Error(path + ": corrupt or truncated gzip data (" + what +
                "); the run was probably interrupted while writing: re-run it");
  return text;
}

bool Exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

} // namespace

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

Profile ReadProfileFile(const std::string &path) { return ProfileFromJson(ReadGzip(path), path); }

Profile ProfileFromJson(const std::string &text, const std::string &path) {
  json j;
  try {
    j = json::parse(text);
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
  if (stat(run_dir.c_str(), &st) != 0)
    throw Error(run_dir + ": no such run directory; run `scalana prof -o " + run_dir +
                " -- ./app` first");
  if (!S_ISDIR(st.st_mode)) {
    return ReadProfileFile(run_dir); // a profile file given directly
  }
  std::string whole = run_dir + "/profile.json.gz";
  if (Exists(whole))
    return ReadProfileFile(whole);
  // No gathered profile: merge the per-rank files left by a run that ended
  // before MPI_Finalize, remapping each file's context and comm indices.
  std::vector<std::string> files;
  if (DIR *d = opendir(run_dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("rank-", 0) == 0 && n.size() > 8 && n.substr(n.size() - 8) == ".json.gz")
        files.push_back(run_dir + "/" + n);
    }
    closedir(d);
  }
  if (files.empty())
    throw Error(run_dir + ": no profile.json.gz and no rank-*.json.gz; the program did not run "
                          "under `scalana prof`, or died before the profiler could write");
  std::sort(files.begin(), files.end());
  std::vector<Profile> parts;
  for (const std::string &f : files)
    parts.push_back(ReadProfileFile(f));
  Profile merged = MergeProfiles(std::move(parts));
  merged.meta.complete = false;
  return merged;
}

Profile MergeProfiles(std::vector<Profile> parts) {
  Profile merged;
  std::map<Context, uint32_t> ctx_index;
  std::map<std::vector<int>, uint32_t> comm_index;
  bool first = true;
  for (Profile &part : parts) {
    if (first) {
      merged.meta = part.meta;
      first = false;
    }
    merged.meta.wall_time = std::max(merged.meta.wall_time, part.meta.wall_time);
    std::vector<uint32_t> ctx_map, comm_map;
    for (const Context &c : part.contexts) {
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
    for (RankData &r : part.ranks) {
      for (auto &v : r.vertices)
        v.ctx = ctx_map[v.ctx];
      for (auto &m : r.mpi)
        m.ctx = ctx_map[m.ctx];
      for (auto &d : r.deps) {
        d.ctx = ctx_map[d.ctx];
        if (d.comm < comm_map.size())
          d.comm = comm_map[d.comm];
      }
      merged.ranks.push_back(std::move(r));
    }
  }
  std::sort(merged.ranks.begin(), merged.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
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

} // namespace scalana
