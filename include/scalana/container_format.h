// The framing of a profile of format 3 (`RUN_DIR/profile.scalana`,
// docs/formats.md section 4): a fixed header, the run's metadata, a group
// index and one block per group of consecutive ranks. Shared by the
// runtime's collective writer, the readers and the benchmarks, so that all
// of them lay out and check the same bytes. Everything is little-endian.
//
// Why groups: a group's block is self-contained (its own contexts,
// communicators and modules), so a rank range is read without the rest of
// the file, the writer needs no job-wide unification of tables, and no rank
// ever holds more than one group's data.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace scalana::container {

inline constexpr char kMagic[8] = {'S', 'C', 'A', 'L', 'A', 'N', 'A', '3'};
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kHeaderBytes = 64;
inline constexpr uint32_t kIndexEntryBytes = 40;
inline constexpr const char *kFileName = "profile.scalana";
// Written under this name and renamed once complete, so a reader never takes
// a half-written file for a profile.
inline constexpr const char *kPartialSuffix = ".partial";

// How a group's block is encoded.
enum class Codec : uint32_t {
  JsonGzip = 1, // a gzip member of a format-2 document holding the group's ranks
  Columns = 2,  // columnar (docs/formats.md section 4.3)
};

// The header at offset 0.
struct Header {
  uint64_t world_size = 0;
  uint64_t meta_offset = 0, meta_length = 0; // a gzip member of {"meta": {...}}
  uint64_t index_offset = 0, group_count = 0;
};

// One entry of the group index (group_count entries at index_offset, sorted
// by first_rank, rank ranges disjoint).
struct GroupEntry {
  uint64_t first_rank = 0;
  uint32_t rank_count = 0;
  Codec codec = Codec::JsonGzip;
  uint64_t offset = 0, length = 0;
  uint32_t crc32 = 0; // zlib crc32 of the block's bytes
  uint32_t flags = 0; // reserved, 0
};

inline void PutU32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void PutU64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint32_t GetU32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
inline uint64_t GetU64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

inline uint32_t Crc32(const void *data, size_t n) {
  // zlib's crc32 takes a uInt length: feed it in pieces below 1 GiB.
  uLong crc = crc32(0L, Z_NULL, 0);
  auto *p = static_cast<const Bytef *>(data);
  while (n > 0) {
    uInt piece = static_cast<uInt>(n < (size_t(1) << 30) ? n : (size_t(1) << 30));
    crc = crc32(crc, p, piece);
    p += piece;
    n -= piece;
  }
  return static_cast<uint32_t>(crc);
}

// Header layout: magic[8], u32 version, u32 header_bytes, u64 world_size,
// u64 meta_offset, u64 meta_length, u64 index_offset, u64 group_count,
// u32 reserved (0), u32 crc32 of bytes 0-59.
inline std::string EncodeHeader(const Header &h) {
  unsigned char b[kHeaderBytes] = {};
  std::memcpy(b, kMagic, 8);
  PutU32(b + 8, kVersion);
  PutU32(b + 12, kHeaderBytes);
  PutU64(b + 16, h.world_size);
  PutU64(b + 24, h.meta_offset);
  PutU64(b + 32, h.meta_length);
  PutU64(b + 40, h.index_offset);
  PutU64(b + 48, h.group_count);
  PutU32(b + 56, 0);
  PutU32(b + 60, Crc32(b, 60));
  return std::string(reinterpret_cast<char *>(b), kHeaderBytes);
}

// Entry layout: u64 first_rank, u32 rank_count, u32 codec, u64 offset,
// u64 length, u32 crc32, u32 flags.
inline std::string EncodeGroupEntry(const GroupEntry &e) {
  unsigned char b[kIndexEntryBytes] = {};
  PutU64(b, e.first_rank);
  PutU32(b + 8, e.rank_count);
  PutU32(b + 12, static_cast<uint32_t>(e.codec));
  PutU64(b + 16, e.offset);
  PutU64(b + 24, e.length);
  PutU32(b + 32, e.crc32);
  PutU32(b + 36, e.flags);
  return std::string(reinterpret_cast<char *>(b), kIndexEntryBytes);
}

inline GroupEntry DecodeGroupEntry(const unsigned char *b) {
  GroupEntry e;
  e.first_rank = GetU64(b);
  e.rank_count = GetU32(b + 8);
  e.codec = static_cast<Codec>(GetU32(b + 12));
  e.offset = GetU64(b + 16);
  e.length = GetU64(b + 24);
  e.crc32 = GetU32(b + 32);
  e.flags = GetU32(b + 36);
  return e;
}

} // namespace scalana::container
