// Writing a whole buffer to a descriptor (a pipe to or from a child), the
// loop the analyzer's child processes and their parents share. A signal
// that interrupts it (EINTR) or a short write continues it.
#pragma once

#include <cerrno>
#include <cstddef>
#include <unistd.h>

namespace scalana {

// False with *ERR set when a write fails (EPIPE: the reader is gone); a
// write that takes nothing sets ENOSPC.
inline bool WriteAll(int fd, const void *data, size_t n, int *err) {
  const char *p = static_cast<const char *>(data);
  for (size_t done = 0; done < n;) {
    ssize_t w = ::write(fd, p + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      *err = w < 0 ? errno : ENOSPC;
      return false;
    }
    done += size_t(w);
  }
  return true;
}

} // namespace scalana
