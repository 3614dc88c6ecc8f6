// The run directory's claim (runtime/run_dir_claim.h) without MPI: a claim
// held by a live process refuses another job, --force or not; once that
// process is gone its claim is taken over; records being written are waited
// on, and those whose writer died are taken after a while.
#include "run_dir_claim.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

using namespace scalana::rundir;

namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/scalana-claim-XXXXXX";
  return mkdtemp(tmpl);
}

// A child that claims DIR for JOB and keeps its claim until killed.
pid_t HoldClaim(const std::string &dir, const std::string &job) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    Claim c = ClaimJobFile(dir, job, false, "", 5);
    char ok = c.kind == Claim::kOwned ? 1 : 0;
    (void)!write(ready[1], &ok, 1);
    for (;;)
      pause();
  }
  char ok = 0;
  EXPECT_EQ(read(ready[0], &ok, 1), 1);
  EXPECT_EQ(ok, 1);
  close(ready[0]);
  close(ready[1]);
  return pid;
}

void Write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

} // namespace

TEST(RunDirClaim, LiveJobRefusedForceOrNotThenTakenOver) {
  std::string dir = TempDir();
  pid_t a = HoldClaim(dir, "job-a");
  for (bool force : {false, true}) {
    Claim b = ClaimJobFile(dir, "job-b", force, "", 1);
    EXPECT_EQ(b.kind, Claim::kRefused);
    EXPECT_NE(b.message.find("is in use by job job-a (host "), std::string::npos) << b.message;
    EXPECT_NE(b.message.find("pid " + std::to_string(a) + ", started "), std::string::npos);
    EXPECT_NE(b.message.find("--force never takes"), std::string::npos);
  }
  EXPECT_EQ(ReadJobRecord(dir).job, "job-a");
  kill(a, SIGKILL);
  waitpid(a, nullptr, 0);
  // Gone, no profile: taken without --force; with a profile, --force needed.
  Write(dir + "/profile.scalana", "old");
  Claim b = ClaimJobFile(dir, "job-b", false, "", 1);
  EXPECT_EQ(b.kind, Claim::kRefused);
  EXPECT_NE(b.message.find("holds the profile of another run (job job-a"), std::string::npos)
      << b.message;
  EXPECT_NE(b.message.find("which has ended"), std::string::npos);
  b = ClaimJobFile(dir, "job-b", true, "", 1);
  ASSERT_EQ(b.kind, Claim::kOwned) << b.message;
  close(b.fd);
  EXPECT_EQ(ReadJobRecord(dir).job, "job-b");
  EXPECT_TRUE(ReadJobRecord(dir).ready);
  struct stat st;
  EXPECT_NE(stat((dir + "/profile.scalana").c_str(), &st), 0) << "--force removed the profile";
  std::filesystem::remove_all(dir);
}

TEST(RunDirClaim, RecordsBeingWrittenAndLeftHalfWritten) {
  std::string dir = TempDir(), path = dir + "/.scalana-job";
  // Just created, not yet written: waited on, then not judged as ended.
  Write(path, "job-x\nhost n");
  Claim c = ClaimJobFile(dir, "job-y", true, "", 0.2);
  EXPECT_EQ(c.kind, Claim::kRefused) << "a record being written is not taken";
  // The same, its writer long gone (and an older version's record): ended.
  struct timespec old[2] = {{1, 0}, {1, 0}};
  utimensat(AT_FDCWD, path.c_str(), old, 0);
  c = ClaimJobFile(dir, "job-y", false, "", 0.2);
  ASSERT_EQ(c.kind, Claim::kOwned) << c.message;
  close(c.fd);
  Write(path, "job-old\nrun r\n");
  utimensat(AT_FDCWD, path.c_str(), old, 0);
  c = ClaimJobFile(dir, "job-z", false, "", 0.2);
  ASSERT_EQ(c.kind, Claim::kOwned) << c.message;
  // Its own job's ready record is joined; "run" appended in place.
  Claim again = ClaimJobFile(dir, "job-z", false, "", 0.2);
  EXPECT_EQ(again.kind, Claim::kJoined);
  EXPECT_TRUE(AppendRunId(dir, "run-1"));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\nready\nrun run-1\n"), std::string::npos) << text;
  close(c.fd);
  std::filesystem::remove_all(dir);
}

TEST(RunDirClaim, NotARegularFileRefused) {
  std::string dir = TempDir(), path = dir + "/.scalana-job";
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  Claim c = ClaimJobFile(dir, "job-a", true, "", 0.2);
  EXPECT_EQ(c.kind, Claim::kRefused);
  EXPECT_NE(c.message.find("is not a regular file: remove it"), std::string::npos) << c.message;
  unlink(path.c_str());
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  c = ClaimJobFile(dir, "job-a", true, "", 0.2);
  EXPECT_EQ(c.kind, Claim::kRefused);
  EXPECT_NE(c.message.find("Is a directory: remove it"), std::string::npos) << c.message;
  rmdir(path.c_str());
  ASSERT_EQ(symlink("/etc/passwd", path.c_str()), 0);
  c = ClaimJobFile(dir, "job-a", true, "", 0.2);
  EXPECT_EQ(c.kind, Claim::kRefused) << "a link is not followed";
  std::filesystem::remove_all(dir);
}
