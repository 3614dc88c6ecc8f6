// A program name looked up as execvp/execve look it up: the launcher's
// warning about the program's file and the report's dot runner share it.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace scalana {

// PROG as execvp takes it: a name with a slash as it is, else the first
// executable regular file of that name on PATH (its default when unset).
// "" when there is none, with *ERR ENOENT, or EACCES where one was found
// but not executable.
inline std::string FindProgram(const std::string &prog, int *err) {
  *err = 0;
  if (prog.find('/') != std::string::npos)
    return prog;
  const char *env = std::getenv("PATH");
  std::string dirs = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  *err = ENOENT;
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
      *err = EACCES;
    }
    start = end + 1;
  }
  return {};
}

} // namespace scalana
