#include "report/bounded_subprocess.h"

#include "scalana/find_program.h"
#include "scalana/write_whole.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
  if (int err = 0;
      !WriteWhole(fd, input.data(), input.size(), -1, &err) || ::lseek(fd, 0, SEEK_SET) != 0) {
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

  // The fds the child is given above 2: dup2 onto itself would keep
  // close-on-exec (a parent started with its standard streams closed).
  for (Fd *f : {&in, &out_write})
    if (f->fd <= 2) {
      int moved = ::fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
      ::close(f->fd);
      f->fd = moved;
    }
  int err = 0;
  const std::string path = FindProgram(argv[0], &err);
  if (path.empty() || in.fd < 0 || out_write.fd < 0) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(err ? err : errno);
    r.start_errno = err ? err : errno;
    return r;
  }
  // Says why exec failed (its errno); closes unread when exec succeeds.
  int status_fds[2];
  if (::pipe2(status_fds, O_CLOEXEC) != 0) {
    r.error = "cannot make a pipe: " + std::string(std::strerror(errno));
    return r;
  }
  Fd exec_status_read, exec_status_write;
  exec_status_read.fd = status_fds[0];
  exec_status_write.fd = status_fds[1];
  std::vector<std::string> args = argv;
  std::vector<char *> cargv;
  for (std::string &a : args)
    cargv.push_back(&a[0]);
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // No signal handler may run in the child before exec (it would run the
  // parent's code in a copy holding the allocator's locks): all blocked
  // across fork, and the child unblocks them only in the new program.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::fork();
  if (pid == 0) {
    // The child: async-signal-safe calls only until exec. A group of its
    // own, so that a timeout ends what it started too; killed with this
    // process (Ctrl-C here must not leave a hung dot behind). PDEATHSIG is
    // tied to the forking thread: this runs on the thread that waits.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    // Ignored signals stay ignored across exec: the ones an analysis may
    // ignore back at their default.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM})
      ::sigaction(sig, &dfl, nullptr);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (::dup2(in.fd, 0) < 0 || ::dup2(out_write.fd, 1) < 0 || devnull < 0 ||
        ::dup2(devnull, 2) < 0)
      ::_exit(127);
    // Nothing else of ours open in it (the report being written, the debug
    // reader's socket): the exec status on fd 3, closed on exec, and no more.
    int status_fd = exec_status_write.fd == 3 ? 3 : ::dup2(exec_status_write.fd, 3);
    ::fcntl(status_fd, F_SETFD, FD_CLOEXEC);
#ifdef SYS_close_range
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
#endif
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(path.c_str(), cargv.data(), environ);
    int e = errno;
    ssize_t ignored = ::write(status_fd, &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(errno);
    r.start_errno = errno;
    return r;
  }
  ::setpgid(pid, pid); // as the child does: kill(-pid) works whichever ran first
  ::close(exec_status_write.fd);
  exec_status_write.fd = -1;
  int exec_errno = 0;
  ssize_t got;
  do
    got = ::read(exec_status_read.fd, &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  if (got == ssize_t(sizeof exec_errno)) {
    KillGroupAndReap(pid);
    r.error = "cannot run " + argv[0] + ": " + std::strerror(exec_errno);
    r.start_errno = exec_errno;
    return r;
  }
  ::close(out_write.fd); // the child holds the only write end: EOF when it closes it
  out_write.fd = -1;

  r.end = SubprocessResult::End::Exited;
  bool eof = false, leader_ended = false;
  char buf[65536];
  while (!eof) {
    // Rounded up: a poll cut short of the deadline would end the program
    // before its time.
    const Clock::time_point now = Clock::now();
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    if (now >= deadline) {
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
    return "printed more than " + std::to_string(limits.max_output_bytes) + " bytes and was killed";
  case SubprocessResult::End::NotStarted:
    break;
  }
  return r.error;
}

} // namespace scalana
