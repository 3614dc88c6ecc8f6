// RecoverStructure: RecoverStructureHere in a child process. LLVM's object,
// DWARF and disassembler readers are not built for hostile input (a flipped
// bit can crash them, a bad header ends in abort), and the binary a profile
// names is input like any file: the child's death or silence is an Error
// saying so, as for the line-table reader (frames/debug_reader.h).
#include "binary_structure.h"
#include "reader_child.h"

#include "scalana/elf_section.h"
#include "scalana/profile.h"
#include "scalana/psg_format.h"
#include "scalana/write_whole.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace scalana {
namespace {

void Put64(std::string &out, uint64_t v) { out.append(reinterpret_cast<const char *>(&v), 8); }

uint64_t Get64(const std::string &in, size_t *at) {
  uint64_t v = 0;
  if (*at + 8 <= in.size())
    std::memcpy(&v, in.data() + *at, 8);
  *at += 8;
  return v;
}

} // namespace

RecoveredStructure RecoverStructure(const std::string &object, double timeout_seconds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot start the structure reader: ") + std::strerror(errno));
  pid_t pid = ForkReaderChild();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("cannot start the structure reader: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      RecoveredStructure s = RecoverStructureHere(object);
      out = "S";
      for (uint64_t v : {s.functions, s.loops, s.calls, s.mpi_calls, s.functions_without_lines})
        Put64(out, v);
      out.append(reinterpret_cast<const char *>(s.records.data()), s.records.size());
    } catch (const std::exception &e) {
      out = std::string("E") + e.what();
    }
    int err = 0;
    ::_exit(WriteWhole(fds[1], out.data(), out.size(), -1, &err) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string in;
  std::string failure;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      failure = "gave no answer in " + std::to_string(int(timeout_seconds)) + " s";
      ::kill(pid, SIGKILL);
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, int(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    in.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (failure.empty() && (WIFSIGNALED(status) || WEXITSTATUS(status) != 0))
    failure = DescribeChildStatus(status);
  if (!failure.empty())
    throw Error(object + ": recovering its structure from the binary failed: the reader " +
                failure + " (a damaged or unusual file?)");
  if (!in.empty() && in[0] == 'E')
    throw Error(in.substr(1));
  if (in.size() < 1 + 5 * 8 || in[0] != 'S')
    throw Error(object + ": recovering its structure from the binary failed: no answer");
  RecoveredStructure s;
  size_t at = 1;
  s.functions = Get64(in, &at);
  s.loops = Get64(in, &at);
  s.calls = Get64(in, &at);
  s.mpi_calls = Get64(in, &at);
  s.functions_without_lines = Get64(in, &at);
  s.records.assign(in.begin() + long(at), in.end());
  return s;
}

Psg LoadProgramStructure(const std::string &binary, const std::vector<std::string> &libraries,
                         const PsgOptions &opts) {
  std::string err;
  auto elf = ReadElf(binary, kPsgSection, &err);
  if (!elf || elf->has_section || !libraries.empty())
    return Psg::LoadFromObjects(binary, libraries, opts); // its errors say what is wrong
  RecoveredStructure rs = RecoverStructure(binary);
  return Psg::LoadFromRecords(binary, elf->build_id, rs.records, RecoveredStructureText(rs), opts);
}

} // namespace scalana
