// The node's snapshot container, RUN_DIR/snapshots-<leader>.scs
// (docs/formats.md section 5): the periodic snapshots and premade SIGTERM end
// records of every rank of one node, in fixed slots of one file, so a
// snapshot is a pwrite() into a file made once at MPI_Init instead of a file
// created and renamed in the run directory per rank and interval. Shared by
// the runtime's writer and the readers so that both lay out and check the
// same bytes. Everything is little-endian.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace scalana::snapshots {

inline constexpr char kMagic[8] = {'S', 'C', 'A', 'L', 'S', 'N', 'P', '1'};
inline constexpr uint32_t kVersion = 1;
inline constexpr const char *kPrefix = "snapshots-", *kSuffix = ".scs";
// The header block: fixed fields, then the world rank of each node-local
// index, padded to a multiple of kBlock so the slots start aligned.
inline constexpr uint64_t kBlock = 4096;
inline constexpr uint64_t kHeaderFixed = 104;
inline constexpr uint64_t kRunIdBytes = 64;
// Bounds every reader checks (and the runtime's options keep to).
inline constexpr uint64_t kMinSlot = 4096, kMaxSlot = uint64_t(1) << 30;
inline constexpr uint32_t kMaxRanksPerNode = 1u << 16;
// Each node-local index owns kSlots slots: 0 and 1 alternate periodic
// snapshots, 2 holds the premade SIGTERM end record, in two copies of half
// a slot each that alternate as well: the writer fills the copy not
// published while a handler may activate the published one at any moment,
// so a SIGTERM always finds a whole record (as the two premade files did).
inline constexpr uint32_t kSlots = 3, kPremadeSlot = 2, kPremadeCopies = 2;

inline constexpr uint32_t kRecordMagic = 0x52435353; // "SSCR"
inline constexpr uint64_t kRecordHeader = 64;
// The "active" word of a record header: the SIGTERM handler's one pwrite().
inline constexpr uint64_t kActiveOffset = 20;
enum Kind : uint32_t { kSnapshot = 1, kPremadeEnd = 2 };

struct Header {
  uint32_t version = kVersion;
  uint32_t header_size = 0;
  uint32_t leader = 0;               // world rank of the node's lowest rank
  uint32_t ranks = 0;                // ranks on the node
  uint64_t slot = 0;                 // bytes per slot, record header included
  std::string run_id;                // under kRunIdBytes
  std::vector<uint32_t> world_ranks; // of node-local index i
};

struct Record {
  uint32_t rank = 0; // world rank
  uint64_t sequence = 0;
  uint32_t kind = 0;
  uint32_t active = 0;
  uint64_t length = 0; // payload bytes after the record header
  uint32_t payload_crc = 0;
};

inline void Put32(char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = char(v >> (8 * i));
}
inline void Put64(char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = char(v >> (8 * i));
}
inline uint32_t Get32(const char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = v << 8 | uint8_t(p[i]);
  return v;
}
inline uint64_t Get64(const char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | uint8_t(p[i]);
  return v;
}
inline uint32_t Crc(const char *p, size_t n, uint32_t crc = 0) {
  return uint32_t(crc32(crc, reinterpret_cast<const Bytef *>(p), uInt(n)));
}

// Bytes of the header block for RANKS ranks.
inline uint64_t HeaderSize(uint64_t ranks) {
  return (kHeaderFixed + 4 * ranks + kBlock - 1) / kBlock * kBlock;
}
// Offset of SLOT of node-local INDEX (no overflow for checked headers:
// ranks < 2^16, slot <= 2^30).
inline uint64_t SlotOffset(const Header &h, uint64_t index, uint32_t slot) {
  return uint64_t(h.header_size) + (index * kSlots + slot) * h.slot;
}
// Offset of copy COPY (0 or 1) of the premade record of INDEX, and its bytes.
inline uint64_t PremadeOffset(const Header &h, uint64_t index, uint32_t copy) {
  return SlotOffset(h, index, kPremadeSlot) + copy * (h.slot / 2);
}
inline uint64_t PremadeBytes(const Header &h) { return h.slot / 2; }
// Bytes of a whole container: every slot of every rank (a sparse file).
inline uint64_t FileSize(const Header &h) { return SlotOffset(h, h.ranks, 0); }

// Layout of the fixed fields: magic[8], version, header_size, leader, ranks
// (u32 each), slot (u64), run_id[64] (NUL-padded), header CRC (u32, of
// every other byte of the block up to the end of the rank table), one
// reserved u32; then the u32 world ranks.
inline std::string EncodeHeader(Header h) {
  h.header_size = uint32_t(HeaderSize(h.ranks));
  std::string b(h.header_size, '\0');
  std::memcpy(&b[0], kMagic, 8);
  Put32(&b[8], h.version);
  Put32(&b[12], h.header_size);
  Put32(&b[16], h.leader);
  Put32(&b[20], h.ranks);
  Put64(&b[24], h.slot);
  std::memcpy(&b[32], h.run_id.data(), h.run_id.size() < kRunIdBytes ? h.run_id.size() : 63);
  for (uint32_t i = 0; i < h.ranks && i < h.world_ranks.size(); ++i)
    Put32(&b[kHeaderFixed + 4 * i], h.world_ranks[i]);
  uint32_t crc = Crc(b.data(), 96);
  crc = Crc(b.data() + kHeaderFixed, 4 * size_t(h.ranks), crc);
  Put32(&b[96], crc);
  return b;
}

// Layout: magic, rank (u32), sequence (u64), kind, active (u32), length
// (u64), payload CRC (u32), header CRC (u32, of bytes 0-19 and 24-35: not
// the active word, which the SIGTERM handler flips), 24 reserved bytes.
inline uint32_t RecordHeaderCrc(const char *b) { return Crc(b + 24, 12, Crc(b, 20)); }
inline std::string EncodeRecord(const Record &r) {
  std::string b(kRecordHeader, '\0');
  Put32(&b[0], kRecordMagic);
  Put32(&b[4], r.rank);
  Put64(&b[8], r.sequence);
  Put32(&b[16], r.kind);
  Put32(&b[20], r.active);
  Put64(&b[24], r.length);
  Put32(&b[32], r.payload_crc);
  Put32(&b[36], RecordHeaderCrc(b.data()));
  return b;
}

} // namespace scalana::snapshots
