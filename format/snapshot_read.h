// Reading a node's snapshot container (docs/formats.md section 5): the
// header checked, and for each rank its usable records, best first. The
// bytes are untrusted: every length and offset is checked against the file
// before it is used, and a bad record is skipped with a message naming the
// file, the slot and the rank, never trusted.
#pragma once

#include "scalana/snapshot_container.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scalana::detail {

// A record that passed every check of its own bytes (magic, header CRC,
// rank, kind, length, payload CRC): SLOT 0 or 1 a periodic snapshot, 2 the
// premade end record (only when active; COPY 0 or 1 of it).
struct SnapshotRecord {
  uint32_t slot = 0, copy = 0;
  uint64_t sequence = 0;
  std::string payload; // a gzip member of a one-rank format-2 document
};

struct ContainerRank {
  int rank = 0;
  uint32_t index = 0;
  // Best first: the active premade records (they carry how the rank ended),
  // then the snapshots, each newest first.
  std::vector<SnapshotRecord> records;
};

struct ContainerContents {
  snapshots::Header header;
  std::vector<ContainerRank> ranks; // those with at least one record
  std::vector<std::string> skipped; // one message per record skipped
};

// Reads N bytes at OFFSET into *OUT; false when fewer could be read.
using ReadAt = std::function<bool(uint64_t offset, uint64_t n, std::string *out)>;

// The container of SIZE bytes that READ reads, ORIGIN its name in messages.
// Throws Error when the header is unusable (truncated, bad magic, version,
// CRC, sizes or counts that do not fit the file); bad records are skipped.
ContainerContents ParseSnapshotContainer(const ReadAt &read, uint64_t size,
                                         const std::string &origin);
// The same for the regular file PATH (never a FIFO or a device).
ContainerContents ReadSnapshotContainer(const std::string &path);
// The leader's world rank L of a file name "snapshots-<L>.scs"; -1 else.
int LeaderOfContainerName(const std::string &name);

} // namespace scalana::detail
