// Profile format 3 (`RUN_DIR/profile.scalana`, docs/formats.md section 4):
// encoding and decoding of its parts, a single-process writer, and readers
// that stream its groups or read a rank range through the index. The framing
// is in container_format.h; the in-memory profile in profile.h.
//
// Why its own API: a job of a million ranks is written by the group leaders
// of the collective writer, each encoding one group; readers take one group
// at a time, so neither side ever holds the whole profile unless it asks.
#pragma once

#include "scalana/container_format.h"
#include "scalana/profile.h"

#include <cstdint>
#include <functional>
#include <string>

namespace scalana {

// The block of one group. GROUP holds exactly the group's ranks, with its
// own contexts, comms and meta.modules (as ProfileFromJson gives them for a
// per-rank file, or MergeProfiles of a few). JsonGzip: a gzip member of
// ProfileToJson(GROUP); Columns: the columnar encoding (docs/formats.md
// section 4.3). Throws Error for a group it cannot encode (a rank out of the
// range a column holds).
std::string EncodeGroupBlock(const Profile &group, container::Codec codec);

// A block back, with every check the format-2 reader makes; a bad block
// throws Error "<ORIGIN>: <field>: what is wrong". META, when given, is the
// run's metadata (the file's meta section): the result carries it, with the
// block's own modules, and its world size, sampling rate and counters bound
// the block's numbers as in format 2. Without it a JsonGzip block carries
// its own meta and a Columns block only its modules (world size unknown).
Profile DecodeGroupBlock(const std::string &bytes, container::Codec codec,
                         const std::string &origin, const ProfileMeta *meta = nullptr);

// The meta section: a gzip member of {"meta": {...}}, the format-2 meta
// object without "modules" (they live in the group blocks).
std::string EncodeMetaSection(const ProfileMeta &meta);
ProfileMeta DecodeMetaSection(const std::string &bytes, const std::string &origin);

// Writes P as a format-3 file at PATH from one process: groups of
// GROUP_RANKS consecutive world ranks (a group without any rank of P is not
// written), each with only the contexts, comms and modules it uses,
// renumbered; header, meta, blocks, index laid out as the collective writer
// does. Written to PATH + ".partial", then renamed. Throws Error.
void WriteProfileV3(const std::string &path, const Profile &p, uint32_t group_ranks = 128,
                    container::Codec codec = container::Codec::Columns);

// Calls EACH with one part per group of the profile RUN_DIR_OR_FILE names,
// in rank order, each part carrying the run's meta and its own tables:
// a format-3 file (a run directory holding profile.scalana, or the file),
// then, for a run directory, one part merging the per-rank files of ranks no
// group holds (ranks that ended before MPI_Finalize). An old profile
// (profile.json.gz, per-rank files only) is one part. Throws Error as
// ReadProfile does; parts before a bad group have been delivered.
void ReadProfileGroups(const std::string &run_dir_or_file,
                       const std::function<void(Profile &&part)> &each);
// The same over the bytes of a format-3 file in memory (ORIGIN names it).
void ReadProfileGroupsFromBytes(const std::string &bytes, const std::string &origin,
                                const std::function<void(Profile &&part)> &each);

// SHARE's share (0 to SHARES-1) of the groups of the format-3 profile
// RUN_DIR_OR_FILE names, for analyses that split a run's groups among
// SHARES processes: consecutive groups, share k taking groups
// ceil(k G / SHARES) to ceil((k+1) G / SHARES) - 1 of G, so share 0 has the
// first whenever there is one. EACH gets them in rank order as
// ReadProfileGroups gives them. Returns false, calling EACH never, when the
// profile cannot be split so: not format 3, or a run directory whose
// per-rank files (ranks that ended before MPI_Finalize) ReadProfileGroups
// would merge into one more part. Throws Error as ReadProfileGroups does.
bool ReadProfileGroupShare(const std::string &run_dir_or_file, int share, int shares,
                           const std::function<void(Profile &&part)> &each);

// The ranks FIRST to LAST (inclusive) of the profile PATH names (a run
// directory or a file), merged. For a format-3 file only the blocks of the
// groups overlapping the range are read (through the index); for older
// profiles the whole profile is read and the other ranks dropped.
Profile ReadProfileRanks(const std::string &path, uint64_t first, uint64_t last);

// True when the file PATH starts with format 3's magic (it may still be
// damaged: reading it says how).
bool IsProfileV3File(const std::string &path);

} // namespace scalana

namespace scalana {

// What a Columns block keeps of P's times: each rounded to the nearest
// nanosecond (as a double, ns / 1e9). A profile so rounded encodes and
// decodes to itself exactly.
void RoundTimesToNanos(Profile &p);

} // namespace scalana
