// Reading the framing of a format-3 file (docs/formats.md section 4.1)
// from any source of bytes: the header, the meta section and the group
// index, every offset and length checked against the file's size before
// anything is read, and one group's block on demand, its crc checked.
#pragma once

#include "scalana/container_format.h"
#include "scalana/profile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scalana::detail {

// Where the bytes come from: a file (read with pread, never whole) or memory.
struct ByteSource {
  virtual ~ByteSource() = default;
  virtual uint64_t Size() const = 0;
  // LEN bytes at OFFSET, which the caller has checked lie inside Size().
  virtual std::string Read(uint64_t offset, uint64_t len) const = 0;
};
std::unique_ptr<ByteSource> FileSource(const std::string &path);
std::unique_ptr<ByteSource> MemorySource(const std::string &bytes);

struct V3File {
  std::string origin; // the file's name in messages
  container::Header header;
  ProfileMeta meta;
  std::vector<container::GroupEntry> groups;
};

// Header, meta and index of SRC, checked. Throws Error "<ORIGIN>: ...".
V3File OpenV3(const ByteSource &src, const std::string &origin);
// "<file>: group 3 (ranks 384-511)".
std::string GroupName(const V3File &f, size_t k);
// Group K's part: its block read, crc checked and decoded, its ranks inside
// the group's range; the part's meta is the file's, with its modules.
Profile ReadGroup(const ByteSource &src, const V3File &f, size_t k);

} // namespace scalana::detail
