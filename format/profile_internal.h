// What the readers and writers of formats 2 and 3 share inside format/:
// the meta object's JSON, the bounded file read, and the per-rank files of
// a run directory. Not installed: tools use profile.h and profile_v3.h.
#pragma once

#include "scalana/profile.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scalana::detail {

// The bytes of the regular file PATH (never a FIFO or a device), at most
// kMaxProfileBytes. Throws Error "<PATH>: cannot read: ...".
std::string ReadProfileBytes(const std::string &path);

// The JSON text {"meta": {...}} of META without "modules" (format 3's meta
// section), and its reader with format 2's checks of every field; a
// "modules" member is refused (they belong to the group blocks).
std::string MetaSectionJson(const ProfileMeta &meta);
ProfileMeta MetaFromSectionJson(const std::string &text, const std::string &origin);

// The per-rank files rank-<R>.json.gz of RUN_DIR, sorted by rank, and the
// markers rank-<R>.unwritten.<REASON> (rank -> reason).
// Also the node snapshot containers snapshots-<L>.scs (docs/formats.md
// section 5), whose ranks count where no rank file holds them.
struct RankFiles {
  std::vector<std::pair<int, std::string>> files;
  std::map<int, std::string> unwritten;
  std::vector<std::string> containers;
};
RankFiles ListRankFiles(const std::string &run_dir);
// N from a name PREFIX<N>SUFFIX the runtime wrote ("rank-3.json.gz",
// "snapshots-0.scs"): decimal, no sign or leading zero, below 10^9; else -1.
int NumberInName(const std::string &name, const std::string &prefix, const std::string &suffix);
// FOUND's files read, checked to be of one run and build, and merged as
// ReadProfile does (meta.complete false); then each container's ranks that
// no rank file holds (a rank file, an end record, wins), their skipped
// records in Profile::skipped. Throws Error when nothing could be read.
Profile MergeRankFiles(const std::string &run_dir, RankFiles found);
// "rank 3 could not write: no space left on the device" (rank_ends.cpp).
std::string DescribeUnwritten(const std::vector<int> &ranks, const std::string &why);

// Format 3 (profile_v3_read.cpp): whether PATH starts with its magic, and
// the whole profile of the file PATH merged; RUN_DIR (or "") is the run
// directory whose per-rank files of ranks no group holds are merged in.
bool IsV3Magic(const std::string &path);
Profile ReadV3Whole(const std::string &path, const std::string &run_dir);

} // namespace scalana::detail
