#include "run_dir_claim.h"

#include "run_dir_files.h"
#include "scalana/echo.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace scalana::rundir {
namespace {

// A record without its "lock" line this long after it was last written is
// not being written: its creator died (or it is an older version's file).
constexpr double kWritingSeconds = 10;

std::string ReadSmall(const char *path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(4096, '\0');
  in.read(&text[0], std::streamsize(text.size()));
  text.resize(size_t(in.gcount()));
  return text;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

std::string HostName() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return JobToken(host);
}

// Host names repeat across clusters and containers: the boot id tells one
// machine (and boot) from another.
std::string BootId() { return JobToken(Trimmed(ReadSmall("/proc/sys/kernel/random/boot_id"))); }

// Field 22 of /proc/PID/stat, the process's start time (0: none, or a
// zombie, which has ended as far as its job is concerned).
unsigned long long ProcessStart(long long pid) {
  std::string stat = ReadSmall(("/proc/" + std::to_string(pid) + "/stat").c_str());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos)
    return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::string field;
  unsigned long long start = 0;
  for (int i = 3; i <= 22 && in >> field; ++i) {
    if (i == 3 && field == "Z")
      return 0;
    if (i == 22)
      start = std::strtoull(field.c_str(), nullptr, 10);
  }
  return start;
}

// Field 4 of /proc/PID/stat, its parent; 0 when unknown.
long long ParentOf(long long pid) {
  std::string stat = ReadSmall(("/proc/" + std::to_string(pid) + "/stat").c_str());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos)
    return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::string state;
  long long ppid = 0;
  in >> state >> ppid;
  return ppid;
}

// R's claim was made by this process, or by one it descends from on this
// machine: the launcher, before it exec'd the program, or put before the
// MPI launcher (`scalana prof -- mpirun ...`), whose job id the ranks do
// not share. Its lock would refuse the job's own ranks.
bool MadeByThisJobsLauncher(const JobRecord &r) {
  if (!r.ready || r.pid <= 0 || r.boot.empty() || r.boot != BootId() || r.host != HostName())
    return false;
  long long pid = getpid();
  for (int depth = 0; pid > 1 && depth < 64; ++depth, pid = ParentOf(pid))
    if (pid == r.pid)
      return r.pid_start == 0 || ProcessStart(pid) == r.pid_start;
  return false;
}

std::string UtcNow() {
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// An open file description lock over the whole file: held as long as the
// description is open, in whichever process (the launcher's, and after
// exec the program's), and released by the kernel when it ends, however.
bool TryLock(int fd, int *err) {
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
    return true;
  *err = errno;
  return false;
}

bool HeldElsewhere(int err) { return err == EAGAIN || err == EACCES; }

JobRecord ReadRecord(int fd) {
  char buf[4096];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  return ParseJobRecord(n > 0 ? std::string(buf, size_t(n)) : std::string());
}

bool WriteAt(int fd, const std::string &text, off_t at) {
  return pwrite(fd, text.data(), text.size(), at) == ssize_t(text.size());
}

// The record, in one write; its last line "lock" marks it whole.
bool WriteRecord(int fd, const std::string &token, bool locked) {
  std::string text = token + "\nhost " + HostName() + "\nboot " + BootId() + "\npid " +
                     std::to_string(getpid()) + "\npid_start " +
                     std::to_string(ProcessStart(getpid())) + "\nstart " + UtcNow() + "\nlock " +
                     (locked ? "1" : "0") + "\n";
  return ftruncate(fd, 0) == 0 && WriteAt(fd, text, 0);
}

double Age(const struct stat &st) { return std::difftime(std::time(nullptr), st.st_mtime); }

enum class Liveness { kRunning, kEnded, kUnknown };

// The lock was free (or locks do not work here: LOCKS_WORK false). On this
// machine its process tells (the program may have closed the descriptor
// that held the lock); on another, the lock it held and no longer does.
Liveness Judge(const JobRecord &r, bool locks_work, const struct stat &st) {
  if (!r.whole)
    return Age(st) >= kWritingSeconds ? Liveness::kEnded : Liveness::kUnknown;
  if (!r.boot.empty() && r.boot == BootId() && r.host == HostName())
    return r.pid > 0 && ProcessStart(r.pid) != 0 &&
                   (r.pid_start == 0 || ProcessStart(r.pid) == r.pid_start)
               ? Liveness::kRunning
               : Liveness::kEnded;
  return locks_work && r.locked ? Liveness::kEnded : Liveness::kUnknown;
}

Claim Refused(std::string message) {
  Claim c;
  c.message = std::move(message);
  return c;
}

std::string AnotherRun(const std::string &dir, const std::string &who) {
  return EchoValue(dir) + " holds the profile of another run" + who +
         ": choose another --output, or pass --force (SCALANA_FORCE=1) to overwrite it";
}

// The job file is ours (created, or taken over) and locked if LOCKED:
// clear the directory, then say it is ready.
Claim Prepared(int fd, const std::string &dir, bool force, const std::string &own_claim) {
  RemoveRunFiles(dir, force, own_claim);
  struct stat st;
  if (fstat(fd, &st) != 0 || !WriteAt(fd, "ready\n", st.st_size)) {
    std::string why = std::strerror(errno);
    close(fd);
    return Refused("cannot write to the run directory " + EchoValue(dir) + ": " + why +
                   ": choose another --output");
  }
  Claim c;
  c.kind = Claim::kOwned;
  c.fd = fd;
  return c;
}

void Sleep10ms() {
  struct timespec ts = {0, 10 * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

} // namespace

Claim ClaimJobFile(const std::string &dir, const std::string &job, bool force,
                   const std::string &own_claim, double wait_seconds) {
  const std::string path = dir + "/" + kJobFile, token = JobToken(job);
  const std::string cannot_write = "cannot write to the run directory " + EchoValue(dir) + ": ";
  for (int waited_ms = 0;; waited_ms += 10) {
    bool may_wait = waited_ms < wait_seconds * 1000;
    // The exclusive create decides between jobs that find no job file.
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      int err = 0;
      bool locked = TryLock(fd, &err);
      // Held: another job saw the empty file and is looking at it (it waits
      // for the record): a moment later the lock is free.
      for (int i = 0; !locked && HeldElsewhere(err) && i < 100; ++i) {
        Sleep10ms();
        locked = TryLock(fd, &err);
      }
      if (!WriteRecord(fd, token, locked)) {
        std::string why = std::strerror(errno);
        unlink(path.c_str());
        close(fd);
        return Refused(cannot_write + why + ": choose another --output");
      }
      // Profile files and no job file: another run's (an older version's,
      // or its job file removed).
      if (!force && HasProfileFiles(dir)) {
        unlink(path.c_str());
        close(fd);
        return Refused(AnotherRun(dir, ""));
      }
      return Prepared(fd, dir, force, own_claim);
    }
    if (errno != EEXIST)
      return Refused(cannot_write + std::strerror(errno) + ": choose another --output");
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      if (errno == ENOENT)
        continue; // removed since: create it
      return Refused("cannot open " + EchoValue(path) + ": " + std::strerror(errno) +
                     ": remove it, or choose another --output");
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return Refused(EchoValue(path) + " is not a regular file: remove it, or choose another "
                                       "--output");
    }
    JobRecord r = ReadRecord(fd);
    if ((r.job == token && r.ready) || MadeByThisJobsLauncher(r)) {
      close(fd);
      Claim c;
      c.kind = Claim::kJoined;
      return c;
    }
    int err = 0;
    bool got = TryLock(fd, &err);
    if (got) {
      // Locked: is it still the job file (not replaced since it was opened)?
      struct stat now;
      if (stat(path.c_str(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
        close(fd);
        continue;
      }
      r = ReadRecord(fd);
    }
    bool held = !got && HeldElsewhere(err);
    // Being written: by a launcher of this job (which holds the lock until
    // the program ends, and has not said ready yet), or by another job's
    // creator that is between its create and its write. Look again soon.
    bool writing = held ? (r.job == token || !r.whole)
                        : (!r.whole && Age(st) < kWritingSeconds) || (r.job == token && !got);
    if (writing && may_wait) {
      close(fd);
      Sleep10ms();
      continue;
    }
    Liveness live = held ? Liveness::kRunning : Judge(r, got, st);
    if (r.job == token && (held || !got)) {
      close(fd);
      return Refused("another launcher of this job did not finish preparing " + EchoValue(dir) +
                     "; if no run is using it, remove " + EchoValue(path) + " and try again");
    }
    // Of this job, not ready and its lock free: the launcher preparing it
    // was killed; this one goes on.
    if (r.job == token)
      live = Liveness::kEnded;
    if (live != Liveness::kEnded) {
      close(fd);
      if (live == Liveness::kRunning)
        return Refused(EchoValue(dir) + " is in use by " + DescribeJob(r) +
                       ", which is still running: choose another --output (--force never takes "
                       "a run directory from a running job)");
      return Refused(EchoValue(dir) + " is claimed by " + DescribeJob(r) +
                     ", and whether that job still runs cannot be told from this host (its lock "
                     "is not seen here): choose another --output, or remove " +
                     EchoValue(path) + " if it has ended");
    }
    if (r.job == token) // nothing of another run to refuse
      return WriteRecord(fd, token, got)
                 ? Prepared(fd, dir, force, own_claim)
                 : (close(fd), Refused(cannot_write + std::strerror(errno)));
    if (!force && HasProfileFiles(dir)) {
      close(fd);
      return Refused(AnotherRun(dir, " (" + DescribeJob(r) + ", which has ended)"));
    }
    // Taken over in place: the same file, now this job's, under our lock.
    if (!WriteRecord(fd, token, got)) {
      std::string why = std::strerror(errno);
      close(fd);
      return Refused(cannot_write + why + ": choose another --output");
    }
    return Prepared(fd, dir, force, own_claim);
  }
}

bool AppendRunId(const std::string &dir, const std::string &run_id) {
  int fd = open((dir + "/" + kJobFile).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  std::string line = "run " + run_id + "\n";
  bool ok = write(fd, line.data(), line.size()) == ssize_t(line.size());
  return close(fd) == 0 && ok;
}

int MoveHigh(int fd, bool cloexec) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur < 64)
    return fd;
  // Not at the top of a large limit: the kernel would grow the process's
  // descriptor table to reach it.
  long limit = long(lim.rlim_cur), target = limit - limit / 16 - 1;
  if (target > 959)
    target = 959;
  int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, int(target));
  if (high < 0)
    return fd;
  close(fd);
  return high;
}

void CloseJobLockOnExec() {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return;
  const std::string suffix = "/" + kJobFile;
  while (dirent *e = readdir(d)) {
    char link[4096];
    std::string fd_path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(fd_path.c_str(), link, sizeof link - 1);
    if (n <= ssize_t(suffix.size()) ||
        std::string(link, size_t(n)).compare(size_t(n) - suffix.size(), suffix.size(), suffix))
      continue;
    int fd = std::atoi(e->d_name);
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && fd != dirfd(d))
      fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(d);
}

} // namespace scalana::rundir
