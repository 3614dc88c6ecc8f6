// The format-3 readers: a rank range reads only its groups, ReadProfile
// prefers profile.scalana and merges the per-rank files of ranks that ended
// early, and format 2 is read as before.
#include "v3_helpers.h"

namespace scalana::test {
namespace {

using container::Codec;

container::GroupEntry Entry(const std::string &file, size_t k) {
  std::string bytes = ReadAll(file);
  uint64_t index = container::GetU64(reinterpret_cast<const unsigned char *>(bytes.data()) + 40);
  return container::DecodeGroupEntry(reinterpret_cast<const unsigned char *>(bytes.data()) + index +
                                     k * container::kIndexEntryBytes);
}

void FlipByte(const std::string &file, uint64_t at) {
  std::string bytes = ReadAll(file);
  bytes[at] = char(bytes[at] ^ 0x20);
  WriteFile(file, bytes);
}

std::vector<int> RanksOf(const Profile &p) {
  std::vector<int> out;
  for (const RankData &r : p.ranks)
    out.push_back(r.rank);
  return out;
}

TEST(FormatV3Reader, RankRangeReadsOnlyItsGroups) {
  for (Codec codec : {Codec::Columns, Codec::JsonGzip}) {
    TempDir dir;
    const std::string file = dir / container::kFileName;
    WriteProfileV3(file, RichProfile(8), 2, codec);
    // Damage group 0: only reads that need it fail.
    container::GroupEntry e = Entry(file, 0);
    FlipByte(file, e.offset + e.length / 2);
    Profile p = ReadProfileRanks(file, 4, 5);
    EXPECT_EQ(RanksOf(p), (std::vector<int>{4, 5}));
    EXPECT_EQ(p.meta.run_id, "run-1");
    EXPECT_EQ(RanksOf(ReadProfileRanks(dir.path, 3, 4)), (std::vector<int>{3, 4}));
    EXPECT_HAS(ErrorOf([&] { ReadProfileRanks(file, 0, 2); }),
               "profile.scalana: group 0 (ranks 0-1): block crc mismatch: the file is damaged");
    EXPECT_HAS(ErrorOf([&] { ReadProfile(dir.path); }), "group 0 (ranks 0-1): block crc mismatch");
  }
}

TEST(FormatV3Reader, ReadProfilePrefersFormat3) {
  TempDir dir;
  Profile v3 = RichProfile(4), v2 = RichProfile(6);
  v3.meta.run_id = "three";
  v2.meta.run_id = "two";
  WriteProfileFile(v2, dir / "profile.json.gz");
  EXPECT_EQ(ReadProfile(dir.path).meta.run_id, "two"); // format 2 still read
  Profile parts_of_v2;
  int parts = 0;
  ReadProfileGroups(dir.path, [&](Profile &&p) {
    ++parts;
    parts_of_v2 = std::move(p);
  });
  EXPECT_EQ(parts, 1);
  EXPECT_EQ(parts_of_v2.ranks.size(), 6u);
  EXPECT_EQ(RanksOf(ReadProfileRanks(dir.path, 1, 2)), (std::vector<int>{1, 2}));

  WriteProfileV3(dir / container::kFileName, v3);
  Profile p = ReadProfile(dir.path);
  EXPECT_EQ(p.meta.run_id, "three");
  EXPECT_EQ(p.ranks.size(), 4u);
  // The file itself, named directly.
  EXPECT_EQ(ReadProfile(dir / container::kFileName).ranks.size(), 4u);
  EXPECT_TRUE(IsProfileV3File(dir / container::kFileName));
  EXPECT_FALSE(IsProfileV3File(dir / "profile.json.gz"));
}

// One rank's file as the runtime leaves it when the rank ends early.
void WriteRankFile(const TempDir &dir, const Profile &whole, int rank, const std::string &run) {
  Profile one = detail::GroupOf(whole, size_t(rank), size_t(rank) + 1);
  one.meta.complete = false;
  one.meta.run_id = run;
  WriteProfileFile(one, dir / ("rank-" + std::to_string(rank) + ".json.gz"));
}

TEST(FormatV3Reader, RanksThatEndedEarlyComeFromTheirFiles) {
  TempDir dir;
  Profile p = RichProfile(8, true);
  RoundTimesToNanos(p); // rank 5 comes back from format 2, the others from columns
  Profile finished = p;
  finished.ranks.erase(finished.ranks.begin() + 5); // rank 5 ended before MPI_Finalize
  WriteProfileV3(dir / container::kFileName, finished, 4);
  WriteRankFile(dir, p, 5, "run-1");
  // A rank file of a rank a group holds is superseded by the group.
  Profile other = p;
  other.ranks[2].host = "stale";
  WriteRankFile(dir, other, 2, "run-1");
  Profile back = ReadProfile(dir.path);
  EXPECT_EQ(RanksOf(back), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(back.ranks[2].host, "n0");
  EXPECT_FALSE(back.meta.complete);
  Profile expect = p;
  expect.meta.complete = false;
  EXPECT_EQ(Canonical(back), Canonical(expect));
  // A rank range takes only its rank files.
  EXPECT_EQ(RanksOf(ReadProfileRanks(dir.path, 5, 5)), (std::vector<int>{5}));
  EXPECT_EQ(RanksOf(ReadProfileRanks(dir.path, 6, 7)), (std::vector<int>{6, 7}));
  // A stale rank file of another run is refused, naming both runs.
  WriteRankFile(dir, p, 5, "run-0");
  EXPECT_HAS(ErrorOf([&] { ReadProfile(dir.path); }), "rank files of run run-0 beside");
}

TEST(FormatV3Reader, GroupsStreamOnePartEach) {
  TempDir dir;
  WriteProfileV3(dir / container::kFileName, RichProfile(10), 4);
  std::vector<size_t> sizes;
  ReadProfileGroups(dir / container::kFileName,
                    [&](Profile &&part) { sizes.push_back(part.ranks.size()); });
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 2}));
  std::string bytes = ReadAll(dir / container::kFileName);
  sizes.clear();
  ReadProfileGroupsFromBytes(bytes, "mem",
                             [&](Profile &&part) { sizes.push_back(part.ranks.size()); });
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 2}));
}

TEST(FormatV3Reader, SparseRanksLeaveTheirGroupsOut) {
  TempDir dir;
  Profile p = RichProfile(12);
  p.ranks.erase(p.ranks.begin() + 4, p.ranks.begin() + 8); // group 1 has no rank
  WriteProfileV3(dir / container::kFileName, p, 4);
  int parts = 0;
  ReadProfileGroups(dir / container::kFileName, [&](Profile &&) { ++parts; });
  EXPECT_EQ(parts, 2);
  EXPECT_EQ(ReadProfile(dir.path).ranks.size(), 8u);
}

} // namespace
} // namespace scalana::test
