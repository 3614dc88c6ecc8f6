#include "detect/bounded_subprocess.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace scalana {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool WriteAll(int fd, const std::string &data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    done += size_t(w);
  }
  return true;
}

// The input as a file rather than a pipe: the program reads it at its own
// pace while this side only reads its output, so neither can block on the
// other (and a program that never reads cannot raise SIGPIPE here). A
// memory file where the kernel has them, else an unlinked temporary file.
int InputFile(const std::string &input, std::string *error) {
  int fd = -1;
#ifdef MFD_CLOEXEC
  fd = ::memfd_create("scalana-input", MFD_CLOEXEC);
#endif
  if (fd < 0) {
    const char *tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/scalana-input-XXXXXX";
    fd = ::mkostemp(&path[0], O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot create a temporary file: " + std::string(std::strerror(errno));
      return -1;
    }
    ::unlink(path.c_str());
  }
  if (!WriteAll(fd, input) || ::lseek(fd, 0, SEEK_SET) != 0) {
    *error = "cannot write its input: " + std::string(std::strerror(errno));
    ::close(fd);
    return -1;
  }
  return fd;
}

// True once PID has ended; it stays a zombie (WNOWAIT), so its process
// group id cannot be reused before the group is killed and it is reaped.
bool Ended(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  while (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    if (errno != EINTR)
      return true; // not our child any more: nothing to wait for
  return info.si_pid == pid;
}

// Kills what is left of PID's group (children it started that still hold
// its output, or all of it) and reaps PID.
int KillGroupAndReap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

} // namespace

SubprocessResult RunBoundedSubprocess(const std::vector<std::string> &argv,
                                      const std::string &input, const SubprocessLimits &limits) {
  SubprocessResult r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "no program named";
    return r;
  }
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(limits.timeout_seconds));
  Fd in;
  in.fd = InputFile(input, &r.error);
  if (in.fd < 0)
    return r;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.error = "cannot make a pipe: " + std::string(std::strerror(errno));
    return r;
  }
  Fd out_read, out_write;
  out_read.fd = pipe_fds[0];
  out_write.fd = pipe_fds[1];
  ::fcntl(out_read.fd, F_SETFL, O_NONBLOCK);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in.fd, 0);
  posix_spawn_file_actions_adddup2(&fa, out_write.fd, 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A group of its own, so that a timeout ends what it started too; no
  // signal of ours blocked, and the ones an analysis may ignore at their
  // default (an ignored SIGPIPE stays ignored across exec).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM})
    sigaddset(&defaults, sig);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> args = argv;
  std::vector<char *> cargv;
  for (std::string &a : args)
    cargv.push_back(&a[0]);
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0].c_str(), &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    r.start_errno = rc;
    return r;
  }
  ::close(out_write.fd); // the child holds the only write end: EOF when it closes it
  out_write.fd = -1;

  r.end = SubprocessResult::End::Exited;
  bool eof = false, leader_ended = false;
  char buf[65536];
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.end = SubprocessResult::End::TimedOut;
      break;
    }
    // Short polls: a child it started may hold the output open after it
    // ended (checked below), and no EOF would come.
    struct pollfd p = {out_read.fd, POLLIN, 0};
    if (::poll(&p, 1, int(std::min<long long>(left.count(), 100))) < 0 && errno != EINTR)
      break;
    for (;;) {
      ssize_t n = ::read(out_read.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        eof = true;
      if (n <= 0)
        break;
      if (r.output.size() + size_t(n) > limits.max_output_bytes) {
        r.end = SubprocessResult::End::OutputTooLarge;
        break;
      }
      r.output.append(buf, size_t(n));
    }
    if (r.end != SubprocessResult::End::Exited)
      break;
    if (leader_ended)
      break; // drained once more after it ended: what it wrote is all here
    leader_ended = Ended(pid);
  }
  // It closed its output (or ended): its exit is due; a program that
  // closes its output and goes on is stopped at the deadline too.
  while (r.end == SubprocessResult::End::Exited && !Ended(pid)) {
    if (Clock::now() >= deadline)
      r.end = SubprocessResult::End::TimedOut;
    else
      ::usleep(1000);
  }
  int status = KillGroupAndReap(pid);
  if (r.end == SubprocessResult::End::Exited) {
    if (WIFSIGNALED(status)) {
      r.end = SubprocessResult::End::Signaled;
      r.code = WTERMSIG(status);
    } else {
      r.code = WEXITSTATUS(status);
    }
  }
  if (r.end != SubprocessResult::End::Exited)
    r.output.clear();
  return r;
}

std::string DescribeSubprocessEnd(const SubprocessResult &r, const SubprocessLimits &limits) {
  switch (r.end) {
  case SubprocessResult::End::Exited:
    return "exit code " + std::to_string(r.code);
  case SubprocessResult::End::Signaled:
    return "killed by signal " + std::to_string(r.code) + " (" + strsignal(r.code) + ")";
  case SubprocessResult::End::TimedOut: {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", limits.timeout_seconds);
    return std::string("did not finish in ") + secs + " s and was killed";
  }
  case SubprocessResult::End::OutputTooLarge:
    return "printed more than " + std::to_string(limits.max_output_bytes) +
           " bytes and was killed";
  case SubprocessResult::End::NotStarted:
    break;
  }
  return r.error;
}

} // namespace scalana
