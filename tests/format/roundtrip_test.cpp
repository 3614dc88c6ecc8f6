// Format 3 round trips: a group block through both codecs, whole files
// through the writer and ReadProfile, of synthetic profiles carrying
// everything format 2 does and of the real profiles of the fuzz seeds.
#include "columns.h"
#include "compress.h"
#include "v3_helpers.h"

#include <dirent.h>

#include <cmath>

namespace scalana::test {
namespace {

using container::Codec;

TEST(FormatV3, ColumnsBlockRoundTripIsExact) {
  Profile g = detail::GroupOf(RichProfile(8, true), 0, 8);
  RoundTimesToNanos(g);
  Profile back =
      DecodeGroupBlock(EncodeGroupBlock(g, Codec::Columns), Codec::Columns, "block", &g.meta);
  EXPECT_EQ(ProfileToJson(back), ProfileToJson(g));
  // What the rich profile holds did arrive: threads, OpenMP, ranges, ends.
  ASSERT_EQ(back.ranks.size(), 8u);
  EXPECT_EQ(back.ranks[3].thread_info.size(), 3u);
  EXPECT_EQ(back.ranks[3].omp[0].kind, "barrier");
  ASSERT_EQ(back.ranks[3].off_cpu.size(), 3u);
  EXPECT_EQ(back.ranks[3].off_cpu[2].thread, 5u);
  ASSERT_EQ(back.ranks[2].off_cpu.size(), 1u);
  EXPECT_EQ(back.ranks[2].off_cpu[0].switches, 20u);
  EXPECT_EQ(back.ranks[3].snapshot, true);
  EXPECT_EQ(back.ranks[3].end_signal, 9);
  EXPECT_EQ(back.ranks[2].deps[2].seqs.size(), 2u);
  EXPECT_EQ(back.ranks[2].deps[3].peer, -7);
  EXPECT_EQ(back.ranks[0].mpi[0].op, "MPI_Allreduce");
  EXPECT_EQ(back.ranks[0].vertices[8].counters[1], 0.5);
  EXPECT_EQ(back.meta.modules.size(), 2u); // the unused library is not in the group
}

TEST(FormatV3, JsonBlockRoundTripIsExact) {
  Profile g = detail::GroupOf(RichProfile(6, true), 2, 5);
  Profile back = DecodeGroupBlock(EncodeGroupBlock(g, Codec::JsonGzip), Codec::JsonGzip, "block");
  EXPECT_EQ(ProfileToJson(back), ProfileToJson(g));
}

TEST(FormatV3, TimesKeepOneNanosecond) {
  Profile g = detail::GroupOf(RichProfile(4), 0, 4);
  Profile back = DecodeGroupBlock(EncodeGroupBlock(g, Codec::Columns), Codec::Columns, "b");
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    EXPECT_NEAR(back.ranks[i].wall_time, g.ranks[i].wall_time, 1e-9);
    EXPECT_NE(back.ranks[i].wall_time, 0);
    for (size_t k = 0; k < g.ranks[i].vertices.size(); ++k)
      EXPECT_NEAR(back.ranks[i].vertices[k].cpu_seconds, g.ranks[i].vertices[k].cpu_seconds, 1e-9);
    EXPECT_EQ(back.ranks[i].vertices[0].samples, g.ranks[i].vertices[0].samples);
  }
}

TEST(FormatV3, WorldCommunicatorCostsAFewBytes) {
  Profile g = detail::GroupOf(RichProfile(4), 0, 1);
  std::string small = EncodeGroupBlock(g, Codec::Columns);
  std::vector<int> world(1 << 20);
  for (size_t r = 0; r < world.size(); ++r)
    world[r] = int(r);
  g.comms.push_back(world);
  std::string big = EncodeGroupBlock(g, Codec::Columns);
  EXPECT_LT(big.size(), small.size() + 16);
  Profile back = DecodeGroupBlock(big, Codec::Columns, "b");
  EXPECT_EQ(back.comms.back(), world);
}

// Every way to write P gives back P from ReadProfile (times to 1 ns).
void ExpectFileRoundTrip(const Profile &p, const std::string &what) {
  for (Codec codec : {Codec::Columns, Codec::JsonGzip})
    for (uint32_t group : {1u, 3u, 128u}) {
      SCOPED_TRACE(what + " codec " + std::to_string(int(codec)) + " group " +
                   std::to_string(group));
      TempDir dir;
      WriteProfileV3(dir / container::kFileName, p, group, codec);
      EXPECT_FALSE(std::filesystem::exists(dir / "profile.scalana.partial"));
      Profile expect = p;
      if (codec == Codec::Columns)
        RoundTimesToNanos(expect);
      Profile back = ReadProfile(dir.path);
      EXPECT_EQ(Canonical(back), Canonical(expect));
      EXPECT_EQ(back.meta.modules.size() <= p.meta.modules.size(), true);
    }
}

TEST(FormatV3, SyntheticProfilesRoundTripThroughFiles) {
  ExpectFileRoundTrip(RichProfile(8), "rich");
  ExpectFileRoundTrip(RichProfile(7, true), "ended");
}

TEST(FormatV3, RealProfilesRoundTripThroughFiles) {
  DIR *d = opendir(SCALANA_PROFILE_SEEDS);
  ASSERT_NE(d, nullptr);
  int n = 0;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name, path = std::string(SCALANA_PROFILE_SEEDS) + "/" + name;
    Profile p;
    if (name.size() > 8 && name.substr(name.size() - 8) == ".json.gz")
      p = ReadProfileFile(path);
    else if (name.size() > 5 && name.substr(name.size() - 5) == ".json")
      p = ProfileFromJson(ReadAll(path), path);
    else
      continue;
    ASSERT_FALSE(p.ranks.empty()) << name;
    ExpectFileRoundTrip(p, name);
    ++n;
  }
  closedir(d);
  EXPECT_GE(n, 4);
}

TEST(FormatV3, GroupsCarryTheMetaAndOnlyTheirTables) {
  TempDir dir;
  Profile p = RichProfile(8);
  WriteProfileV3(dir / container::kFileName, p, 3);
  std::vector<std::vector<int>> ranks;
  ReadProfileGroups(dir.path, [&](Profile &&part) {
    EXPECT_EQ(part.meta.run_id, "run-1");
    EXPECT_EQ(part.meta.world_size, 8);
    EXPECT_EQ(part.meta.sampling.counters.size(), 2u);
    EXPECT_LT(part.contexts.size(), p.contexts.size() + 1);
    for (const ModuleInfo &m : part.meta.modules)
      EXPECT_NE(m.path, "/abs/libunused.so");
    ranks.emplace_back();
    for (const RankData &r : part.ranks)
      ranks.back().push_back(r.rank);
  });
  EXPECT_EQ(ranks, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7}}));
}

TEST(FormatV3, MetaSectionRoundTripLeavesModulesOut) {
  ProfileMeta m = RichProfile(4).meta;
  ProfileMeta back = DecodeMetaSection(EncodeMetaSection(m), "meta");
  EXPECT_TRUE(back.modules.empty());
  m.modules.clear();
  Profile a, b;
  a.meta = m;
  b.meta = back;
  EXPECT_EQ(ProfileToJson(a), ProfileToJson(b));
}

} // namespace
} // namespace scalana::test
