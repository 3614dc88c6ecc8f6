// Profile reader/writer: round trip, per-rank merge, and clear errors on
// missing, truncated and corrupt files.
#include "scalana/profile.h"
#include "scalana/sampling_checks.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace scalana;

namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/scalana-format-XXXXXX";
  return mkdtemp(tmpl);
}

Profile Sample(int rank, uint64_t extra_id) {
  Profile p;
  p.meta.world_size = 2;
  p.meta.binary = "/bin/app";
  p.meta.psg_id = "0x0123456789abcdef";
  p.meta.sampling.source = "papi:perf::TASK-CLOCK";
  p.meta.sampling.hz = 200;
  p.meta.sampling.counters = {"PAPI_TOT_INS"};
  p.meta.config["SCALANA_HZ"] = "200";
  p.contexts = {{0x8000000000100001ull, 0x8000000000200003ull}, {extra_id}};
  p.comms = {{0, 1}, {rank}};
  RankData r;
  r.rank = rank;
  r.host = "n01";
  r.pid = 42;
  r.samples = 10;
  r.errors["stack_truncated"] = 1;
  r.vertices.push_back({1, 7, 0.035, {123.0}});
  r.mpi.push_back({0, 3, 0.5, 96});
  r.deps.push_back({0, DepKind::Recv, 1 - rank, 5, 1, 3, 96, 0.25, {{1, 2}, {7, 7}}});
  p.ranks.push_back(r);
  return p;
}

void WriteRaw(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGz(const std::string &path, const std::string &text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
}

} // namespace

TEST(ProfileFormat, RoundTripKeepsEveryField) {
  std::string dir = TempDir();
  Profile p = Sample(1, 0x8000000000abc007ull);
  WriteProfileFile(p, dir + "/profile.json.gz");
  Profile q = ReadProfile(dir);
  EXPECT_EQ(q.meta.binary, "/bin/app");
  EXPECT_EQ(q.meta.sampling.source, "papi:perf::TASK-CLOCK");
  EXPECT_EQ(q.meta.config.at("SCALANA_HZ"), "200");
  ASSERT_EQ(q.contexts.size(), 2u);
  EXPECT_EQ(q.contexts[0][1], 0x8000000000200003ull);
  EXPECT_EQ(q.comms[1], std::vector<int>{1});
  ASSERT_EQ(q.ranks.size(), 1u);
  const RankData &r = q.ranks[0];
  EXPECT_EQ(r.errors.at("stack_truncated"), 1u);
  ASSERT_EQ(r.deps.size(), 1u);
  EXPECT_EQ(r.deps[0].kind, DepKind::Recv);
  EXPECT_EQ(r.deps[0].peer, 0);
  EXPECT_DOUBLE_EQ(r.deps[0].wait_seconds, 0.25);
  ASSERT_EQ(r.deps[0].seqs.size(), 2u);
  EXPECT_EQ(r.deps[0].seqs[1].first, 7u);
  EXPECT_EQ(r.deps[0].seqs[1].last, 7u);
  EXPECT_EQ(r.vertices[0].counters, std::vector<double>{123.0});
}

TEST(ProfileFormat, MergesPerRankFilesWithRemappedIndices) {
  std::string dir = TempDir();
  Profile a = Sample(0, 0x8000000000aaa001ull), b = Sample(1, 0x8000000000bbb001ull);
  a.meta.complete = b.meta.complete = false;
  WriteProfileFile(a, dir + "/rank-0.json.gz");
  WriteProfileFile(b, dir + "/rank-1.json.gz");
  Profile m = ReadProfile(dir);
  EXPECT_FALSE(m.meta.complete);
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(m.contexts.size(), 3u); // the shared context is deduplicated
  EXPECT_EQ(m.contexts[m.ranks[1].vertices[0].ctx][0], 0x8000000000bbb001ull);
  EXPECT_EQ(m.comms[m.ranks[1].deps[0].comm], std::vector<int>{1});
}

// Frames of shared objects carry their module (docs/formats.md section 3).
// Ranks may load libraries in different orders; the merge renumbers each
// rank's frames to one module list.
TEST(ProfileFormat, MergeRenumbersModulesOfEachRank) {
  const ModuleInfo lib_a{"/lib/liba.so", "aa", "0x1"}, lib_b{"/lib/libb.so", "bb", "0x2"};
  Profile a = Sample(0, WithFrameModule(0x1234, 1)), b = Sample(1, WithFrameModule(0x1234, 1));
  a.meta.modules = {lib_a, lib_b};
  b.meta.modules = {lib_b, lib_a};
  b.contexts.push_back({WithFrameModule(0x99, 2) | kFrameExact});
  b.ranks[0].vertices.push_back({2, 1, 0.005, {}});
  Profile m = MergeProfiles(
      {ProfileFromJson(ProfileToJson(a), "a"), ProfileFromJson(ProfileToJson(b), "b")});
  ASSERT_EQ(m.meta.modules.size(), 2u);
  EXPECT_EQ(m.meta.modules[0], lib_a);
  EXPECT_EQ(m.meta.modules[1], lib_b);
  const Context &from_a = m.contexts[m.ranks[0].vertices[0].ctx];
  const Context &from_b = m.contexts[m.ranks[1].vertices[0].ctx];
  EXPECT_EQ(FrameModule(from_a[0]), 1u); // liba
  EXPECT_EQ(FrameModule(from_b[0]), 2u); // libb: b's module 1
  EXPECT_EQ(from_b[0] & kFrameOffsetMask, 0x1234u);
  const Context &b_exact = m.contexts[m.ranks[1].vertices[1].ctx];
  EXPECT_EQ(FrameModule(b_exact[0]), 1u); // liba: b's module 2
  EXPECT_TRUE(b_exact[0] & kFrameExact);
}

TEST(ProfileFormat, FrameOfAnUnlistedModuleIsAnError) {
  Profile p = Sample(0, WithFrameModule(0x10, 2));
  p.meta.modules = {{"/lib/liba.so", "aa", "0x1"}};
  try {
    ProfileFromJson(ProfileToJson(p), "p.json");
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("contexts[1][0] names module 2 but meta.modules lists 1"),
              std::string::npos)
        << e.what();
  }
  p.meta.modules.push_back({"/lib/libb.so", "bb", "0x2"});
  Profile q = ProfileFromJson(ProfileToJson(p), "p.json");
  EXPECT_EQ(q.meta.modules[1].path, "/lib/libb.so");
}

TEST(ProfileFormat, MissingRunDirectoryNamesIt) {
  try {
    ReadProfile("/nonexistent/run");
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/run: no such run directory"),
              std::string::npos);
  }
}

TEST(ProfileFormat, EmptyRunDirectoryIsAnError) {
  std::string dir = TempDir();
  EXPECT_THROW(ReadProfile(dir), Error);
}

TEST(ProfileFormat, TruncatedFileIsReportedAsCorrupt) {
  std::string dir = TempDir();
  WriteProfileFile(Sample(0, 0x8aaa000000000001ull), dir + "/profile.json.gz");
  std::ifstream in(dir + "/profile.json.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  WriteRaw(dir + "/profile.json.gz", bytes.substr(0, bytes.size() / 2));
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("profile.json.gz"), std::string::npos) << e.what();
  }
}

TEST(ProfileFormat, BadJsonAndWrongSchemaAreErrors) {
  std::string dir = TempDir();
  WriteGz(dir + "/profile.json.gz", "{\"format\": \"scalana-profile\", ");
  EXPECT_THROW(ReadProfile(dir), Error);
  WriteGz(dir + "/profile.json.gz", "{\"format\": \"other\"}");
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("not a ScalAna profile"), std::string::npos);
  }
  WriteGz(dir + "/profile.json.gz",
          R"({"format":"scalana-profile","version":2,"meta":{},"contexts":[],"comms":[],)"
          R"("ranks":[{"rank":0,"vertices":[[5,1,0.1,[]]],"mpi":[],"deps":[]}]})");
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("context index 5 out of range"), std::string::npos);
  }
  // Version 1 held instrumentation ids, which no reader can map any more.
  WriteGz(dir + "/profile.json.gz",
          R"({"format":"scalana-profile","version":1,"meta":{},"contexts":[],"comms":[],)"
          R"("ranks":[]})");
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("version 1 is not supported"), std::string::npos);
  }
  // A sequence range that runs backwards cannot pair messages.
  WriteGz(dir + "/profile.json.gz",
          R"({"format":"scalana-profile","version":2,"meta":{"world_size":2},"contexts":[[]],)"
          R"("comms":[[0,1]],"ranks":[{"rank":0,"vertices":[],"mpi":[],)"
          R"("deps":[[0,"send",1,5,0,1,8,0.0,[[4,2]]]]}]})");
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("not a range of message numbers"), std::string::npos)
        << e.what();
  }
}

TEST(ProfileFormat, ParseIdRejectsGarbage) {
  EXPECT_EQ(ParseId("0x8000000000000001"), 0x8000000000000001ull);
  EXPECT_THROW(ParseId("12"), Error);
  EXPECT_THROW(ParseId("0xzz"), Error);
}

// How ranks of an incomplete run ended: the optional fields survive the
// round trip, and the reports name every rank with its reason.
TEST(ProfileFormat, RankEndingsRoundTripAndAreDescribed) {
  std::string dir = TempDir();
  Profile p = Sample(0, 0x1234);
  p.meta.world_size = 6;
  p.meta.complete = false;
  RankData base = p.ranks[0];
  p.ranks.clear();
  auto add = [&](int rank, const char *why, int sig, bool snapshot) {
    RankData r = base;
    r.rank = rank;
    r.deps.clear();
    r.wall_time = 3.04;
    if (why)
      r.errors[std::string("ended_by_") + why] = 1;
    r.end_signal = sig;
    r.snapshot = snapshot;
    p.ranks.push_back(r);
  };
  add(0, "signal_term", 15, false);
  add(1, "MPI_Abort", 0, false);
  add(2, "signal_term", 15, true); // premade: last snapshot plus the reason
  add(3, nullptr, 0, true);        // killed: its last snapshot
  add(4, "signal_fatal", 11, false);
  WriteProfileFile(p, dir + "/x.json.gz");
  Profile q = ReadProfileFile(dir + "/x.json.gz");
  ASSERT_EQ(q.ranks.size(), 5u);
  EXPECT_EQ(q.ranks[0].end_signal, 15);
  EXPECT_FALSE(q.ranks[0].snapshot);
  EXPECT_TRUE(q.ranks[2].snapshot);
  EXPECT_TRUE(q.ranks[3].snapshot);
  EXPECT_EQ(q.ranks[3].end_signal, 0);
  EXPECT_EQ(DescribeRankEnd(q.ranks[1]), "called MPI_Abort");
  EXPECT_EQ(DescribeRankEnd(q.ranks[4]), "fatal signal SIGSEGV");
  EXPECT_NE(DescribeRankEnd(q.ranks[2]).find("SIGTERM"), std::string::npos);
  EXPECT_NE(DescribeRankEnd(q.ranks[2]).find("last periodic snapshot, 3.0 s"), std::string::npos);
  EXPECT_NE(DescribeRankEnd(q.ranks[3]).find("no end recorded"), std::string::npos);
  std::vector<std::string> lines = DescribeRankEnds(q);
  std::string all;
  for (const std::string &l : lines)
    all += l + "\n";
  EXPECT_NE(all.find("rank 1 ended before MPI_Finalize: called MPI_Abort"), std::string::npos)
      << all;
  EXPECT_NE(all.find("rank 0 ended before MPI_Finalize: SIGTERM"), std::string::npos) << all;
  EXPECT_NE(all.find("rank 3 ended before MPI_Finalize: no end recorded"), std::string::npos)
      << all;
  EXPECT_NE(all.find("rank 5 left no data"), std::string::npos) << all;
  // Files without the optional fields (a complete profile) read as before.
  Profile whole = Sample(0, 1);
  WriteProfileFile(whole, dir + "/w.json.gz");
  Profile w = ReadProfileFile(dir + "/w.json.gz");
  EXPECT_FALSE(w.ranks[0].snapshot);
  EXPECT_EQ(w.ranks[0].end_signal, 0);
  EXPECT_TRUE(DescribeRankEnd(w.ranks[0]).empty());
  std::string cmd = "rm -rf " + dir;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(ProfileFormat, RankListsUseRanges) {
  Profile p;
  p.meta.world_size = 40;
  for (int r = 0; r < 30; ++r) {
    RankData d;
    d.rank = r;
    if (r != 7)
      d.errors["ended_by_signal_term"] = 1;
    p.ranks.push_back(d);
  }
  std::vector<std::string> lines = DescribeRankEnds(p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("ranks 0-6,8-29 ended before MPI_Finalize: SIGTERM or SIGINT", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("ranks 30-39 left no data", 0), 0u) << lines[1];
}

// Rows merged offline (two raw contexts of one PSG context) keep the numbers
// of both: the union, disjoint and sorted, at most kMaxSeqRanges ranges.
TEST(ProfileFormat, SequenceRangesMergeAsUnions) {
  SeqList a{{1, 3}, {10, 10}}, b{{4, 6}, {8, 9}};
  MergeSeqRanges(a, b); // 1-6 touch; 7 was neither row's
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].first, 1u);
  EXPECT_EQ(a[0].last, 6u);
  EXPECT_EQ(a[1].first, 8u);
  EXPECT_EQ(a[1].last, 10u);
  SeqList many, more;
  for (uint64_t k = 0; k < 6; ++k) {
    many.push_back({100 * k + 1, 100 * k + 1});
    more.push_back({100 * k + 50, 100 * k + 50});
  }
  MergeSeqRanges(many, more);
  ASSERT_EQ(many.size(), kMaxSeqRanges);
  for (size_t i = 1; i < many.size(); ++i)
    EXPECT_GT(many[i].first, many[i - 1].last + 1) << "disjoint and sorted";
  EXPECT_EQ(many.front().first, 1u);
  EXPECT_EQ(many.back().last, 550u);
}

// A row's ranges: the first inline, then all on the heap; copies and moves
// keep every range whichever way they are held.
TEST(ProfileFormat, SeqListKeepsItsRangesInlineAndOnTheHeap) {
  SeqList one{{1, 5}};
  SeqList copy = one;
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].last, 5u);
  one.push_back({7, 9});
  one.push_back({11, 11});
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0].first, 1u);
  EXPECT_EQ(one[1].first, 7u);
  EXPECT_EQ(one.back().last, 11u);
  SeqList moved = std::move(one);
  ASSERT_EQ(moved.size(), 3u);
  EXPECT_EQ(moved[2].first, 11u);
  std::vector<SeqRange> seen(moved.begin(), moved.end());
  EXPECT_EQ(seen.size(), 3u);
  moved.assign(2, SeqRange{4, 4});
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[1].last, 4u);
  moved.clear();
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(moved.begin(), moved.end());
  EXPECT_EQ(copy.size(), 1u) << "the copy did not share storage";
}

// The thread dimension (docs/formats.md section 3, "Threads") is optional:
// it round-trips, merges with remapped contexts, and a row naming a thread
// thread_info does not list is an error.
// A thread's own samples and CPU time travel in its thread_info row; rows of
// the form before (index and OpenMP number only) still read, others do not.
TEST(ProfileFormat, ThreadSamplesAndCpuRoundTripAndOldRowsRead) {
  std::string dir = TempDir();
  Profile a = Sample(0, 0x8000000000aaa001ull);
  a.ranks[0].thread_info = {{0, 0, 214, 0.71}, {3, 1, 10, 0.22, 0.125, 0.9}};
  a.ranks[0].on_cpu = 0.7, a.ranks[0].run_delay = 0.3, a.ranks[0].cores = 2;
  WriteProfileFile(a, dir + "/rank-0.json.gz");
  Profile m = ReadProfile(dir);
  ASSERT_EQ(m.ranks[0].thread_info.size(), 2u);
  EXPECT_EQ(m.ranks[0].thread_info[1].samples, 10u);
  EXPECT_DOUBLE_EQ(m.ranks[0].thread_info[1].cpu_seconds, 0.22);
  // The time accounting (docs/formats.md section 3) travels too.
  EXPECT_DOUBLE_EQ(m.ranks[0].thread_info[1].run_delay, 0.125);
  EXPECT_DOUBLE_EQ(m.ranks[0].thread_info[1].wall_seconds, 0.9);
  EXPECT_DOUBLE_EQ(m.ranks[0].on_cpu, 0.7);
  EXPECT_DOUBLE_EQ(m.ranks[0].run_delay, 0.3);
  EXPECT_EQ(m.ranks[0].cores, 2);

  std::string old = TempDir();
  WriteGz(
      old + "/profile.json.gz",
      R"({"format":"scalana-profile","version":2,"meta":{},"contexts":[[]],"comms":[],)"
      R"("ranks":[{"rank":0,"vertices":[],"mpi":[],"deps":[],"thread_info":[[0,0],[1,1,3,0.5]]}]})");
  Profile o = ReadProfile(old);
  ASSERT_EQ(o.ranks[0].thread_info.size(), 2u);
  EXPECT_EQ(o.ranks[0].thread_info[0].samples, 0u);
  EXPECT_EQ(o.ranks[0].thread_info[0].cpu_seconds, 0.0);
  EXPECT_EQ(o.ranks[0].thread_info[1].samples, 3u);
  EXPECT_EQ(o.ranks[0].thread_info[1].run_delay, 0.0); // not measured
  EXPECT_EQ(o.ranks[0].on_cpu, 0.0);

  WriteGz(old + "/profile.json.gz",
          R"({"format":"scalana-profile","version":2,"meta":{},"contexts":[[]],"comms":[],)"
          R"("ranks":[{"rank":0,"vertices":[],"mpi":[],"deps":[],"thread_info":[[0,0,5]]}]})");
  try {
    ReadProfile(old);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("has 3 elements, expected 2, 4 or 6"), std::string::npos)
        << e.what();
  }
}

// A thread the CPU-time timer seldom caught is named, with its figures; one
// sampled at its rank's pace, or one whose CPU time was not measured, is not.
TEST(SamplingChecks, NamesAThreadSampledFarBelowItsRank) {
  Profile p = Sample(0, 0x8000000000aaa001ull);
  p.meta.sampling.hz = 1000;
  p.ranks[0].rank = 5;
  p.ranks[0].thread_info = {{0, 0, 214, 0.71}, {3, 1, 10, 0.22}};
  std::string w = UndersampledThreadsWarning(p);
  EXPECT_NE(w.find("1 thread sampled far below its rank's best-sampled thread"), std::string::npos)
      << w;
  EXPECT_NE(w.find("rank 5 thread 3, 10 samples over 0.22 CPU s, 45 Hz against 301 Hz"),
            std::string::npos)
      << w;
  p.ranks[0].thread_info[1].samples = 55; // 250 Hz: the rank's pace
  EXPECT_EQ(UndersampledThreadsWarning(p), "");
  p.ranks[0].thread_info[1] = {3, 1, 0, 0.0}; // not measured (older file)
  EXPECT_EQ(UndersampledThreadsWarning(p), "");
  p.ranks[0].thread_info[1] = {3, 1, 0, 0.02}; // too little CPU to judge
  EXPECT_EQ(UndersampledThreadsWarning(p), "");
}

// The rate obtained counts the CPU time the process's clock measured, not
// the samples' own time: a perf source that stopped after a fifth of the run
// reads as a fifth of the asked rate, and the rank and thread are named; a
// timer capped at the tick is held to the best rate obtained, not to the
// asked one.
TEST(SamplingChecks, RateObtainedIsSamplesOverTheProcessCpuTime) {
  Profile p = Sample(0, 0x8000000000aaa001ull);
  p.meta.sampling.hz = 1000;
  p.meta.sampling.source = "perf-task-clock";
  p.ranks[0].rank = 3;
  p.ranks[0].samples = 200;
  p.ranks[0].cpu_time = 1.0;
  p.ranks[0].thread_info = {{0, -1, 200, 1.0}};
  EXPECT_NEAR(ObtainedRate(p), 200, 1e-9);
  std::string w = BelowAskedRateWarning(p);
  EXPECT_NE(w.find("1 rank and 1 thread sampled at under half the 1000 Hz asked (the worst: "
                   "rank 3, 200 samples over 1.00 CPU s, 200 Hz)"),
            std::string::npos)
      << w;
  // Time the program had the signal blocked could have no samples.
  p.ranks[0].sampling_blocked = 0.8;
  EXPECT_NEAR(ObtainedRate(p), 1000, 1e-9);
  p.ranks[0].sampling_blocked = 0;
  p.ranks[0].thread_info[0].samples = 960;
  p.ranks[0].samples = 960;
  EXPECT_EQ(BelowAskedRateWarning(p), "");
  // Short threads the list leaves out still count: the process's clock.
  p.ranks[0].cpu_time = 4.0;
  EXPECT_NEAR(ObtainedRate(p), 240, 1e-9);
  EXPECT_NE(BelowAskedRateWarning(p).find("1 rank sampled at under half"), std::string::npos);
  // No process clock (an older file): the threads listed.
  p.ranks[0].cpu_time = 0;
  EXPECT_NEAR(ObtainedRate(p), 960, 1e-9);
  // The timer: 250 Hz is the tick, not a shortfall; a thread at 70 Hz is.
  p.meta.sampling.source = "cpu-timer";
  p.ranks[0].cpu_time = 1.5;
  p.ranks[0].thread_info = {{0, -1, 250, 1.0}, {1, -1, 35, 0.5}}; // 70 Hz: past the warning above
  p.ranks[0].samples = 285;
  w = BelowAskedRateWarning(p);
  EXPECT_NE(w.find("1 thread sampled at under half the 250 Hz the run's best obtained (the worst: "
                   "rank 3 thread 1"),
            std::string::npos)
      << w;
  p.ranks[0].thread_info[1].samples = 120;
  p.ranks[0].samples = 370;
  EXPECT_EQ(BelowAskedRateWarning(p), "");
}

TEST(ProfileFormat, ThreadRowsRoundTripMergeAndAreChecked) {
  std::string dir = TempDir();
  Profile a = Sample(0, 0x8000000000aaa001ull), b = Sample(1, 0x8000000000bbb001ull);
  a.meta.complete = b.meta.complete = false;
  b.ranks[0].thread_info = {{0, 0}, {3, 1}};
  b.ranks[0].thread_vertices = {{1, 0, 4, 0.02}, {1, 3, 9, 0.045}};
  b.ranks[0].omp = {{0, 3, "barrier", 20, 1.5, 2, 0.01, 0}, {1, 0, "loop", 20, 0.4, 0, 0, 4000}};
  WriteProfileFile(a, dir + "/rank-0.json.gz");
  WriteProfileFile(b, dir + "/rank-1.json.gz");
  Profile m = ReadProfile(dir);
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_TRUE(m.ranks[0].thread_info.empty()); // older writers: none
  const RankData &r = m.ranks[1];
  ASSERT_EQ(r.thread_info.size(), 2u);
  EXPECT_EQ(r.thread_info[1].index, 3u);
  EXPECT_EQ(r.thread_info[1].omp_thread, 1);
  ASSERT_EQ(r.thread_vertices.size(), 2u);
  EXPECT_EQ(m.contexts[r.thread_vertices[1].ctx][0], 0x8000000000bbb001ull);
  EXPECT_EQ(r.thread_vertices[1].samples, 9u);
  ASSERT_EQ(r.omp.size(), 2u);
  EXPECT_EQ(r.omp[0].kind, "barrier");
  EXPECT_DOUBLE_EQ(r.omp[0].seconds, 1.5);
  EXPECT_EQ(r.omp[1].iterations, 4000u);
  EXPECT_EQ(m.contexts[r.omp[1].ctx][0], 0x8000000000bbb001ull);
  EXPECT_TRUE(IsOmpWait(r.omp[0].kind));
  EXPECT_FALSE(IsOmpWait(r.omp[1].kind));

  WriteGz(dir + "/profile.json.gz",
          R"({"format":"scalana-profile","version":2,"meta":{},"contexts":[[]],"comms":[],)"
          R"("ranks":[{"rank":0,"vertices":[],"mpi":[],"deps":[],"thread_info":[[0,0]],)"
          R"("thread_vertices":[[0,2,1,0.1]]}]})");
  try {
    ReadProfile(dir);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("names thread 2, which thread_info does not list"),
              std::string::npos)
        << e.what();
  }
}
