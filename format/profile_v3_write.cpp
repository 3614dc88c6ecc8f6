// Writing format 3 (docs/formats.md section 4): the parts any writer
// encodes, and the single-process writer that lays them out as the
// collective writer does (header at 0, meta at 64, blocks in group order,
// index after the last block), for tests, benchmarks and tools.
#include "columns.h"
#include "compress.h"
#include "group_split.h"
#include "profile_internal.h"
#include "scalana/profile_v3.h"
#include "varint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace scalana {

std::string EncodeGroupBlock(const Profile &group, container::Codec codec) {
  switch (codec) {
  case container::Codec::JsonGzip:
    return detail::Gzip(ProfileToJson(group));
  case container::Codec::Columns:
    return detail::EncodeColumns(group);
  }
  throw Error("encoding a group: unknown codec " + std::to_string(uint32_t(codec)));
}

std::string EncodeMetaSection(const ProfileMeta &meta) {
  return detail::Gzip(detail::MetaSectionJson(meta));
}

void WriteProfileV3(const std::string &path, const Profile &p, uint32_t group_ranks,
                    container::Codec codec) {
  if (group_ranks == 0)
    throw Error(path + ": cannot write: a group must hold at least one rank");
  for (size_t i = 1; i < p.ranks.size(); ++i)
    if (p.ranks[i].rank <= p.ranks[i - 1].rank)
      throw Error(path + ": cannot write: ranks are not sorted and distinct");
  // The world: the meta's, or (unknown, 0) the ranks present.
  uint64_t world = p.meta.world_size > 0 ? uint64_t(p.meta.world_size) : 0;
  if (!p.ranks.empty())
    world = std::max(world, uint64_t(p.ranks.back().rank) + 1);
  if (world == 0 || world > uint64_t(kMaxWorldSize))
    throw Error(path + ": cannot write: a world of " + std::to_string(world) + " ranks (1 to " +
                std::to_string(kMaxWorldSize) + ")");

  std::string body = EncodeMetaSection(p.meta);
  container::Header h;
  h.world_size = world;
  h.meta_offset = container::kHeaderBytes;
  h.meta_length = body.size();
  std::string index;
  for (size_t begin = 0; begin < p.ranks.size();) {
    uint64_t first = uint64_t(p.ranks[begin].rank) / group_ranks * group_ranks;
    uint64_t count = std::min<uint64_t>(group_ranks, world - first);
    size_t end = begin;
    while (end < p.ranks.size() && uint64_t(p.ranks[end].rank) < first + count)
      ++end;
    std::string block = EncodeGroupBlock(detail::GroupOf(p, begin, end), codec);
    container::GroupEntry e;
    e.first_rank = first;
    e.rank_count = uint32_t(count);
    e.codec = codec;
    e.offset = container::kHeaderBytes + body.size();
    e.length = block.size();
    e.crc32 = container::Crc32(block.data(), block.size());
    index += container::EncodeGroupEntry(e);
    body += block;
    ++h.group_count;
    begin = end;
  }
  h.index_offset = container::kHeaderBytes + body.size();

  const std::string tmp = path + container::kPartialSuffix;
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  std::string header = container::EncodeHeader(h);
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(body.data(), 1, body.size(), f) == body.size() &&
            std::fwrite(index.data(), 1, index.size(), f) == index.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write: " + why);
  }
}

} // namespace scalana

namespace scalana {

void RoundTimesToNanos(Profile &p) {
  auto round = [](double &s) { s = double(detail::Nanos(s)) / 1e9; };
  for (RankData &r : p.ranks) {
    for (double *t : {&r.wall_time, &r.cpu_time, &r.sampling_blocked, &r.on_cpu, &r.run_delay})
      round(*t);
    for (VertexRow &v : r.vertices)
      round(v.cpu_seconds);
    for (MpiRow &m : r.mpi)
      round(m.seconds);
    for (DepRow &d : r.deps)
      round(d.wait_seconds);
    for (ThreadInfo &t : r.thread_info)
      for (double *x : {&t.cpu_seconds, &t.run_delay, &t.wall_seconds})
        round(*x);
    for (ThreadRow &t : r.thread_vertices)
      round(t.cpu_seconds);
    for (OmpRow &o : r.omp) {
      round(o.seconds);
      round(o.cpu_seconds);
    }
    for (OffCpuRow &o : r.off_cpu) {
      round(o.blocked);
      round(o.run_delay);
    }
  }
}

} // namespace scalana
