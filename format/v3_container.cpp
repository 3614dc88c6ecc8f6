// See v3_container.h.
#include "v3_container.h"
#include "compress.h"
#include "scalana/profile_v3.h"
#include "scalana/regular_file.h"

#include <unistd.h>

namespace scalana::detail {
namespace {

struct FileBytes : ByteSource {
  int fd = -1;
  uint64_t size = 0;
  std::string path;
  ~FileBytes() override {
    if (fd >= 0)
      ::close(fd);
  }
  uint64_t Size() const override { return size; }
  std::string Read(uint64_t offset, uint64_t len) const override {
    std::string out(size_t(len), '\0');
    if (!ReadAt(fd, offset, out.data(), size_t(len)))
      throw Error(path + ": cannot read " + std::to_string(len) + " bytes at offset " +
                  std::to_string(offset) +
                  ": the file is shorter than it was (truncated while "
                  "being read?)");
    return out;
  }
};

struct MemoryBytes : ByteSource {
  const std::string &bytes;
  explicit MemoryBytes(const std::string &b) : bytes(b) {}
  uint64_t Size() const override { return bytes.size(); }
  std::string Read(uint64_t offset, uint64_t len) const override {
    return bytes.substr(size_t(offset), size_t(len));
  }
};

// [OFFSET, OFFSET + LEN) inside a file of SIZE bytes and past the header,
// without overflow.
bool Inside(uint64_t offset, uint64_t len, uint64_t size) {
  return offset >= container::kHeaderBytes && offset <= size && len <= size - offset;
}

} // namespace

std::unique_ptr<ByteSource> FileSource(const std::string &path) {
  auto f = std::make_unique<FileBytes>();
  std::string error;
  f->path = path;
  f->fd = OpenRegularFile(path, &f->size, &error);
  if (f->fd < 0)
    throw Error(path + ": cannot read: " + error);
  return f;
}

std::unique_ptr<ByteSource> MemorySource(const std::string &bytes) {
  return std::make_unique<MemoryBytes>(bytes);
}

V3File OpenV3(const ByteSource &src, const std::string &origin) {
  V3File f;
  f.origin = origin;
  const uint64_t size = src.Size();
  auto fail = [&](const std::string &what) { throw Error(origin + ": " + what); };
  if (size < container::kHeaderBytes)
    fail(std::to_string(size) + " bytes, shorter than the " +
         std::to_string(container::kHeaderBytes) +
         "-byte header of a format-3 profile: the file is truncated");
  std::string hb = src.Read(0, container::kHeaderBytes);
  auto *b = reinterpret_cast<const unsigned char *>(hb.data());
  if (std::memcmp(b, container::kMagic, 8) != 0)
    fail("not a ScalAna format-3 profile (no SCALANA3 magic at the start)");
  uint32_t version = container::GetU32(b + 8);
  if (version != container::kVersion)
    fail("profile format version " + std::to_string(version) +
         " is not supported (expected 3); read it with the ScalAna that wrote it");
  if (container::Crc32(b, 60) != container::GetU32(b + 60))
    fail("header: crc mismatch: the file is damaged");
  if (container::GetU32(b + 12) != container::kHeaderBytes || container::GetU32(b + 56) != 0)
    fail("header: header size " + std::to_string(container::GetU32(b + 12)) +
         " or reserved field not as format 3 defines them");
  container::Header &h = f.header;
  h.world_size = container::GetU64(b + 16);
  h.meta_offset = container::GetU64(b + 24);
  h.meta_length = container::GetU64(b + 32);
  h.index_offset = container::GetU64(b + 40);
  h.group_count = container::GetU64(b + 48);
  if (h.world_size == 0 || h.world_size > uint64_t(kMaxWorldSize))
    fail("header: world_size " + std::to_string(h.world_size) + " is not 1 to " +
         std::to_string(kMaxWorldSize));
  if (h.meta_length == 0 || h.meta_length > kMaxProfileBytes ||
      !Inside(h.meta_offset, h.meta_length, size))
    fail("header: the meta section (offset " + std::to_string(h.meta_offset) + ", " +
         std::to_string(h.meta_length) + " bytes) does not lie inside the file of " +
         std::to_string(size) + " bytes: the file is truncated or damaged");
  if (h.group_count > h.world_size)
    fail("header: group_count " + std::to_string(h.group_count) + " is more than the " +
         std::to_string(h.world_size) + " ranks of the run");
  if (!Inside(h.index_offset, h.group_count * container::kIndexEntryBytes, size))
    fail("header: the index (offset " + std::to_string(h.index_offset) + ", " +
         std::to_string(h.group_count) + " entries) does not lie inside the file of " +
         std::to_string(size) + " bytes: the file is truncated or damaged");

  f.meta = DecodeMetaSection(src.Read(h.meta_offset, h.meta_length), origin + ": meta section");
  if (f.meta.world_size != 0 && uint64_t(f.meta.world_size) != h.world_size)
    fail("meta section: meta.world_size " + std::to_string(f.meta.world_size) +
         " differs from the header's " + std::to_string(h.world_size) + ": the file is damaged");

  std::string ib = src.Read(h.index_offset, h.group_count * container::kIndexEntryBytes);
  uint64_t next_rank = 0;
  for (uint64_t k = 0; k < h.group_count; ++k) {
    container::GroupEntry e = container::DecodeGroupEntry(
        reinterpret_cast<const unsigned char *>(ib.data()) + k * container::kIndexEntryBytes);
    std::string at = "index entry " + std::to_string(k) + ": ";
    if (e.rank_count == 0 || e.first_rank >= h.world_size ||
        e.rank_count > h.world_size - e.first_rank)
      fail(at + "ranks " + std::to_string(e.first_rank) + " (" + std::to_string(e.rank_count) +
           " of them) do not lie inside the world of " + std::to_string(h.world_size) + " ranks");
    if (e.first_rank < next_rank)
      fail(at + "ranks from " + std::to_string(e.first_rank) +
           " overlap or precede the group before (groups are sorted and disjoint)");
    next_rank = e.first_rank + e.rank_count;
    if (e.codec != container::Codec::JsonGzip && e.codec != container::Codec::Columns)
      fail(at + "unknown codec " + std::to_string(uint32_t(e.codec)));
    if (e.flags != 0)
      fail(at + "flags " + std::to_string(e.flags) + " are not 0");
    if (e.length == 0 || e.length > kMaxProfileBytes || !Inside(e.offset, e.length, size))
      fail(at + "the block (offset " + std::to_string(e.offset) + ", " + std::to_string(e.length) +
           " bytes) does not lie inside the file of " + std::to_string(size) +
           " bytes: the file is truncated or damaged");
    f.groups.push_back(e);
  }
  return f;
}

std::string GroupName(const V3File &f, size_t k) {
  const container::GroupEntry &e = f.groups[k];
  return f.origin + ": group " + std::to_string(k) + " (ranks " + std::to_string(e.first_rank) +
         "-" + std::to_string(e.first_rank + e.rank_count - 1) + ")";
}

Profile ReadGroup(const ByteSource &src, const V3File &f, size_t k) {
  const container::GroupEntry &e = f.groups[k];
  const std::string name = GroupName(f, k);
  std::string block = src.Read(e.offset, e.length);
  if (container::Crc32(block.data(), block.size()) != e.crc32)
    throw Error(name + ": block crc mismatch: the file is damaged");
  // Ranks are bounded by the header's world when the meta leaves it open.
  ProfileMeta bound = f.meta;
  bound.world_size = int(f.header.world_size);
  Profile part = DecodeGroupBlock(block, e.codec, name, &bound);
  part.meta.world_size = f.meta.world_size;
  for (const RankData &r : part.ranks)
    if (uint64_t(r.rank) < e.first_rank || uint64_t(r.rank) - e.first_rank >= e.rank_count)
      throw Error(name + ": holds rank " + std::to_string(r.rank) +
                  ", outside the group's ranks: the file is damaged");
  return part;
}

} // namespace scalana::detail
