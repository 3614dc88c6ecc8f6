#include "debug_reader.h"
#include "reader_child.h"

#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Support/Error.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace scalana {
namespace {

// The wire: a request is (u32 object, u32 0, u64 address); an answer is
// u32 frame count, then per frame u32 line, u32 column, u32 name length,
// name, u32 file length, file. The parent checks every count and length
// against these bounds: the child may be half-dead.
struct Request {
  uint32_t object, pad;
  uint64_t address;
};
constexpr uint32_t kMaxFrames = 1024;     // inlining depth of one address
constexpr uint32_t kMaxString = 1u << 16; // one name or path
constexpr size_t kBatch = 512;            // requests in flight (8 KiB)

using llvm::symbolize::LLVMSymbolizer;

void Put32(std::string &out, uint32_t v) { out.append(reinterpret_cast<const char *>(&v), 4); }

void PutString(std::string &out, const std::string &s) {
  bool bad = s == llvm::DILineInfo::BadString;
  uint32_t n = bad ? 0 : uint32_t(std::min<size_t>(s.size(), kMaxString));
  Put32(out, n);
  out.append(s.data(), bad ? 0 : n);
}

bool WriteAll(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

} // namespace

int ServeDebugLookups(const std::vector<std::string> &objects, int in, int out) {
  LLVMSymbolizer symbolizer(ReaderSymbolizerOptions());
  std::string pending, answer;
  char buf[kBatch * sizeof(Request)];
  for (;;) {
    ssize_t r = ::read(in, buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return 0;
    pending.append(buf, size_t(r));
    size_t used = 0;
    answer.clear();
    for (; pending.size() - used >= sizeof(Request); used += sizeof(Request)) {
      Request q;
      std::memcpy(&q, pending.data() + used, sizeof q);
      if (q.object >= objects.size()) {
        Put32(answer, 0);
        continue;
      }
      auto info = symbolizer.symbolizeInlinedCode(
          objects[q.object], {q.address, llvm::object::SectionedAddress::UndefSection});
      if (!info) {
        llvm::consumeError(info.takeError());
        Put32(answer, 0);
        continue;
      }
      uint32_t n = std::min(info->getNumberOfFrames(), kMaxFrames);
      Put32(answer, n);
      for (uint32_t i = 0; i < n; ++i) {
        const llvm::DILineInfo &d = info->getFrame(i);
        Put32(answer, d.Line);
        Put32(answer, d.Column);
        PutString(answer, d.FunctionName);
        PutString(answer, d.FileName);
      }
    }
    pending.erase(0, used);
    if (!WriteAll(out, answer.data(), answer.size()))
      return 0;
  }
}

DebugReader::DebugReader(std::vector<std::string> objects, double timeout_seconds)
    : objects_(std::move(objects)), timeout_(timeout_seconds) {}

DebugReader::~DebugReader() {
  if (to_child_ >= 0)
    ::close(to_child_); // the child ends on end of input
  if (child_ > 0) {
    int status;
    // It answered everything asked: it only has to see the end of input.
    // Bounded all the same: a child that hangs is killed. Its exit is
    // waited for on a pidfd where the kernel has them: polling in 5 ms
    // steps made every reader cost at least 5 ms (a fuzzing run that starts
    // a reader per input ran at half the speed).
    int pidfd = -1;
#ifdef SYS_pidfd_open
    pidfd = int(::syscall(SYS_pidfd_open, child_, 0));
#endif
    if (pidfd >= 0) {
      struct pollfd p = {pidfd, POLLIN, 0};
      while (::poll(&p, 1, 1000) < 0 && errno == EINTR) {
      }
      ::close(pidfd);
    }
    for (int i = 0; i < 200 && ::waitpid(child_, &status, WNOHANG) == 0; ++i)
      ::usleep(5000);
    if (::waitpid(child_, &status, WNOHANG) == 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, &status, 0);
    }
  }
  if (child_stderr_ >= 0)
    ::close(child_stderr_);
}

void DebugReader::Start() {
  int sv[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    failure_ = std::string("cannot start the debug-information reader: ") + strerror(errno);
    return;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    failure_ = std::string("cannot start the debug-information reader: ") + strerror(errno);
    return;
  }
  pid_t pid = ForkReaderChild();
  if (pid < 0) {
    failure_ = std::string("cannot start the debug-information reader: ") + strerror(errno);
    for (int fd : {sv[0], sv[1], err[0], err[1]})
      ::close(fd);
    return;
  }
  if (pid == 0) {
    // The child says what LLVM said on the stderr pipe (never blocking on it).
    ::fcntl(err[1], F_SETFL, O_NONBLOCK);
    ::dup2(err[1], STDERR_FILENO);
    // The request socket on fd 3, and nothing else of the parent's open:
    // another reader's socket held here would keep that child from ever
    // seeing the end of its input.
    int channel = sv[1] == 3 ? 3 : ::dup2(sv[1], 3);
#ifdef SYS_close_range
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
#endif
    int rc = 3;
    try {
      rc = ServeDebugLookups(objects_, channel, channel);
    } catch (...) {
    }
    ::_exit(rc);
  }
  ::close(sv[1]);
  ::close(err[1]);
  child_ = pid;
  to_child_ = from_child_ = sv[0];
  child_stderr_ = err[0];
}

void DebugReader::Fail(const std::string &why, uint32_t object) {
  int status = 0;
  std::string how = why;
  if (child_ > 0) {
    // Its socket closes a moment before it can be waited for.
    pid_t w = 0;
    for (int i = 0; i < 100 && (w = ::waitpid(child_, &status, WNOHANG)) == 0; ++i)
      ::usleep(10000);
    if (w == 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, &status, 0);
      how = "gave no answer in " + std::to_string(int(timeout_)) + " s";
    } else {
      how = DescribeChildStatus(status);
    }
    child_ = -1;
  }
  // LLVM's last word, if it left one (LLVM ERROR: ..., a sanitizer report).
  if (child_stderr_ >= 0) {
    ::fcntl(child_stderr_, F_SETFL, O_NONBLOCK);
    std::string text;
    char buf[4096];
    for (ssize_t r; text.size() < (1u << 16) && (r = ::read(child_stderr_, buf, sizeof buf)) > 0;)
      text.append(buf, size_t(r));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    size_t nl = text.rfind('\n');
    std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    if (last.size() > 300)
      last = last.substr(0, 300) + "...";
    for (char &c : last)
      if (static_cast<unsigned char>(c) < 0x20)
        c = '?';
    if (!last.empty())
      how += ": " + last;
  }
  failure_ = how.empty() ? "failed" : how;
  if (object < objects_.size())
    failed_object_ = objects_[object];
  if (to_child_ >= 0)
    ::close(to_child_);
  to_child_ = from_child_ = -1;
}

bool DebugReader::ReadAll(void *buf, size_t n) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(timeout_ * 1000));
  char *p = static_cast<char *>(buf);
  while (n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0)
      return false;
    pollfd pfd{from_child_, POLLIN, 0};
    int pr = ::poll(&pfd, 1, int(std::min<int64_t>(left, 1 << 30)));
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr <= 0)
      return false;
    ssize_t r = ::read(from_child_, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

std::vector<std::vector<DebugFrame>>
DebugReader::Lookup(const std::vector<std::pair<uint32_t, uint64_t>> &addresses) {
  std::vector<std::vector<DebugFrame>> out(addresses.size());
  if (child_ < 0 && failure_.empty())
    Start();
  for (size_t begin = 0; begin < addresses.size(); begin += kBatch) {
    size_t end = std::min(addresses.size(), begin + kBatch);
    if (child_ < 0) {
      unanswered_ += addresses.size() - begin;
      break;
    }
    std::string req;
    for (size_t i = begin; i < end; ++i) {
      Request q{addresses[i].first, 0, addresses[i].second};
      req.append(reinterpret_cast<const char *>(&q), sizeof q);
    }
    bool sent = WriteAll(to_child_, req.data(), req.size());
    for (size_t i = begin; i < end; ++i) {
      uint32_t n = 0;
      bool ok = sent && ReadAll(&n, 4) && n <= kMaxFrames;
      for (uint32_t k = 0; ok && k < n; ++k) {
        DebugFrame f;
        uint32_t len = 0;
        ok = ReadAll(&f.line, 4) && ReadAll(&f.column, 4);
        for (std::string *s : {&f.name, &f.file}) {
          ok = ok && ReadAll(&len, 4) && len <= kMaxString;
          if (ok) {
            s->resize(len);
            ok = ReadAll(s->data(), len);
          }
        }
        if (ok)
          out[i].push_back(std::move(f));
      }
      if (!ok) {
        out[i].clear();
        Fail("", addresses[i].first);
        unanswered_ += addresses.size() - i;
        return out;
      }
    }
  }
  return out;
}

} // namespace scalana
