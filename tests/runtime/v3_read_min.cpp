// A minimal reader of profile.scalana for the runtime's tests only: codec 1
// (JsonGzip) blocks, every crc checked, the blocks merged as the per-rank
// files are. Not the format's reader (format/), which the tools use.
#include "v3_read_min.h"

#include "scalana/container_format.h"

#include <fstream>
#include <iterator>

namespace scalana::test {

Profile ReadProfileV3Min(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < container::kHeaderBytes || bytes.compare(0, 8, container::kMagic, 8) != 0)
    throw Error(path + ": not a format-3 profile");
  if (container::GetU32(b + 60) != container::Crc32(b, 60))
    throw Error(path + ": header crc mismatch");
  container::Header h;
  h.world_size = container::GetU64(b + 16);
  h.meta_offset = container::GetU64(b + 24);
  h.meta_length = container::GetU64(b + 32);
  h.index_offset = container::GetU64(b + 40);
  h.group_count = container::GetU64(b + 48);
  if (h.meta_offset + h.meta_length > bytes.size() ||
      h.index_offset + h.group_count * container::kIndexEntryBytes != bytes.size())
    throw Error(path + ": sections outside the file");
  std::vector<Profile> parts;
  uint64_t next_rank = 0;
  for (uint64_t g = 0; g < h.group_count; ++g) {
    container::GroupEntry e =
        container::DecodeGroupEntry(b + h.index_offset + g * container::kIndexEntryBytes);
    std::string where = path + ": group " + std::to_string(g);
    if (e.first_rank != next_rank)
      throw Error(where + ": first_rank " + std::to_string(e.first_rank) + ", expected " +
                  std::to_string(next_rank));
    next_rank = e.first_rank + e.rank_count;
    if (e.codec != container::Codec::JsonGzip)
      throw Error(where + ": codec " + std::to_string(uint32_t(e.codec)) + " not read here");
    if (e.offset + e.length > h.index_offset)
      throw Error(where + ": block outside the file");
    if (container::Crc32(bytes.data() + e.offset, e.length) != e.crc32)
      throw Error(where + ": block crc mismatch");
    Profile part = ProfileFromGzip(bytes.substr(e.offset, e.length), where);
    for (const RankData &r : part.ranks)
      if (uint64_t(r.rank) < e.first_rank || uint64_t(r.rank) >= next_rank)
        throw Error(where + ": rank " + std::to_string(r.rank) + " outside the group");
    parts.push_back(std::move(part));
  }
  if (next_rank != h.world_size)
    throw Error(path + ": groups cover " + std::to_string(next_rank) + " of " +
                std::to_string(h.world_size) + " ranks");
  return MergeProfiles(std::move(parts));
}

} // namespace scalana::test
