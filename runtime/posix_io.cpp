// The program's POSIX I/O calls, timed as its MPI calls are (docs/runtime.md,
// "POSIX I/O"): a rank blocked in write(2) or fsync(2) is off the CPU, where
// no CPU-time sample falls, so without this its I/O is wall time nobody
// placed. Each call of scalana/io_operations.h made from the program's own
// code (a module with a PSG) becomes a row of its call site with its time
// and bytes; the pass gave that call site a vertex of its own.
//
// Hand-written, not generated from mpi_wrappers.spec: POSIX fixes these
// signatures, and there are no Fortran spellings to derive.
//
// Hazards:
// - Everyone calls write: the MPI library, its progress threads, libc's
//   own code past the PLT (not seen at all), and this runtime (bound here by
//   -Bsymbolic-functions). Only calls whose return address lies in the
//   program's code are timed; the rest go straight through.
// - A call made inside a wrapped MPI call belongs to that call (MpiCall's
//   nesting), as any other call the MPI library makes.
// - errno is the program's: the recording after the call may change it, so
//   the call's own errno is put back before returning.
// - Only calls on files and block devices are timed: a pipe, a socket or a
//   terminal waits for another process, not for a device.
// - A signal handler of the program may call write(2) (it is
//   async-signal-safe): the first call from a new call site records that
//   site, which allocates, as an MPI call's first call does. A handler that
//   writes to a file while the code it interrupted held the allocator's
//   lock would wait on it; writes to a terminal or a pipe (the usual crash
//   message) are not recorded and do not.
// - The runtime's signal handlers read (schedstat, perf counters) and its
//   crash path writes, through these: the real functions are resolved when
//   the library loads, never in a handler. A call that comes before that
//   (another library's constructor) resolves it then.
#include "recorder.h"
#include "scalana/io_operations.h"
#include "signal_safe/thread_samples.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <iterator>

namespace scalana::rt {
namespace {

template <typename Fn> Fn Next(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// The next definition of NAME: constant-initialised (this library's other
// initialisers read and write before dynamic ones of this file would run),
// resolved by ResolveAll at load, or at the first call if one comes before
// that. A racing first call stores the same pointer.
template <typename Fn> struct Real {
  const char *name;
  Fn fn = nullptr;
  constexpr explicit Real(const char *n) : name(n) {}
  Fn get() {
    if (!fn)
      fn = Next<Fn>(name);
    return fn;
  }
};

// Whether FD is a file or a block device: what a rank waits for the
// device on. Pipes, sockets and terminals are another process's pace, not
// I/O. fstat is async-signal-safe; errno is the caller's again after it.
bool IsFile(int fd) {
  const int saved = errno;
  struct stat st;
  const bool file = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
  errno = saved;
  return file;
}

// REAL(FD, ARGS...) timed as OP's row when the program's code called it
// (RETURN_ADDRESS) on a file; BYTES: the result counts the bytes moved.
template <typename R, typename Fn, typename... A>
R Timed(const char *op, Fn real, bool bytes, const void *return_address, const void *frame_address,
        int fd, A... args) {
  if (!real) {
    errno = ENOSYS;
    return R(-1);
  }
  if (!IsProgramAddress(uintptr_t(return_address)) || !IsFile(fd))
    return real(fd, args...);
  R result;
  int error;
  {
    MpiCall call(op, MpiClass::Other, return_address, frame_address);
    result = real(fd, args...);
    error = errno;
    call.Stop();
    if (bytes && call.active() && result > 0)
      call.add_bytes(uint64_t(result));
  }
  errno = error;
  return result;
}

} // namespace
} // namespace scalana::rt

using scalana::rt::Real;
using scalana::rt::Timed;

// One wrapper: its return type, name, parameters, their names, and whether
// the result counts bytes.
#define SCALANA_POSIX_IO(R, NAME, PARAMS, ARGS, BYTES)                                             \
  namespace {                                                                                      \
  Real<R(*) PARAMS> real_##NAME(#NAME);                                                            \
  }                                                                                                \
  extern "C" R NAME PARAMS {                                                                       \
    return Timed<R>(#NAME, real_##NAME.get(), BYTES, __builtin_return_address(0),                  \
                    __builtin_frame_address(0) SCALANA_UNPAREN ARGS);                              \
  }
#define SCALANA_UNPAREN(...) , __VA_ARGS__
#define SCALANA_POSIX_IO_OPS(X)                                                                    \
  X(write)                                                                                         \
  X(pwrite) X(pwrite64) X(writev) X(pwritev) X(read) X(pread) X(pread64) X(readv) X(preadv)        \
      X(fsync) X(fdatasync) X(sync_file_range)

SCALANA_POSIX_IO(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), true)
SCALANA_POSIX_IO(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at),
                 true)
SCALANA_POSIX_IO(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t at),
                 (fd, buf, n, at), true)
SCALANA_POSIX_IO(ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n), true)
SCALANA_POSIX_IO(ssize_t, pwritev, (int fd, const struct iovec *iov, int n, off_t at),
                 (fd, iov, n, at), true)
SCALANA_POSIX_IO(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n), true)
SCALANA_POSIX_IO(ssize_t, pread, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at), true)
SCALANA_POSIX_IO(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t at), (fd, buf, n, at),
                 true)
SCALANA_POSIX_IO(ssize_t, readv, (int fd, const struct iovec *iov, int n), (fd, iov, n), true)
SCALANA_POSIX_IO(ssize_t, preadv, (int fd, const struct iovec *iov, int n, off_t at),
                 (fd, iov, n, at), true)
SCALANA_POSIX_IO(int, fsync, (int fd), (fd), false)
SCALANA_POSIX_IO(int, fdatasync, (int fd), (fd), false)
SCALANA_POSIX_IO(int, sync_file_range, (int fd, off64_t at, off64_t n, unsigned int flags),
                 (fd, at, n, flags), false)

// Before this library's default-priority initialisers (the recorder's reads
// its clock's source at load) and long before any signal handler runs.
__attribute__((constructor(101))) static void ResolveAll() {
#define SCALANA_RESOLVE(NAME) real_##NAME.get();
  SCALANA_POSIX_IO_OPS(SCALANA_RESOLVE)
#undef SCALANA_RESOLVE
}

// One wrapper for each call the pass and the analyzer call I/O.
#define SCALANA_COUNT(NAME) +1
static_assert(0 SCALANA_POSIX_IO_OPS(SCALANA_COUNT) == std::size(scalana::kPosixIoOperations),
              "posix_io.cpp wraps every call of scalana/io_operations.h");
#undef SCALANA_COUNT
