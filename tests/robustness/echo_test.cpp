// Values echoed in messages (scalana/echo.h): escaped, cut, never a line of
// their own; and the run directory's job record read as written, a partial
// or hostile one included (runtime/run_dir_claim.h).
#include "run_dir_claim.h"
#include "scalana/echo.h"

#include <gtest/gtest.h>

#include <string>

using namespace scalana;

TEST(RobustEcho, ControlsEscapedShortValuesKept) {
  EXPECT_EQ(EchoValue("1000"), "1000");
  EXPECT_EQ(EchoValue("5\n\x1b[31mscalana prof: forged"), "5\\x0a\\x1b[31mscalana prof: forged");
  EXPECT_EQ(EchoValue("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(RobustEcho, LongValuesCutWithTheirLength) {
  std::string big(10240, '9');
  std::string e = EchoValue(big);
  EXPECT_EQ(e, std::string(200, '9') + "... (10240 bytes)");
  // Escapes and UTF-8 characters are never split by the cut.
  std::string esc(1000, '\x1b');
  e = EchoValue(esc);
  EXPECT_EQ(e.substr(0, 200), [] {
    std::string s;
    for (int i = 0; i < 50; ++i)
      s += "\\x1b";
    return s;
  }());
  EXPECT_EQ(e.substr(200), "... (1000 bytes)");
  std::string accents;
  for (int i = 0; i < 150; ++i)
    accents += "\xc3\xa9";
  e = EchoValue(accents);
  EXPECT_EQ(e, accents.substr(0, 200) + "... (300 bytes)");
  e = EchoValue("a" + accents);
  EXPECT_EQ(e, "a" + accents.substr(0, 198) + "... (301 bytes)");
}

TEST(RobustEcho, ValuesInAMessageEchoedTheRestEscaped) {
  std::string path = "/runs/" + std::string(5000, 'a'), odd = "x\ny";
  std::string msg = path + "/profile.json.gz: cannot read; also " + odd + " \x1b[2J";
  std::string e = EchoInMessage(msg, {path, odd, "-o"});
  EXPECT_EQ(e, "/runs/" + std::string(194, 'a') +
                   "... (5006 bytes)/profile.json.gz: cannot read; "
                   "also x\\x0ay \\x1b[2J");
  EXPECT_EQ(e.find('\n'), std::string::npos);
  // The message's own line ends kept where asked; a value's never.
  EXPECT_EQ(EchoInMessage("bad: x\ny\nType --help\n", {odd}, "\n"), "bad: x\\x0ay\nType --help\n");
  // "--name=value": the value alone is found too.
  auto args = std::vector<std::string>{"--hz=\x1b", "\x1b"};
  char a0[] = "prof", a1[] = "--hz=\x1b";
  char *argv[] = {a0, a1};
  EXPECT_EQ(ArgValues(2, argv), args);
}

TEST(RobustEcho, WholeMessagesBounded) {
  // A message quoting a 50 KB string from a file (no command-line value).
  std::string from_file(50000, 'b');
  std::string e = EchoInMessage("binary " + from_file + " not found", {});
  EXPECT_EQ(e, "binary " + std::string(kMessageMaxBytes - 7, 'b') + "... (50017 bytes)");
}

TEST(RobustEcho, JobRecordReadAsWritten) {
  rundir::JobRecord r = rundir::ParseJobRecord(
      "job-7\nhost n01\nboot b-1\npid 42\npid_start 99\nstart 2026-01-01T00:00:00Z\nlock 1\n"
      "ready\nrun R\n");
  EXPECT_EQ(r.job, "job-7");
  EXPECT_EQ(r.host, "n01");
  EXPECT_EQ(r.pid, 42);
  EXPECT_EQ(r.pid_start, 99u);
  EXPECT_TRUE(r.whole && r.locked && r.ready);
  EXPECT_EQ(rundir::DescribeJob(r), "job job-7 (host n01, pid 42, started 2026-01-01T00:00:00Z)");
  // Being written: a cut last line is not read, and without its "lock"
  // line the record is not whole.
  r = rundir::ParseJobRecord("job-7\nhost n01\nlo");
  EXPECT_FALSE(r.whole);
  EXPECT_EQ(r.host, "n01");
  // Hostile fields are echoed escaped and cut.
  r = rundir::ParseJobRecord("j\x1b\nhost " + std::string(300, 'h') + "\x1b[2J\nlock 0\n");
  std::string d = rundir::DescribeJob(r);
  EXPECT_EQ(d.find('\x1b'), std::string::npos);
  EXPECT_NE(d.find("... (304 bytes)"), std::string::npos);
  EXPECT_EQ(rundir::JobToken("a b\nc\x1b"), "a_b_c_");
}
