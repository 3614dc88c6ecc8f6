// The POSIX I/O calls ScalAna times as I/O (docs/runtime.md, "POSIX I/O"):
// one table for the pass (a vertex per call, as for an MPI call), the
// runtime (its wrappers) and the analyzer (their time is I/O).
#pragma once

#include <string_view>

namespace scalana {

// The calls that move a file's data or wait for it to reach the device:
// where a rank blocks in the kernel, unseen by CPU-time sampling. stdio's
// buffered calls are left out: their time is in the write(2) or fsync(2)
// they end in when the program's own code calls them, and glibc's stdio
// calls its write internally, past any interposer.
inline constexpr std::string_view kPosixIoOperations[] = {
    "write",   "pwrite", "pwrite64", "writev", "pwritev",   "read",           "pread",
    "pread64", "readv",  "preadv",   "fsync",  "fdatasync", "sync_file_range"};

inline bool IsPosixIoOperation(std::string_view name) {
  for (std::string_view op : kPosixIoOperations)
    if (name == op)
      return true;
  return false;
}

// An operation whose time is I/O: MPI-IO's MPI_File_* or a POSIX call above.
inline bool IsIoOperationName(std::string_view op) {
  return op.substr(0, 9) == "MPI_File_" || IsPosixIoOperation(op);
}

} // namespace scalana
