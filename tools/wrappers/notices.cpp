// Once-per-build notices: marker files keyed by the build's make or ninja.
#include "notices.h"

#include "scalana/echo.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace scalana {
namespace {

struct ProcInfo {
  std::string comm;
  long ppid = 0;
  unsigned long long start = 0; // clock ticks after boot: tells reused pids apart
};

// /proc/<pid>/stat: "pid (comm) state ppid ...", start time the 22nd field.
// comm may hold spaces and parentheses: fields follow the last ')'.
bool ReadProc(long pid, ProcInfo *info) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat))
    return false;
  size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return false;
  info->comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 4)
      info->ppid = std::strtol(field.c_str(), nullptr, 10);
    if (i == 22) {
      info->start = std::strtoull(field.c_str(), nullptr, 10);
      return true;
    }
  }
  return false;
}

bool OneOf(const std::string &s, std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (s == n)
      return true;
  return false;
}

bool IsBuildTool(const std::string &comm) {
  return OneOf(comm, {"make", "gmake", "ninja", "ninja-build", "samu"});
}

// Processes between a build tool and the compiler: a walk up goes through
// them and stops at anything else (a test driver, an editor, a login).
bool IsIntermediate(const std::string &comm) {
  return IsBuildTool(comm) ||
         OneOf(comm, {"cmake", "sh", "bash", "dash", "zsh", "ksh", "env", "nice", "time", "timeout",
                      "ccache", "sccache", "distcc", "icecc", "xargs", "flock", "nohup", "stdbuf"});
}

std::string KeyOf(long pid, unsigned long long start) {
  return std::to_string(pid) + "-" + std::to_string(start);
}

std::string Fnv1aHex(const std::string &s) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", h);
  return buf;
}

// The per-user directory of markers, created private; "" if it is unsafe
// (not ours, a symlink, open to others) or cannot be made.
std::string MarkerRoot() {
  std::string base;
  for (const char *var : {"XDG_RUNTIME_DIR", "TMPDIR"})
    if (const char *v = std::getenv(var); v && *v) {
      base = v;
      break;
    }
  if (base.empty())
    base = "/tmp";
  std::string root = base + "/scalana-notices-" + std::to_string(getuid());
  if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
    return "";
  struct stat st;
  if (lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 077) != 0)
    return "";
  return root;
}

// Markers of builds whose make or ninja has exited.
void RemoveFinishedBuilds(const std::string &root, const std::string &current) {
  DIR *d = opendir(root.c_str());
  if (!d)
    return;
  std::vector<std::string> stale;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    size_t dash = name.find('-');
    if (name == current || dash == std::string::npos || name[0] == '.')
      continue;
    long pid = std::strtol(name.c_str(), nullptr, 10);
    ProcInfo p;
    if (!ReadProc(pid, &p) || KeyOf(pid, p.start) != name)
      stale.push_back(root + "/" + name);
  }
  closedir(d);
  for (const std::string &dir : stale) {
    if (DIR *sd = opendir(dir.c_str())) {
      while (dirent *e = readdir(sd))
        if (e->d_name[0] != '.')
          unlink((dir + "/" + e->d_name).c_str());
      closedir(sd);
    }
    rmdir(dir.c_str());
  }
}

// True if this process is the first of its build to claim `text`.
bool Claim(const std::string &text) {
  std::string key = BuildKey();
  if (key.empty())
    return true;
  std::string root = MarkerRoot();
  if (root.empty())
    return true;
  std::string dir = root + "/" + key;
  if (mkdir(dir.c_str(), 0700) == 0)
    RemoveFinishedBuilds(root, key); // the build's first notice: tidy up
  else if (errno != EEXIST)
    return true;
  int fd =
      open((dir + "/" + Fnv1aHex(text)).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  return errno != EEXIST;
}

} // namespace

std::string BuildKey() {
  std::string key;
  long pid = getppid();
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    ProcInfo p;
    if (!ReadProc(pid, &p) || !IsIntermediate(p.comm))
      break;
    if (IsBuildTool(p.comm))
      key = KeyOf(pid, p.start);
    pid = p.ppid;
  }
  return key;
}

namespace {
std::vector<std::string> g_echoed_args;
} // namespace

void SetEchoedArgs(int argc, char **argv) { g_echoed_args = ArgValues(argc, argv); }

// The text's own line ends stay; none inside a value does.
std::string EchoedNotice(const std::string &text) {
  return EchoInMessage(text, g_echoed_args, "\n");
}

void NoticeOncePerBuild(const char *who, const std::string &text) {
  std::string line = std::string(who) + ": " + EchoedNotice(text);
  if (Claim(line))
    std::fprintf(stderr, "%s\n", line.c_str());
}

} // namespace scalana
