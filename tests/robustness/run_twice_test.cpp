// One run counted once (analyzer/ppg/run_identity.h): a run directory
// given twice to one analysis, by the same path, through a symbolic link or
// spelled another way, and two directories holding one run id, are refused
// naming both arguments. `scalana detect` on real runs: hostile_runs.py twice.
#include "ppg/load.h"
#include "ppg/run_identity.h"
#include "reader_helpers.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace scalana {
namespace {

using namespace test;

std::string RunDirsError(const std::vector<std::string> &dirs) {
  try {
    CheckRunDirs(dirs);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

struct Runs : TempDir {
  std::string a = *this / "p4", b = *this / "p8";
  Runs() {
    std::filesystem::create_directory(a);
    std::filesystem::create_directory(b);
  }
};

TEST(RunTwice, DistinctDirectoriesAreAccepted) {
  Runs r;
  EXPECT_EQ(RunDirsError({r.a, r.b}), "");
}

TEST(RunTwice, TheSameDirectoryTwiceIsRefusedNamingBothArguments) {
  Runs r;
  EXPECT_HAS(RunDirsError({r.a, r.b, r.a}),
             r.a + " (argument 3) is the run directory " + r.a +
                 " (argument 1): one run given twice would count as two repetitions of its "
                 "scale; give each run directory once");
}

TEST(RunTwice, ASymbolicLinkOrAnotherSpellingIsTheSameDirectory) {
  Runs r;
  const std::string link = r / "link";
  ASSERT_EQ(symlink(r.a.c_str(), link.c_str()), 0);
  const std::string real = std::filesystem::canonical(r.a).string();
  EXPECT_HAS(RunDirsError({r.a, link}), link + " (argument 2) is the run directory " + r.a +
                                            " (argument 1) (both are " + real + ")");
  for (const std::string &spelled : {r.a + "/", r.a + "/.", r.b + "/../p4", r.a + "//"})
    EXPECT_HAS(RunDirsError({spelled, r.b, r.a}),
               r.a + " (argument 3) is the run directory " + spelled + " (argument 1)");
  // A relative path from elsewhere.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(r.path.c_str()), 0);
  std::string error = RunDirsError({"p4", r.a});
  EXPECT_EQ(chdir(cwd), 0);
  EXPECT_HAS(error, r.a + " (argument 2) is the run directory p4 (argument 1)");
}

TEST(RunTwice, TwoDirectoriesOfOneRunIdAreRefusedNamingBoth) {
  RunIdsSeen seen;
  seen.Add("runs/p4", 0, "20261207T080000Z-42-00ff");
  seen.Add("runs/p4", 0, "20261207T080000Z-42-00ff"); // another part of the same run
  seen.Add("runs/p8", 1, "20261207T090000Z-43-00aa");
  seen.Add("runs/old", 2, ""); // no id recorded: not compared
  seen.Add("runs/old2", 3, "");
  std::string error;
  try {
    seen.Add("runs/p4-copy", 4, "20261207T080000Z-42-00ff");
  } catch (const Error &e) {
    error = e.what();
  }
  EXPECT_HAS(error, "runs/p4-copy (argument 5) holds run 20261207T080000Z-42-00ff, as runs/p4 "
                    "(argument 1) does");
  EXPECT_HAS(error, "each job its own SCALANA_RUN_ID (or none)");
}

} // namespace
} // namespace scalana
