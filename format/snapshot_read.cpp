// The reader of a node's snapshot container (snapshot_read.h). A container
// is written by many ranks at once and may be read while they write, or
// after some were killed mid-write: a torn record fails its CRC and the
// rank's other slot serves. Anything the header says is checked against the
// file before it is used: a header that does not fit refuses the container.
#include "snapshot_read.h"

#include "profile_internal.h"

#include "scalana/profile.h"
#include "scalana/regular_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalana::detail {
namespace {

using namespace snapshots;

std::string Fail(const std::string &origin, const std::string &why) {
  return origin + ": " + why + "; not a usable snapshot container, skipped";
}

snapshots::Header ParseHeader(const ReadAt &read, uint64_t size, const std::string &origin) {
  std::string b;
  if (size < kHeaderFixed || !read(0, kHeaderFixed, &b))
    throw Error(Fail(origin, "truncated: " + std::to_string(size) +
                                 " bytes, shorter than the header (" +
                                 std::to_string(kHeaderFixed) + ")"));
  if (std::memcmp(b.data(), kMagic, 8) != 0)
    throw Error(Fail(origin, "bad magic"));
  Header h;
  h.version = Get32(&b[8]);
  h.header_size = Get32(&b[12]);
  h.leader = Get32(&b[16]);
  h.ranks = Get32(&b[20]);
  h.slot = Get64(&b[24]);
  if (h.version != kVersion)
    throw Error(Fail(origin, "version " + std::to_string(h.version) + ", this reader knows " +
                                 std::to_string(kVersion)));
  if (h.ranks == 0 || h.ranks > kMaxRanksPerNode)
    throw Error(Fail(origin, "header says " + std::to_string(h.ranks) +
                                 " ranks on the node (1 to " + std::to_string(kMaxRanksPerNode) +
                                 ")"));
  if (h.header_size != HeaderSize(h.ranks))
    throw Error(Fail(origin, "header size " + std::to_string(h.header_size) + " for " +
                                 std::to_string(h.ranks) + " ranks (expected " +
                                 std::to_string(HeaderSize(h.ranks)) + ")"));
  if (h.slot < kMinSlot || h.slot > kMaxSlot)
    throw Error(Fail(origin, "slot size " + std::to_string(h.slot) + " (" +
                                 std::to_string(kMinSlot) + " to " + std::to_string(kMaxSlot) +
                                 ")"));
  // Made at full size (sparse) when the run started: a shorter file was cut.
  if (size < FileSize(h))
    throw Error(Fail(origin, "truncated: " + std::to_string(size) + " bytes, shorter than " +
                                 std::to_string(h.ranks) + " ranks x " + std::to_string(kSlots) +
                                 " slots of " + std::to_string(h.slot) + " bytes"));
  std::string table;
  if (!read(0, kHeaderFixed + 4 * uint64_t(h.ranks), &table))
    throw Error(Fail(origin, "cannot read the header"));
  uint32_t crc = Crc(table.data(), 96);
  crc = Crc(table.data() + kHeaderFixed, 4 * size_t(h.ranks), crc);
  if (crc != Get32(&table[96]))
    throw Error(Fail(origin, "header CRC mismatch (corrupt)"));
  const char *id = &table[32];
  size_t len = strnlen(id, kRunIdBytes);
  if (len == kRunIdBytes)
    throw Error(Fail(origin, "run id not terminated"));
  h.run_id.assign(id, len);
  for (char c : h.run_id)
    if (c <= ' ' || c > '~')
      throw Error(Fail(origin, "run id with a control character or space"));
  for (uint32_t i = 0; i < h.ranks; ++i) {
    uint32_t r = Get32(&table[kHeaderFixed + 4 * size_t(i)]);
    // Node-local indices follow world ranks (the split's key), the first the leader.
    if (r > uint32_t(INT32_MAX) || (i == 0 && r != h.leader) ||
        (i > 0 && r <= h.world_ranks.back()))
      throw Error(Fail(origin, "rank table: index " + std::to_string(i) + " holds rank " +
                                   std::to_string(r) + " (ranks rise from the leader " +
                                   std::to_string(h.leader) + ")"));
    h.world_ranks.push_back(r);
  }
  return h;
}

// Slot SLOT of index I (for slot 2, its copy COPY): its record, or why not
// (empty WHY: an empty slot, or a premade record not activated, which is
// not a fault).
bool ReadRecord(const ReadAt &read, const Header &h, uint32_t i, uint32_t slot, uint32_t copy,
                SnapshotRecord *out, std::string *why) {
  bool premade = slot == kPremadeSlot;
  uint64_t at = premade ? PremadeOffset(h, i, copy) : SlotOffset(h, i, slot);
  uint64_t room = premade ? PremadeBytes(h) : h.slot;
  std::string b;
  if (!read(at, kRecordHeader, &b)) {
    *why = "cannot read its record header";
    return false;
  }
  uint32_t magic = Get32(&b[0]);
  if (magic == 0 && Get64(&b[8]) == 0 && Get64(&b[24]) == 0)
    return false; // never written: the file's holes read as zeros
  if (magic != kRecordMagic) {
    *why = "bad record magic";
    return false;
  }
  if (Get32(&b[36]) != RecordHeaderCrc(b.data())) {
    *why = "record header CRC mismatch (torn write or corrupt)";
    return false;
  }
  Record r;
  r.rank = Get32(&b[4]);
  r.sequence = Get64(&b[8]);
  r.kind = Get32(&b[16]);
  r.active = Get32(&b[20]);
  r.length = Get64(&b[24]);
  r.payload_crc = Get32(&b[32]);
  if (r.rank != h.world_ranks[i]) {
    *why = "holds rank " + std::to_string(r.rank) + ", not rank " +
           std::to_string(h.world_ranks[i]) + " of the header";
    return false;
  }
  uint32_t kind = premade ? kPremadeEnd : kSnapshot;
  if (r.kind != kind) {
    *why = "record kind " + std::to_string(r.kind) + ", expected " + std::to_string(kind);
    return false;
  }
  if (r.active > 1) {
    *why = "active word " + std::to_string(r.active) + " (0 or 1)";
    return false;
  }
  if (premade && !r.active)
    return false; // made in advance, never put in place: the rank got no SIGTERM
  if (r.length == 0 || r.length > room - kRecordHeader || r.length > kMaxProfileBytes) {
    *why = "payload length " + std::to_string(r.length) + " does not fit the slot";
    return false;
  }
  if (!read(at + kRecordHeader, r.length, &out->payload)) {
    *why = "cannot read its payload";
    return false;
  }
  if (Crc(out->payload.data(), out->payload.size()) != r.payload_crc) {
    *why = "payload CRC mismatch (torn write or corrupt)";
    return false;
  }
  out->slot = slot;
  out->sequence = r.sequence;
  return true;
}

} // namespace

ContainerContents ParseSnapshotContainer(const ReadAt &read, uint64_t size,
                                         const std::string &origin) {
  ContainerContents c;
  c.header = ParseHeader(read, size, origin);
  const Header &h = c.header;
  for (uint32_t i = 0; i < h.ranks; ++i) {
    ContainerRank cr;
    cr.rank = int(h.world_ranks[i]);
    cr.index = i;
    for (uint32_t slot = 0; slot < kSlots; ++slot)
      for (uint32_t copy = 0; copy < (slot == kPremadeSlot ? kPremadeCopies : 1); ++copy) {
        SnapshotRecord rec;
        std::string why;
        if (ReadRecord(read, h, i, slot, copy, &rec, &why)) {
          rec.copy = copy;
          cr.records.push_back(std::move(rec));
        } else if (!why.empty()) {
          std::string where = slot == kPremadeSlot ? "slot 2 (copy " + std::to_string(copy) + ")"
                                                   : "slot " + std::to_string(slot);
          c.skipped.push_back(origin + ": " + where + " of rank " + std::to_string(cr.rank) +
                              " (node index " + std::to_string(i) + "): " + why + "; skipped");
        }
      }
    // Ties in the order read (slot, then copy): std::sort with the whole
    // key, as std::stable_sort's buffer is deprecated under C++20's library.
    std::sort(cr.records.begin(), cr.records.end(),
              [](const SnapshotRecord &a, const SnapshotRecord &b) {
                bool pa = a.slot == kPremadeSlot, pb = b.slot == kPremadeSlot;
                if (pa != pb)
                  return pa;
                if (a.sequence != b.sequence)
                  return a.sequence > b.sequence;
                return a.slot != b.slot ? a.slot < b.slot : a.copy < b.copy;
              });
    if (!cr.records.empty())
      c.ranks.push_back(std::move(cr));
  }
  return c;
}

ContainerContents ReadSnapshotContainer(const std::string &path) {
  std::string error;
  uint64_t size = 0;
  int fd = OpenRegularFile(path, &size, &error);
  if (fd < 0)
    throw Error(path + ": cannot read: " + error);
  ReadAt read = [fd](uint64_t offset, uint64_t n, std::string *out) {
    out->assign(size_t(n), '\0');
    uint64_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd, &(*out)[done], size_t(n - done), off_t(offset + done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return false;
      done += uint64_t(got);
    }
    return true;
  };
  try {
    ContainerContents c = ParseSnapshotContainer(read, size, path);
    ::close(fd);
    return c;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

int LeaderOfContainerName(const std::string &name) { return NumberInName(name, kPrefix, kSuffix); }

} // namespace scalana::detail
