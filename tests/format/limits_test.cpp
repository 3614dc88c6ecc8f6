// Impossible numbers in files whose checksums are right (format/
// rank_limits.cpp; docs/formats.md section 3, "Numbers against each
// other"): each kind refused by every reader path (format 3 of both codecs,
// profile.json.gz, per-rank files), the message naming the file, the rank,
// the field, the value and the bound.
#include "v3_helpers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace scalana {
namespace {

using namespace test;
using container::Codec;

constexpr int kRanks = 8, kLiar = 5; // the lie is in rank 5's data
constexpr uint64_t kMax64 = UINT64_MAX;

// The current time as meta.start_time writes it.
std::string StartedNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// One impossible number: how to put it in a profile, and what the refusal
// must say beside the file and the rank.
struct Lie {
  const char *name;
  std::function<void(Profile &, RankData &)> edit;
  std::vector<std::string> says;
  bool names_rank = true; // false: a number of the run, not of one rank
};

std::vector<Lie> Lies() {
  return {
      {"rank wall time 1e8 s in a 12.5 s run",
       [](Profile &, RankData &r) { r.wall_time = 1e8; },
       {"wall_time 1e+08 s is longer than the run ran (meta.wall_time 12.5 s", "at most 73.75 s"}},
      {"run wall time 1e8 s, every rank too, started now",
       [](Profile &p, RankData &) {
         p.meta.start_time = StartedNow();
         p.meta.wall_time = 1e8;
         for (RankData &x : p.ranks)
           x.wall_time = 1e8;
       },
       {"meta.wall_time 1e+08 s from meta.start_time", "ends after the time it is read",
        "at most 864"},
       false},
      {"CPU time 1e8 s",
       [](Profile &, RankData &r) { r.cpu_time = 1e8; },
       {"cpu_time 1e+08 s of CPU time is more than its threads could use",
        "at most 1.1 x (12.1235 s + 1 s) x 1 thread(s) = 14.4358 s"}},
      {"CPU time beyond wall time x threads, just",
       [](Profile &, RankData &r) { r.cpu_time = 15; },
       {"cpu_time 15 s of CPU time"}},
      {"sampling blocked 1e8 s",
       [](Profile &, RankData &r) { r.sampling_blocked = 1e8; },
       {"sampling_blocked 1e+08 s"}},
      {"calls 2^64-1",
       [](Profile &, RankData &r) { r.mpi[0].calls = kMax64; },
       {"mpi[0][1] (calls, with the rows before it) 1.84467e+19 MPI calls is more than the rank "
        "could make",
        "one per 10 ns of each thread's wall time"}},
      {"messages 2^64-1",
       [](Profile &, RankData &r) { r.deps[0].count = kMax64; },
       {"deps[0][5] (count, with the rows before it) 1.84467e+19 messages and calls"}},
      {"message number 2^63",
       [](Profile &, RankData &r) {
         r.deps[1].seqs = {{1, uint64_t(1) << 63}};
       },
       {"deps[1][8] (message sequence ranges) 9.22337e+18 messages on one channel"}},
      {"bytes 2^64-1",
       [](Profile &, RankData &r) { r.mpi[0].bytes = kMax64; },
       {"mpi[0][3] (bytes) 1.84467e+19 bytes is more than 100 call(s) can move",
        "at most 1.1259e+15 bytes a call x (100 + 1)"}},
      {"dependence bytes 2^64-1",
       [](Profile &, RankData &r) { r.deps[2].bytes = kMax64; },
       {"deps[2][6] (bytes) 1.84467e+19 bytes"}},
      {"MPI time 1e8 s",
       [](Profile &, RankData &r) { r.mpi[1].seconds = 1e8; },
       {"mpi[1][2] (seconds, with the rows before it) 1e+08 s in MPI calls is more than the rank "
        "ran"}},
      {"wait 1e8 s",
       [](Profile &, RankData &r) { r.deps[2].wait_seconds = 1e8; },
       {"deps[2][7] (wait seconds, with the rows before it) 1e+08 s of waiting"}},
      {"vertex CPU time 1e8 s",
       [](Profile &, RankData &r) { r.vertices[3].cpu_seconds = 1e8; },
       {"vertices[3][2] (cpu seconds, with the rows before it) 1e+08 s of CPU time is more than "
        "the rank's cpu_time allows"}},
      {"samples beyond the rate",
       [](Profile &, RankData &r) { r.samples_dropped = 1u << 20; },
       {"samples_dropped 1.04858e+06 samples is more than the sampling rate allows (200 Hz x "
        "10.505 s of CPU time)"}},
      {"an event count 2^64-1",
       [](Profile &, RankData &r) { r.errors["stack_truncated"] = kMax64; },
       {"errors.stack_truncated 1.84467e+19 events"}},
  };
}

// A rank with threads (rank 3 of RichProfile has 4, and OpenMP rows).
std::vector<Lie> ThreadLies() {
  return {
      {"thread CPU time 1e8 s",
       [](Profile &, RankData &r) { r.thread_info[1].cpu_seconds = 1e8; },
       {"thread_info[1][3] (cpu seconds, with the rows before it) 1e+08 s"}},
      {"one thread's CPU time past the wall time",
       [](Profile &, RankData &r) {
         r.cpu_time = 40; // 4 threads: the rank's CPU time allows it
         r.thread_info[1].cpu_seconds = 15;
       },
       {"thread_info[1][3] (CPU seconds) 15 s of CPU time is more than one thread ran",
        "at most 1.1 x (12.1235 s + 1 s) = 14.4358 s"}},
      {"OpenMP time 1e8 s",
       [](Profile &, RankData &r) { r.omp[1].seconds = 1e8; },
       {"omp[1][4] (seconds) 1e+08 s in the OpenMP runtime is more than one thread ran"}},
      {"thread samples beyond its CPU time",
       [](Profile &, RankData &r) { r.thread_info[0].samples = 2500; },
       {"thread_info[0][2] (samples) 2500 samples is more than the sampling rate allows in 4.5 s "
        "of the thread's CPU time"}},
      {"OpenMP constructs 2^64-1",
       [](Profile &, RankData &r) { r.omp[0].count = kMax64; },
       {"omp[0][3] (count, with the rows before it) 1.84467e+19 OpenMP constructs"}},
      {"one thread off the CPU past the wall time",
       [](Profile &, RankData &r) { r.off_cpu[1].blocked = 15; },
       {"off_cpu[1][3] (blocked and run delay, with thread 1's rows before it) 15.005 s off the "
        "CPU is more than one thread ran"}},
  };
}

// The ways a run directory holds a profile.
enum class Form { V3Columns, V3Json, JsonGz, RankFiles };
const char *Name(Form f) {
  switch (f) {
  case Form::V3Columns:
    return "profile.scalana (columns)";
  case Form::V3Json:
    return "profile.scalana (gzip JSON blocks)";
  case Form::JsonGz:
    return "profile.json.gz";
  case Form::RankFiles:
    return "rank files";
  }
  return "?";
}

// The file of FORM in DIR that holds rank R.
std::string FileOf(Form form, const TempDir &dir, int r) {
  if (form == Form::JsonGz)
    return dir / "profile.json.gz";
  if (form == Form::RankFiles)
    return dir / ("rank-" + std::to_string(r) + ".json.gz");
  return dir / "profile.scalana";
}

void Write(Form form, const Profile &p, const TempDir &dir) {
  switch (form) {
  case Form::V3Columns:
    WriteProfileV3(dir / "profile.scalana", p, 4, Codec::Columns);
    break;
  case Form::V3Json:
    WriteProfileV3(dir / "profile.scalana", p, 4, Codec::JsonGzip);
    break;
  case Form::JsonGz:
    WriteProfileFile(p, dir / "profile.json.gz");
    break;
  case Form::RankFiles:
    for (const RankData &r : p.ranks) {
      Profile one;
      one.meta = p.meta;
      one.meta.complete = false;
      one.contexts = p.contexts;
      one.comms = p.comms;
      one.ranks = {r};
      WriteProfileFile(one, FileOf(form, dir, r.rank));
    }
    break;
  }
}

void ExpectRefused(const std::vector<Lie> &lies, int liar) {
  for (Form form : {Form::V3Columns, Form::V3Json, Form::JsonGz, Form::RankFiles})
    for (const Lie &lie : lies) {
      SCOPED_TRACE(std::string(Name(form)) + ": " + lie.name);
      Profile p = RichProfile(kRanks);
      RoundTimesToNanos(p);
      lie.edit(p, p.ranks[size_t(liar)]);
      TempDir dir;
      Write(form, p, dir);
      std::string error = ReadError(dir.path);
      ASSERT_NE(error, "");
      EXPECT_EQ(error.rfind(lie.names_rank ? FileOf(form, dir, liar) : FileOf(form, dir, 0), 0), 0u)
          << error;
      if (lie.names_rank)
        EXPECT_HAS(error, "impossible for rank " + std::to_string(liar) + ";");
      for (const std::string &part : lie.says)
        EXPECT_HAS(error, part);
      EXPECT_HAS(error, "the file was edited or damaged: re-run");
    }
}

TEST(ImpossibleNumbers, TheRunAsWrittenIsRead) {
  for (Form form : {Form::V3Columns, Form::V3Json, Form::JsonGz, Form::RankFiles}) {
    SCOPED_TRACE(Name(form));
    Profile p = RichProfile(kRanks);
    TempDir dir;
    Write(form, p, dir);
    EXPECT_EQ(ReadError(dir.path), "");
  }
}

TEST(ImpossibleNumbers, EachKindIsRefusedByEveryReaderNamingFileRankAndField) {
  ExpectRefused(Lies(), kLiar);
}

TEST(ImpossibleNumbers, ThreadTimesAndCountsAreRefusedToo) { ExpectRefused(ThreadLies(), 3); }

TEST(ImpossibleNumbers, NumbersAtTheirBoundsAreRead) {
  Profile p = RichProfile(kRanks);
  RankData &r = p.ranks[kLiar];   // 1 thread, 12.1235 s of wall time
  r.cpu_time = 14.4;              // under 1.1 x (12.1235 s + 1 s)
  r.mpi[0].calls = 1'000'000'000; // under 1e8/s x 13.1235 s
  r.mpi[0].bytes = uint64_t(100) << 50;
  p.ranks[0].wall_time = 73; // a rank that started a minute before rank 0
  for (Form form : {Form::V3Columns, Form::JsonGz}) {
    SCOPED_TRACE(Name(form));
    TempDir dir;
    Write(form, p, dir);
    EXPECT_EQ(ReadError(dir.path), "");
  }
}

} // namespace
} // namespace scalana
