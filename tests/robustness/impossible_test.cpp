// Profiles whose own numbers contradict each other, repeated keys, and rank
// files of two runs: refused with the file and the field (format/
// profile_checks.h), never reported as facts.
#include "reader_helpers.h"
#include "scalana/profile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace scalana {
namespace {

using json = nlohmann::json;
using namespace test;

// 2 ranks at 200 Hz, 1.4 s each: 280 samples, 0.5 s in MPI, 0.25 s waiting.
json Doc() {
  return json::parse(R"({"format":"scalana-profile","version":2,
    "meta":{"complete":true,"world_size":2,"binary":"/bin/app","psg_id":"0x1","run_id":"A",
            "wall_time":1.5,"sampling":{"source":"cpu-timer","hz":200}},
    "contexts":[["0x1a40"]], "comms":[[0,1]],
    "ranks":[{"rank":0,"threads":1,"wall_time":1.4,"samples":280,"cpu_time":1.4,
              "vertices":[[0,250,1.25,[]]],"mpi":[[0,10,0.5,4096]],
              "deps":[[0,"send",1,7,0,10,4096,0.0]]},
             {"rank":1,"threads":1,"wall_time":1.4,"samples":270,
              "vertices":[[0,3,0.01,[]]],"mpi":[],"deps":[[0,"recv",0,7,0,10,4096,0.25]]}]})");
}

std::string ErrorOf(const json &doc) { return ErrorOfText(doc.dump()); }

TEST(ImpossibleNumbers, TheSampleDocumentIsValid) { EXPECT_EQ(ErrorOf(Doc()), ""); }

TEST(ImpossibleNumbers, RepeatedKeysAreRefusedWithTheirPlace) {
  std::string text = Doc().dump();
  std::string twice = text;
  twice.insert(twice.find("\"world_size\""), "\"world_size\":9999,");
  EXPECT_HAS(ErrorOfText(twice), "p.json: meta: key \"world_size\" appears twice");
  twice = text;
  twice.insert(twice.rfind("\"samples\""), "\"samples\":1,");
  EXPECT_HAS(ErrorOfText(twice), "p.json: ranks[1]: key \"samples\" appears twice");
  twice = text;
  twice.insert(1, "\"ranks\":[],");
  EXPECT_HAS(ErrorOfText(twice), "p.json: the document: key \"ranks\" appears twice");
  // The same key in two objects is no repetition.
  EXPECT_EQ(ErrorOfText(text), "");
}

TEST(ImpossibleNumbers, SamplesBeyondRateTimesCpuTime) {
  json d = Doc();
  d["ranks"][0]["samples"] = INT64_MAX;
  EXPECT_HAS(ErrorOf(d), "p.json: ranks[0].samples 9.22337e+18 samples is more than the sampling "
                         "rate allows (200 Hz x 1.4 s of CPU time)");
  d = Doc();
  d["ranks"][0]["samples"] = 800; // 200 Hz x (1.5 x 1.4 s + 1 s) = 620
  EXPECT_HAS(ErrorOf(d), "ranks[0].samples 800 samples");
  d["ranks"][0]["samples"] = 600; // within the margin
  EXPECT_EQ(ErrorOf(d), "");
  // No CPU time recorded: the wall time of every thread bounds it.
  d = Doc();
  d["ranks"][1]["vertices"][0][1] = uint64_t(1) << 62;
  EXPECT_HAS(ErrorOf(d), "ranks[1].vertices[0][1] (samples, with the rows before it)");
  EXPECT_HAS(ErrorOf(d), "s of wall time x threads, its CPU time not recorded");
  d["ranks"][1]["threads"] = 4; // 200 Hz x (1.5 x 5.6 s + 1 s): 1,880 samples
  d["ranks"][1]["vertices"][0][1] = 1800;
  d["ranks"][1]["samples"] = 1800;
  EXPECT_EQ(ErrorOf(d), "");
}

TEST(ImpossibleNumbers, WaitsBeyondTheWallTime) {
  json d = Doc();
  d["ranks"][0]["mpi"][0][2] = 1e9;
  EXPECT_HAS(ErrorOf(d), "p.json: ranks[0].mpi[0][2] (seconds, with the rows before it) 1e+09 s "
                         "in MPI calls is more than the rank ran (wall time 1.4 s x 1 thread(s))");
  d = Doc();
  d["ranks"][1]["deps"][0][7] = 100;
  EXPECT_HAS(ErrorOf(d), "ranks[1].deps[0][7] (wait seconds, with the rows before it) 100 s of "
                         "waiting is more than the rank ran");
}

TEST(ImpossibleNumbers, KernelTimesBeyondOneThreadsWallClock) {
  // 1.1 x (1.4 s + 1 s) = 2.64 s: one thread's time, whatever the threads.
  json d = Doc();
  d["ranks"][0]["on_cpu"] = 1.3;
  d["ranks"][0]["run_delay"] = 0.1;
  d["ranks"][0]["threads"] = 2;
  d["ranks"][0]["thread_info"] = json::array(
      {json::array({0, 0, 200, 1.3, 0.1, 1.4}), json::array({1, 1, 80, 0.4, 0.05, 1.2})});
  EXPECT_EQ(ErrorOf(d), "");
  json bad = d;
  bad["ranks"][0]["run_delay"] = 50;
  EXPECT_HAS(ErrorOf(bad), "p.json: ranks[0].run_delay 50 s runnable but not running is more "
                           "than one thread ran");
  bad = d;
  bad["ranks"][0]["on_cpu"] = 2.0;
  bad["ranks"][0]["run_delay"] = 2.0;
  EXPECT_HAS(ErrorOf(bad), "ranks[0].on_cpu (with run_delay) 4 s on a CPU or runnable");
  bad = d;
  bad["ranks"][0]["thread_info"][1][5] = 1e6;
  EXPECT_HAS(ErrorOf(bad),
             "ranks[0].thread_info[1][5] (wall seconds) 1e+06 s of the thread's life");
  bad = d;
  bad["ranks"][0]["thread_info"][1][4] = 10;
  EXPECT_HAS(ErrorOf(bad), "ranks[0].thread_info[1][4] (run delay) 10 s runnable");
}

TEST(ImpossibleNumbers, NegativeAndNonFiniteTimesNameTheField) {
  json d = Doc();
  d["ranks"][0]["wall_time"] = -1;
  EXPECT_HAS(ErrorOf(d), "p.json: ranks[0].wall_time -1 is negative");
  d = Doc();
  d["ranks"][0]["cpu_time"] = -0.5;
  EXPECT_HAS(ErrorOf(d), "p.json: ranks[0].cpu_time -0.5 is negative");
  std::string text = Doc().dump();
  text.replace(text.find("1.25"), 4, "NaN");
  EXPECT_HAS(ErrorOfText(text), "p.json: not valid JSON");
  text = Doc().dump();
  text.replace(text.find("1.25"), 4, "1e999");
  EXPECT_HAS(ErrorOfText(text), "p.json:");
}

// --- rank files of two runs ------------------------------------------------

struct RunDir : TempDir {
  // Rank R's file, of run RUN_IDS[R].
  void WriteRanks(const std::vector<std::string> &run_ids) const {
    for (size_t r = 0; r < run_ids.size(); ++r) {
      json d = Doc();
      d["meta"]["complete"] = false;
      d["meta"]["world_size"] = run_ids.size();
      d["meta"]["run_id"] = run_ids[r];
      json rank = Doc()["ranks"][1];
      rank["rank"] = r;
      rank["deps"] = json::array();
      d["ranks"] = json::array({rank});
      WriteFile(*this / ("rank-" + std::to_string(r) + ".json.gz"), Gzip(d.dump()));
    }
  }
};

TEST(RunIds, RankFilesOfTwoRunsAreRefusedNamingTheOddOnes) {
  RunDir one;
  one.WriteRanks({"A", "A", "A"});
  EXPECT_EQ(ReadError(one.path), "");
  RunDir two;
  two.WriteRanks({"A", "B", "A", "C"});
  EXPECT_HAS(ReadError(two.path), two.path +
                                      ": rank files of different runs: " + two / "rank-1.json.gz" +
                                      " (run B), " + two / "rank-3.json.gz" +
                                      " (run C) not of run A, the run of 2 of the 4 rank files");
  // Files from before run ids were written are of no known run.
  RunDir old;
  old.WriteRanks({"A", ""});
  EXPECT_HAS(ReadError(old.path), old / "rank-1.json.gz" + " (run id not recorded)");
}

TEST(RunIds, TheJobFileNamesTheRun) {
  RunDir d;
  d.WriteRanks({"A", "B", "B"});
  std::ofstream(d / ".scalana-job") << "job-1\nrun A\n";
  EXPECT_HAS(ReadError(d.path), d / "rank-1.json.gz" + " (run B), " + d / "rank-2.json.gz" +
                                    " (run B) not of run A, the run .scalana-job names");
  std::ofstream(d / ".scalana-job") << "job-1\n"; // written by a launcher only
  EXPECT_HAS(ReadError(d.path), d / "rank-0.json.gz" + " (run A) not of run B");
}

} // namespace
} // namespace scalana
