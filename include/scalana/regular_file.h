// Opening files named by users or by other files (profiles, rank files, the
// profiled binary, source files) without trusting what they are: only
// regular files are read, and never more than a bound. A FIFO would block
// the reader forever and /dev/zero never ends; opening with O_NONBLOCK and
// checking fstat first refuses both at once. Header-only and POSIX-only so
// the runtime shares it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace scalana {

// What kind of file MODE is, for "not a regular file (a FIFO)".
inline const char *FileKind(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a special file";
}

// Why PATH cannot be opened, from errno after open/stat failed.
inline std::string OpenErrorText(int err) {
  if (err == ELOOP)
    return "symbolic link loop: too many levels of symbolic links";
  return std::strerror(err);
}

// A read-only descriptor of the regular file PATH, and its size; -1 with
// *error set ("not a regular file (a FIFO)", "No such file or directory", ...)
// otherwise. The caller closes it.
inline int OpenRegularFile(const std::string &path, uint64_t *size, std::string *error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = OpenErrorText(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = OpenErrorText(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = std::string("not a regular file (") + FileKind(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  // Reads of a regular file never block; back to blocking mode anyway so a
  // file system that honours the flag cannot return short reads.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  *size = uint64_t(st.st_size);
  return fd;
}

// Reads LEN bytes at OFFSET; false when the file ends first or on an error.
inline bool ReadAt(int fd, uint64_t offset, void *buf, size_t len) {
  auto *p = static_cast<char *>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd, p, len, off_t(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= size_t(n);
    offset += uint64_t(n);
  }
  return true;
}

// The whole content of a descriptor from OpenRegularFile, at most MAX bytes:
// false, with *error set, if there is more (the file grew past its size, or
// is larger than MAX) or a read fails.
inline bool ReadAllBounded(int fd, uint64_t max, std::string *out, std::string *error) {
  out->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      *error = std::strerror(errno);
      return false;
    }
    if (n == 0)
      return true;
    if (uint64_t(n) > max - out->size()) {
      *error = "larger than " + std::to_string(max) + " bytes";
      return false;
    }
    out->append(buf, size_t(n));
  }
}

} // namespace scalana
