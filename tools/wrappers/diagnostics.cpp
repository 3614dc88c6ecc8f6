// Reading the compiler's standard error (see diagnostics.h).
#include "diagnostics.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>

namespace scalana {
namespace {

// flang-new-19 (lib/Semantics): "Reference to the procedure '%s' has an
// implicit interface that is distinct from another reference: %s", with
// "previous reference to '%s'" and, for code from an include file,
// "included here" as notes. Every MPI call of a program without explicit
// MPI interfaces (mpif.h, or the `mpi` module built from it) that passes
// other argument types than an earlier call of the same routine gets one;
// the MPI routines are meant to be called so. flang lower-cases the name.
const std::regex &MpiInterfaceWarning() {
  static const std::regex re(
      R"(^.*:[0-9]+:[0-9]+: warning: Reference to the procedure '(p?mpi_[a-z0-9_]*)' has an )"
      R"(implicit interface that is distinct from another reference(:.*)?$)");
  return re;
}

bool IsNoteOf(const std::string &text, const std::string &procedure) {
  static const std::regex included(R"(^.*:[0-9]+:[0-9]+: (warning: )?included here$)");
  static const std::regex previous(R"(^.*:[0-9]+:[0-9]+: previous reference to '([^']*)'$)");
  std::smatch m;
  if (std::regex_match(text, m, previous))
    return m[1] == procedure;
  return std::regex_match(text, included);
}

void WriteAll(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return; // standard error closed: nothing to report to
    }
    data += w;
    n -= size_t(w);
  }
}

} // namespace

std::string StripColour(const std::string &line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\033' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !(line[i] >= '@' && line[i] <= '~'))
        ++i;
      continue;
    }
    out += line[i];
  }
  return out;
}

bool DiagnosticFilter::Keep(const std::string &line) {
  std::string text = StripColour(line);
  if (dropping_) {
    // The warning's excerpt (indented source and caret lines) and its notes.
    if (text.empty() || text[0] == ' ' || IsNoteOf(text, procedure_))
      return false;
    dropping_ = false;
  }
  std::smatch m;
  if (drop_mpi_ && std::regex_match(text, m, MpiInterfaceWarning())) {
    dropping_ = true;
    procedure_ = m[1];
    ++dropped_;
    return false;
  }
  static const std::regex code_error(R"(^.+:[0-9]+:[0-9]+: error: .*)");
  static const std::regex unknown(R"(error: unknown argument:? '([^']+)')");
  if (std::regex_match(text, code_error))
    code_error_ = true;
  else if (std::regex_search(text, m, unknown))
    unknown_.push_back(m[1]);
  return true;
}

int RunFiltered(const std::vector<std::string> &argv, DiagnosticFilter &filter) {
  int fds[2];
  if (pipe(fds) != 0)
    return 127;
  // A reader that outlives a closed standard error must not die of SIGPIPE.
  struct sigaction ignore = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  pid_t pid = fork();
  if (pid < 0)
    return 127;
  if (pid == 0) {
    sigaction(SIGPIPE, &old_pipe, nullptr); // ignored signals stay ignored across exec
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    std::vector<char *> cargv;
    for (const std::string &a : argv)
      cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  std::string pending;
  char buf[8192];
  auto emit = [&](const std::string &line, bool newline) {
    if (!filter.Keep(line))
      return;
    WriteAll(STDERR_FILENO, line.data(), line.size());
    if (newline)
      WriteAll(STDERR_FILENO, "\n", 1);
  };
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    pending.append(buf, size_t(n));
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      emit(pending.substr(start, nl - start), true);
      start = nl + 1;
    }
    pending.erase(0, start);
  }
  if (!pending.empty())
    emit(pending, false);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  if (WIFSIGNALED(status)) {
    std::signal(WTERMSIG(status), SIG_DFL);
    std::raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

} // namespace scalana
