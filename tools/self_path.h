// Where the running tool lives. The front end, the launcher and the compiler
// wrappers find their siblings (subcommands, runtime library, pass plugin)
// relative to it, so the build tree and an installed prefix both work.
#pragma once

#include <climits>
#include <string>
#include <unistd.h>

namespace scalana {

// Directory of /proc/self/exe, or "." when it cannot be read.
inline std::string ExecutableDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  if (n <= 0 || size_t(n) >= sizeof buf)
    return ".";
  std::string path(buf, size_t(n));
  return path.substr(0, path.rfind('/'));
}

} // namespace scalana
