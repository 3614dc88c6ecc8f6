// The columnar block of format 3 (Codec::Columns, docs/formats.md section
// 4.3): one group's ranks as columns over all its ranks, one zlib stream.
#pragma once

#include "scalana/profile.h"

#include <cstdint>
#include <string>

namespace scalana::detail {

// The first varint of the inflated block: 2 adds the time-accounting columns
// (ranks.on_cpu, ranks.run_delay, ranks.cores, thread_info.run_delay,
// thread_info.wall_seconds) after all of layout 1's, which stays readable;
// 3 adds the off-CPU rows (ranks.off_cpu, then the off_cpu table) after those.
inline constexpr uint64_t kColumnsLayout = 3;
// Communicator members a block may expand to, in all (runs make a world
// communicator a few bytes; this bounds what a hostile block makes of them).
inline constexpr uint64_t kMaxBlockCommMembers = uint64_t(8) * kMaxWorldSize;

// The per-rank scalar columns of a block, in their order in the block:
// the encoder writes and the decoder reads them by these indices.
enum RankColumn {
  kRank,
  kHost,
  kPid,
  kThreads,
  kWall,
  kSamples,
  kDropped,
  kCpu,
  kBlocked,
  kEnd,
  kNVert,
  kNMpi,
  kNDeps,
  kNInfo,
  kNTv,
  kNOmp,
  kNErr,
  kRankCols
};

// GROUP's ranks, contexts, communicators and meta.modules (nothing else of
// its meta) in the columnar layout, deflated.
std::string EncodeColumns(const Profile &group);
// The block back with format 2's checks; META bounds ranks (world_size),
// counters and sample counts. The result's meta is META with the block's
// modules. Throws Error "<ORIGIN>: ...".
Profile DecodeColumns(const std::string &bytes, const std::string &origin, const ProfileMeta &meta);

} // namespace scalana::detail
