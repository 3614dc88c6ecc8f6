// Damaged and hostile format-3 files and blocks: each refused with a
// message naming the file and the part (docs/formats.md section 4.4).
#include "columns.h"
#include "compress.h"
#include "v3_helpers.h"

namespace scalana::test {
namespace {

using container::Codec;

struct File {
  TempDir dir;
  std::string path = dir / container::kFileName;
  std::string bytes;
  explicit File(Codec codec = Codec::Columns) {
    WriteProfileV3(path, RichProfile(8), 2, codec);
    bytes = ReadAll(path);
  }
  const unsigned char *u() const { return reinterpret_cast<const unsigned char *>(bytes.data()); }
  uint64_t IndexAt() const { return container::GetU64(u() + 40); }
  container::GroupEntry Entry(size_t k) const {
    return container::DecodeGroupEntry(u() + IndexAt() + k * container::kIndexEntryBytes);
  }
  void SetEntry(size_t k, const container::GroupEntry &e) {
    bytes.replace(size_t(IndexAt() + k * container::kIndexEntryBytes), container::kIndexEntryBytes,
                  container::EncodeGroupEntry(e));
  }
  // The header with field AT (a u64 at byte AT) set to V, crc made right.
  void SetHeader64(size_t at, uint64_t v) {
    auto *b = reinterpret_cast<unsigned char *>(bytes.data());
    container::PutU64(b + at, v);
    container::PutU32(b + 60, container::Crc32(b, 60));
  }
  std::string Error() {
    WriteFile(path, bytes);
    return ErrorOf([&] { ReadProfile(dir.path); });
  }
};

TEST(FormatV3Damage, IntactFileIsRead) {
  File f;
  EXPECT_EQ(f.Error(), "");
}

TEST(FormatV3Damage, WrongMagicVersionAndHeader) {
  {
    File f;
    f.bytes[7] = '4';
    EXPECT_HAS(f.Error(), "profile.scalana: not a ScalAna format-3 profile (no SCALANA3 magic");
  }
  {
    File f;
    auto *b = reinterpret_cast<unsigned char *>(f.bytes.data());
    container::PutU32(b + 8, 4);
    container::PutU32(b + 60, container::Crc32(b, 60));
    EXPECT_HAS(f.Error(),
               "profile.scalana: profile format version 4 is not supported (expected 3)");
  }
  {
    File f;
    f.bytes[20] ^= 1; // world_size
    EXPECT_HAS(f.Error(), "profile.scalana: header: crc mismatch: the file is damaged");
  }
  {
    File f;
    f.SetHeader64(16, 0);
    EXPECT_HAS(f.Error(), "header: world_size 0 is not 1 to 4194304");
  }
  {
    File f;
    f.SetHeader64(48, 9); // more groups than ranks
    EXPECT_HAS(f.Error(), "header: group_count 9 is more than the 8 ranks of the run");
  }
  {
    File f;
    f.SetHeader64(48, 5); // an index past the end of the file
    EXPECT_HAS(f.Error(), "header: the index (offset");
  }
  {
    File f;
    f.SetHeader64(24, ~uint64_t(0) - 8); // meta offset + length wraps around
    EXPECT_HAS(f.Error(), "header: the meta section (offset");
  }
}

TEST(FormatV3Damage, TruncatedFileAnywhere) {
  File whole;
  for (size_t cut : {size_t(0), size_t(10), size_t(63), size_t(64), size_t(100),
                     whole.bytes.size() / 2, whole.bytes.size() - 1}) {
    File f;
    f.bytes.resize(cut);
    std::string e = f.Error();
    SCOPED_TRACE(cut);
    EXPECT_HAS(e, "profile.scalana");
    EXPECT_TRUE(e.find("truncated") != std::string::npos ||
                e.find("does not lie inside the file") != std::string::npos ||
                e.find("empty file") != std::string::npos)
        << e;
  }
}

TEST(FormatV3Damage, FlippedByteInEveryBlockNamesItsGroup) {
  for (Codec codec : {Codec::Columns, Codec::JsonGzip})
    for (size_t k = 0; k < 4; ++k) {
      File f(codec);
      container::GroupEntry e = f.Entry(k);
      f.bytes[size_t(e.offset + e.length / 3)] ^= 0x01;
      EXPECT_HAS(f.Error(), "profile.scalana: group " + std::to_string(k) + " (ranks " +
                                std::to_string(2 * k) + "-" + std::to_string(2 * k + 1) +
                                "): block crc mismatch: the file is damaged");
    }
}

TEST(FormatV3Damage, FlippedByteInTheMeta) {
  File f;
  f.bytes[64 + 20] ^= 0x10;
  EXPECT_HAS(f.Error(), "profile.scalana: meta section: ");
}

TEST(FormatV3Damage, IndexEntriesChecked) {
  {
    File f;
    container::GroupEntry e = f.Entry(1);
    e.first_rank = 1; // overlaps group 0
    f.SetEntry(1, e);
    EXPECT_HAS(f.Error(), "index entry 1: ranks from 1 overlap or precede the group before");
  }
  {
    File f;
    container::GroupEntry e = f.Entry(3);
    e.rank_count = 3; // past the world
    f.SetEntry(3, e);
    EXPECT_HAS(f.Error(), "index entry 3: ranks 6 (3 of them) do not lie inside the world of 8");
  }
  {
    File f;
    container::GroupEntry e = f.Entry(2);
    e.codec = Codec(7);
    f.SetEntry(2, e);
    EXPECT_HAS(f.Error(), "index entry 2: unknown codec 7");
  }
  {
    File f;
    container::GroupEntry e = f.Entry(0);
    e.flags = 1;
    f.SetEntry(0, e);
    EXPECT_HAS(f.Error(), "index entry 0: flags 1 are not 0");
  }
  {
    File f;
    container::GroupEntry e = f.Entry(2);
    e.length = f.bytes.size();
    f.SetEntry(2, e);
    EXPECT_HAS(f.Error(), "index entry 2: the block (offset");
  }
  {
    File f;
    // Group 1's block named as ranks 4-5: it holds ranks 2 and 3.
    container::GroupEntry one = f.Entry(1), two = f.Entry(2);
    two.offset = one.offset;
    two.length = one.length;
    two.crc32 = one.crc32;
    f.SetEntry(2, two);
    EXPECT_HAS(f.Error(), "group 2 (ranks 4-5): holds rank 2, outside the group's ranks");
  }
}

// A columnar block of GROUP decoded against META: the message, "" if read.
std::string BlockError(const Profile &group, const ProfileMeta &meta) {
  return ErrorOf([&] {
    DecodeGroupBlock(EncodeGroupBlock(group, Codec::Columns), Codec::Columns, "blk", &meta);
  });
}

TEST(FormatV3Damage, ColumnsBlockContentChecked) {
  const Profile good = detail::GroupOf(RichProfile(8), 0, 4);
  EXPECT_EQ(BlockError(good, good.meta), "");
  auto with = [&](const std::function<void(Profile &)> &change) {
    Profile g = good;
    change(g);
    return BlockError(g, g.meta);
  };
  EXPECT_HAS(with([](Profile &g) { g.ranks[1].vertices[2].ctx = 999; }),
             "blk: rank 1: vertices[2] (context): context index 999 out of range");
  EXPECT_HAS(with([](Profile &g) { g.ranks[2].deps[1].peer = 8; }),
             "blk: rank 2: deps[1] (peer): 8 is not below meta.world_size 8");
  EXPECT_HAS(with([](Profile &g) { g.ranks[3].rank = 9; }),
             "blk: rank 9 (rank): 9 is not below meta.world_size 8");
  EXPECT_HAS(with([](Profile &g) { g.ranks[0].deps[0].comm = 77; }),
             "rank 0: deps[0] (communicator): communicator index 77 out of range");
  EXPECT_HAS(with([](Profile &g) { g.ranks[0].wall_time = 2e9; }),
             "rank 0 (wall_time): 2000000000000000000 ns is more than 10^9 s");
  EXPECT_HAS(with([](Profile &g) { g.ranks[0].thread_vertices[0].thread = 3; }),
             "rank 0: thread_vertices[0] (thread): names thread 3, which thread_info does not "
             "list");
  EXPECT_HAS(with([](Profile &g) { g.ranks[0].thread_info[1].index = 0; }),
             "rank 0: thread_info[1] (thread): names thread 0 twice");
  EXPECT_HAS(with([](Profile &g) {
               g.ranks[1].deps[1].seqs = {{0, 4}};
             }),
             "rank 1: deps[1] (message sequence ranges): not a range of message numbers");
  EXPECT_HAS(with([](Profile &g) {
               g.ranks[1].deps[1].seqs.assign(9, {1, 2});
             }),
             "has 9 ranges, at most 8 are written");
  EXPECT_HAS(with([](Profile &g) { g.ranks[1].vertices[0].counters.assign(3, 1.0); }),
             "rank 1: vertices[0] (counters): has 3 values for the 2 counters");
  EXPECT_HAS(with([](Profile &g) { g.ranks[1].samples = 1000000; }),
             "blk: rank 1.samples 1e+06 samples is more than the sampling rate allows");
  EXPECT_HAS(with([](Profile &g) {
               std::vector<int> m = g.comms[0].ToVector();
               m[0] = 9;
               g.comms[0] = m;
             }),
             "comms[0]: a run's first member is not a rank of the run (0 to 7)");
  EXPECT_HAS(with([](Profile &g) { g.contexts[0].push_back(WithFrameModule(1, 9)); }),
             "contexts[0][2] names module 9 but the block lists 2");
}

TEST(FormatV3Damage, ColumnsBlockTruncatedOrInflated) {
  const Profile good = detail::GroupOf(RichProfile(8), 0, 4);
  std::string raw = detail::Inflate(EncodeGroupBlock(good, Codec::Columns), "x");
  for (size_t cut : {size_t(1), size_t(2), raw.size() / 3, raw.size() - 1}) {
    std::string e = ErrorOf([&] {
      DecodeGroupBlock(detail::Deflate(raw.substr(0, cut)), Codec::Columns, "blk", &good.meta);
    });
    EXPECT_HAS(e, "blk");
    EXPECT_HAS(e, "truncated");
  }
  std::string e = ErrorOf(
      [&] { DecodeGroupBlock(detail::Deflate(raw + "x"), Codec::Columns, "blk", &good.meta); });
  EXPECT_HAS(e, "blk: 1 bytes left over after its values");
  // A bomb: 17 MiB of zeros in a few KB stops at the limit.
  std::string bomb = detail::Deflate(std::string(17 << 20, '\0'));
  EXPECT_HAS(ErrorOf([&] { DecodeGroupBlock(bomb, Codec::Columns, "blk"); }),
             "blk: inflates to more than 16 MiB");
  EXPECT_HAS(ErrorOf([&] { DecodeGroupBlock("not zlib", Codec::Columns, "blk"); }),
             "blk: corrupt compressed data");
  EXPECT_HAS(ErrorOf([&] { DecodeGroupBlock("\x1f\x8b", Codec::JsonGzip, "blk"); }), "blk: ");
}

TEST(FormatV3Damage, JsonBlockKeepsFormat2Checks) {
  Profile g = detail::GroupOf(RichProfile(8), 0, 2);
  g.ranks[1].deps[1].peer = 12;
  EXPECT_HAS(ErrorOf([&] {
               DecodeGroupBlock(EncodeGroupBlock(g, Codec::JsonGzip), Codec::JsonGzip, "blk");
             }),
             "blk: ranks[1].deps[1][2] (peer) 12 is not below meta.world_size 8");
}

} // namespace
} // namespace scalana::test

namespace scalana::test {
namespace {

TEST(FormatV3Damage, ColumnsStringsAreUtf8) {
  Profile g = detail::GroupOf(RichProfile(8), 0, 2);
  g.ranks[0].host = "n\xe9t"; // Latin-1, not UTF-8: format 2 could not hold it either
  EXPECT_HAS(ErrorOf([&] {
               DecodeGroupBlock(EncodeGroupBlock(g, container::Codec::Columns),
                                container::Codec::Columns, "blk", &g.meta);
             }),
             "blk: strings: a string: not UTF-8 text");
  g.ranks[0].host = "n\xc3\xa9t \xf0\x9f\x98\x80"; // UTF-8 is read back as is
  Profile back = DecodeGroupBlock(EncodeGroupBlock(g, container::Codec::Columns),
                                  container::Codec::Columns, "blk", &g.meta);
  EXPECT_EQ(back.ranks[0].host, g.ranks[0].host);
}

} // namespace
} // namespace scalana::test
