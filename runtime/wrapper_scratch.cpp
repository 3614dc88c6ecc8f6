// Scratch buffers of the generated wrappers (recorder.h): copies of request
// arrays, statuses for calls that ignore theirs, and Fortran's handles and
// statuses converted to C. Per thread, because threads may call MPI
// concurrently; allocated once and reused, so a call allocates only when it
// passes more requests than any before it on its thread.
#include "late_thread_local.h"
#include "recorder.h"
#include "runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <vector>

namespace scalana::rt {

namespace {
struct Scratch {
  std::vector<MPI_Request> saved, requests;
  std::vector<MPI_Status> statuses, converted;
  std::vector<MPI_Fint> status_words;
  std::vector<int> indices;
};

// BUF from this thread's scratch, holding at least N elements (exactly N
// when EXACT), or null when memory is exhausted (and possibly when N is 0).
template <typename T> T *Sized(std::vector<T> Scratch::*buf, size_t n, bool exact = true) noexcept {
  try {
    std::vector<T> &v = LateThreadLocal<Scratch>::Get().*buf;
    if (exact || v.size() < n)
      v.resize(n);
    return v.data();
  } catch (...) {
    return nullptr;
  }
}
} // namespace

const MPI_Request *SaveRequests(const MPI_Request *reqs, int n) noexcept {
  size_t count = size_t(n > 0 ? n : 0);
  MPI_Request *saved = Sized(&Scratch::saved, count);
  if (!saved) { // also when COUNT is 0: nothing to save
    if (count)
      CountError("save_requests");
    return nullptr;
  }
  std::copy(reqs, reqs + count, saved);
  return saved;
}

MPI_Status *StatusScratch(int n) noexcept {
  MPI_Status *buf = Sized(&Scratch::statuses, size_t(n > 0 ? n : 1), false);
  return buf ? buf : MPI_STATUSES_IGNORE;
}

MPI_Fint *FortranStatusScratch(int n) noexcept {
  size_t words = sizeof(MPI_Status) / sizeof(MPI_Fint) * size_t(n > 0 ? n : 1);
  MPI_Fint *buf = Sized(&Scratch::status_words, words, false);
  return buf ? buf : MPI_F_STATUSES_IGNORE;
}

MPI_Status *FortranStatuses(const MPI_Fint *f, int n) noexcept {
  MPI_Status *buf = Sized(&Scratch::converted, size_t(n > 0 ? n : 0));
  if (!buf)
    return nullptr;
  const size_t stride = sizeof(MPI_Status) / sizeof(MPI_Fint);
  for (int i = 0; i < n; ++i)
    PMPI_Status_f2c(f + stride * size_t(i), &buf[size_t(i)]);
  return buf;
}

MPI_Request *FortranRequests(const MPI_Fint *f, int n) noexcept {
  MPI_Request *buf = Sized(&Scratch::requests, size_t(n > 0 ? n : 0));
  if (!buf)
    return nullptr;
  for (int i = 0; i < n; ++i)
    buf[size_t(i)] = PMPI_Request_f2c(f[i]);
  return buf;
}

int *FortranIndices(const MPI_Fint *f, int n) noexcept {
  if (n == MPI_UNDEFINED || n < 0)
    n = 0;
  int *buf = Sized(&Scratch::indices, size_t(n));
  if (!buf)
    return nullptr;
  for (int i = 0; i < n; ++i)
    buf[size_t(i)] = f[i] - 1; // Fortran indices are 1-based
  return buf;
}

void *FortranSymbol(const char *name) noexcept {
  void *p = dlsym(RTLD_NEXT, name);
  return p ? p : dlsym(RTLD_DEFAULT, name);
}

} // namespace scalana::rt
