// Profile reader and writer: gzip-compressed JSON, schema in docs/formats.md
// section 3. Every failure becomes a scalana::Error naming the file and, for
// bad content, the field. Files are untrusted: only regular files are read,
// inflation is bounded, and every number is checked before anything uses it.
#include "scalana/profile.h"
#include "compress.h"
#include "profile_checks.h"
#include "profile_internal.h"
#include "profile_json.h"
#include "scalana/container_format.h"
#include "scalana/regular_file.h"
#include "snapshot_read.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace scalana {
namespace {

using json = nlohmann::json;
using detail::Gunzip;
using detail::Size;

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
  return detail::NumberInName(name, "rank-", ".json.gz");
}

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

// The ranks of the snapshot containers CONTAINERS that no rank file in
// NAMES/RANKS holds, appended to PARTS: for each, its best record that reads
// as a one-rank profile of that rank and of the container's run. What is
// skipped, and why, goes to *SKIPPED: a container of another run than the
// one .scalana-job names (stale: an earlier run's nodes), a header that does
// not fit its file, a torn or corrupt record.
void AddContainerRanks(const std::string &run_dir, const std::vector<std::string> &containers,
                       std::vector<Profile> *parts, std::vector<std::string> *names,
                       std::vector<int> *ranks, std::vector<std::string> *skipped) {
  if (containers.empty())
    return;
  std::set<int> held(ranks->begin(), ranks->end());
  std::string job_run = RunIdOfJobFile(run_dir);
  for (const std::string &path : containers) {
    detail::ContainerContents c;
    try {
      c = detail::ReadSnapshotContainer(path);
    } catch (const Error &e) {
      skipped->push_back(e.what());
      continue;
    }
    if (!job_run.empty() && c.header.run_id != job_run) {
      skipped->push_back(path + ": of run " + c.header.run_id + ", not run " + job_run + " that " +
                         kJobFileName + " names (left by an earlier run); skipped");
      continue;
    }
    skipped->insert(skipped->end(), c.skipped.begin(), c.skipped.end());
    for (detail::ContainerRank &cr : c.ranks) {
      if (held.count(cr.rank))
        continue; // its rank file: an end record, or a snapshot too large for a slot
      for (detail::SnapshotRecord &rec : cr.records) {
        std::string origin =
            path + " (rank " + std::to_string(cr.rank) + ", slot " + std::to_string(rec.slot) + ")";
        try {
          Profile p = ProfileFromGzip(rec.payload, origin);
          if (p.ranks.size() != 1 || p.ranks[0].rank != cr.rank)
            throw Error(origin + ": does not hold exactly rank " + std::to_string(cr.rank));
          if (p.meta.run_id != c.header.run_id)
            throw Error(origin + ": of run " + p.meta.run_id + ", not the container's run " +
                        c.header.run_id);
          parts->push_back(std::move(p));
          names->push_back(origin);
          ranks->push_back(cr.rank);
          held.insert(cr.rank);
          break;
        } catch (const Error &e) {
          skipped->push_back(std::string(e.what()) + "; skipped");
        }
      }
    }
  }
}

} // namespace

namespace detail {

std::string ReadProfileBytes(const std::string &path) { return ReadBytes(path); }

} // namespace detail

bool IsOmpWait(const std::string &kind) { return kind != "loop" && kind != "work"; }

bool IsOmpSerialWait(const std::string &kind) {
  return kind == "critical" || kind == "lock" || kind == "nest_lock" || kind == "ordered";
}

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
    return detail::ProfileFromJsonValue(j);
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
  if (found.files.empty() && found.containers.empty() && !found.unwritten.empty()) {
    std::vector<int> ranks;
    for (const auto &[rank, why] : found.unwritten)
      ranks.push_back(rank);
    throw Error(run_dir + ": no profile.scalana, profile.json.gz or rank-*.json.gz: " +
                detail::DescribeUnwritten(ranks, found.unwritten.begin()->second) +
                "; free space there, or choose another --output, and re-run");
  }
  if (found.files.empty() && found.containers.empty())
    throw Error(run_dir +
                ": no profile.scalana, profile.json.gz, rank-*.json.gz or snapshots-*.scs; the "
                "program did not run under `scalana prof`, or died before the profiler could "
                "write");
  return detail::MergeRankFiles(run_dir, std::move(found));
}

namespace detail {

int NumberInName(const std::string &name, const std::string &prefix, const std::string &suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  // The runtime writes %d: no sign, no leading zero, so one name per number.
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return -1;
  return std::stoi(digits);
}

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
    if (LeaderOfContainerName(e->d_name) >= 0)
      out.containers.push_back(run_dir + "/" + e->d_name);
  }
  closedir(d);
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.containers.begin(), out.containers.end());
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
  std::vector<std::string> skipped;
  AddContainerRanks(run_dir, found.containers, &parts, &names, &ranks, &skipped);
  if (parts.empty() && !found.unwritten.empty()) {
    // Containers made at MPI_Init, nothing written after: say why.
    std::vector<int> lost;
    for (const auto &[rank, why] : found.unwritten)
      lost.push_back(rank);
    throw Error(run_dir + ": no readable rank data: " +
                DescribeUnwritten(lost, found.unwritten.begin()->second) +
                "; free space there, or choose another --output, and re-run");
  }
  if (parts.empty())
    throw Error(
        run_dir + ": no readable rank data: " +
        (skipped.empty() ? std::string("the snapshot containers hold no records") : skipped[0]) +
        (skipped.size() > 1 ? " (and " + std::to_string(skipped.size() - 1) + " more)"
                            : std::string()));
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
  merged.skipped = std::move(skipped);
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
      for (auto &o : r.off_cpu)
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

std::string ProfileToJson(const Profile &p) { return detail::ProfileToJsonValue(p).dump(); }

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
