// Writing a whole buffer to a file descriptor: the one loop every output
// path uses (the runtime's rank files, premade end records and snapshot
// containers; the analyzer's pipes to and from its child processes).
// Async-signal-safe (write and pwrite only, no allocation), so that code run
// from a termination handler may use it too.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <sys/types.h>
#include <unistd.h>

namespace scalana {

// Writes N bytes of P to FD, at offset AT (pwrite) or, when AT is negative,
// at the file position. A signal that interrupts it (EINTR) or a short write
// continues it. False with *ERR set when a write fails; a write that takes
// nothing sets ENOSPC, as only a full device returns 0.
inline bool WriteWhole(int fd, const void *data, size_t n, int64_t at, int *err) {
  const char *p = static_cast<const char *>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t w = at < 0 ? write(fd, p + done, n - done)
                       : pwrite(fd, p + done, n - done, off_t(at) + off_t(done));
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
