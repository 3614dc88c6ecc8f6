// Reading format 3 (docs/formats.md section 4): a block or the meta
// section alone, a file's groups one at a time, a rank range through the
// index, and the whole profile for ReadProfile. A run directory's per-rank
// files of ranks no group holds (ranks that ended before MPI_Finalize) are
// merged in, so a reader sees the same ranks as with format 2.
#include "columns.h"
#include "compress.h"
#include "profile_internal.h"
#include "scalana/profile_v3.h"
#include "scalana/regular_file.h"
#include "v3_container.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <set>

namespace scalana {

Profile DecodeGroupBlock(const std::string &bytes, container::Codec codec,
                         const std::string &origin, const ProfileMeta *meta) {
  switch (codec) {
  case container::Codec::JsonGzip: {
    Profile p = ProfileFromGzip(bytes, origin);
    if (meta) {
      std::vector<ModuleInfo> modules = std::move(p.meta.modules);
      p.meta = *meta;
      p.meta.modules = std::move(modules);
      for (const RankData &r : p.ranks)
        if (meta->world_size > 0 && r.rank >= meta->world_size)
          throw Error(origin + ": rank " + std::to_string(r.rank) +
                      " is not below meta.world_size " + std::to_string(meta->world_size));
    }
    return p;
  }
  case container::Codec::Columns:
    return detail::DecodeColumns(bytes, origin, meta ? *meta : ProfileMeta{});
  }
  throw Error(origin + ": unknown codec " + std::to_string(uint32_t(codec)));
}

ProfileMeta DecodeMetaSection(const std::string &bytes, const std::string &origin) {
  return detail::MetaFromSectionJson(detail::Gunzip(bytes, origin), origin);
}

namespace {

bool IsDir(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string &path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Which groups and leftover rank files a read wants: all, or those
// overlapping [first, last].
struct Range {
  uint64_t first = 0, last = UINT64_MAX;
  bool Overlaps(uint64_t a, uint64_t n) const { return a <= last && a + n - 1 >= first; }
};

// The groups of the format-3 file PATH in RANGE, then (RUN_DIR not "") the
// per-rank files of RUN_DIR for ranks in RANGE that no group of the file
// holds, as one part. Those files must be of the file's run.
// Returns the file's meta.
ProfileMeta StreamV3(const std::string &path, const std::string &run_dir, Range range,
                     const std::function<void(Profile &&)> &each) {
  auto src = detail::FileSource(path);
  detail::V3File f = detail::OpenV3(*src, path);
  std::set<int> held;
  for (size_t k = 0; k < f.groups.size(); ++k) {
    if (!range.Overlaps(f.groups[k].first_rank, f.groups[k].rank_count))
      continue;
    Profile part = detail::ReadGroup(*src, f, k);
    for (const RankData &r : part.ranks)
      held.insert(r.rank);
    each(std::move(part));
  }
  if (run_dir.empty())
    return f.meta;
  detail::RankFiles found = detail::ListRankFiles(run_dir), left;
  for (const auto &[rank, file] : found.files)
    if (!held.count(rank) && uint64_t(rank) >= range.first && uint64_t(rank) <= range.last)
      left.files.emplace_back(rank, file);
  if (left.files.empty())
    return f.meta;
  left.unwritten = std::move(found.unwritten);
  Profile part = detail::MergeRankFiles(run_dir, std::move(left));
  if (part.meta.run_id != f.meta.run_id)
    throw Error(run_dir + ": rank files of run " +
                (part.meta.run_id.empty() ? "(id not recorded)" : part.meta.run_id) + " beside " +
                path + " of run " + (f.meta.run_id.empty() ? "(id not recorded)" : f.meta.run_id) +
                ": stale files of an earlier run? remove them, or re-run into an empty directory");
  each(std::move(part));
  return f.meta;
}

// A part list merged into one profile, with the file's meta (the parts'
// meta are copies of it but for modules) and the run directory's markers.
Profile MergeParts(std::vector<Profile> parts, const ProfileMeta &meta) {
  bool complete = meta.complete;
  std::map<int, std::string> unwritten;
  for (Profile &p : parts) {
    complete = complete && p.meta.complete;
    unwritten.insert(p.unwritten.begin(), p.unwritten.end());
  }
  Profile merged = MergeProfiles(std::move(parts));
  std::vector<ModuleInfo> modules = std::move(merged.meta.modules);
  merged.meta = meta;
  merged.meta.modules = std::move(modules);
  merged.meta.complete = complete;
  merged.unwritten = std::move(unwritten);
  return merged;
}

std::string V3PathOf(const std::string &path, std::string *run_dir) {
  run_dir->clear();
  if (IsDir(path)) {
    std::string v3 = path + "/" + container::kFileName;
    if (!Exists(v3))
      return "";
    *run_dir = path;
    return v3;
  }
  return detail::IsV3Magic(path) ? path : "";
}

} // namespace

namespace detail {

bool IsV3Magic(const std::string &path) {
  std::string error;
  uint64_t size = 0;
  int fd = OpenRegularFile(path, &size, &error);
  if (fd < 0)
    return false;
  char magic[8];
  bool yes = size >= 8 && ReadAt(fd, 0, magic, 8) && std::memcmp(magic, container::kMagic, 8) == 0;
  ::close(fd);
  return yes;
}

Profile ReadV3Whole(const std::string &path, const std::string &run_dir) {
  std::vector<Profile> parts;
  ProfileMeta meta =
      StreamV3(path, run_dir, Range{}, [&](Profile &&p) { parts.push_back(std::move(p)); });
  return MergeParts(std::move(parts), meta);
}

} // namespace detail

bool IsProfileV3File(const std::string &path) { return detail::IsV3Magic(path); }

void ReadProfileGroups(const std::string &path, const std::function<void(Profile &&part)> &each) {
  std::string run_dir, v3 = V3PathOf(path, &run_dir);
  if (v3.empty()) {
    each(ReadProfile(path));
    return;
  }
  StreamV3(v3, run_dir, Range{}, each);
}

void ReadProfileGroupsFromBytes(const std::string &bytes, const std::string &origin,
                                const std::function<void(Profile &&part)> &each) {
  auto src = detail::MemorySource(bytes);
  detail::V3File f = detail::OpenV3(*src, origin);
  for (size_t k = 0; k < f.groups.size(); ++k)
    each(detail::ReadGroup(*src, f, k));
}

bool ReadProfileGroupShare(const std::string &path, int share, int shares,
                           const std::function<void(Profile &&part)> &each) {
  std::string run_dir, v3 = V3PathOf(path, &run_dir);
  if (v3.empty() || shares < 1 || share < 0 || share >= shares)
    return false;
  if (!run_dir.empty()) {
    detail::RankFiles left = detail::ListRankFiles(run_dir);
    if (!left.files.empty() || !left.unwritten.empty())
      return false;
  }
  auto src = detail::FileSource(v3);
  detail::V3File f = detail::OpenV3(*src, v3);
  const uint64_t n = f.groups.size(), k = uint64_t(share), m = uint64_t(shares);
  for (uint64_t g = (k * n + m - 1) / m; g < ((k + 1) * n + m - 1) / m; ++g)
    each(detail::ReadGroup(*src, f, size_t(g)));
  return true;
}

Profile ReadProfileRanks(const std::string &path, uint64_t first, uint64_t last) {
  std::string run_dir, v3 = V3PathOf(path, &run_dir);
  Profile p;
  if (v3.empty()) {
    p = ReadProfile(path);
  } else {
    std::vector<Profile> parts;
    ProfileMeta meta = StreamV3(v3, run_dir, Range{first, last},
                                [&](Profile &&part) { parts.push_back(std::move(part)); });
    p = MergeParts(std::move(parts), meta);
  }
  p.ranks.erase(std::remove_if(p.ranks.begin(), p.ranks.end(),
                               [&](const RankData &r) {
                                 return uint64_t(r.rank) < first || uint64_t(r.rank) > last;
                               }),
                p.ranks.end());
  return p;
}

} // namespace scalana
