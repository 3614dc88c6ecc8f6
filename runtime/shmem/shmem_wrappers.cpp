// OpenSHMEM wrappers (docs/async.md, "OpenSHMEM"): the program's shmem_*
// calls reach these definitions first (libscalana-rt.so is preloaded) and go
// on to the implementation through its profiling interface, pshmem_*.
//
// Open MPI's oshmem starts and ends MPI inside shmem_init/shmem_finalize
// without passing through MPI_Init/MPI_Finalize, so the profile is started
// and written here. PEs are MPI_COMM_WORLD ranks there. Operations are
// recorded like MPI one-sided ones (recorder.h) on one window over the world,
// created here only for its group: its handle keys the pending operations
// that shmem_quiet and shmem_barrier_all complete. Nothing is sent through it.
//
// Nothing here needs liboshmem: the next definitions are looked up with
// dlsym, so a program that does not use OpenSHMEM never calls these and the
// library loads without it. Nothing throws (the recorder's helpers catch).
#include "recorder.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace scalana::rt {
namespace {

// The implementation's entry point: the profiling name first; an
// implementation without one is called by its own name (the next definition
// after ours). Hazard: null only when neither exists, and then the program
// could not have been linked to call us.
void *Next(const char *profiling_name, const char *name) noexcept {
  void *f = dlsym(RTLD_NEXT, profiling_name);
  return f ? f : dlsym(RTLD_NEXT, name);
}

// The PEs' window; MPI_WIN_NULL before shmem_init, if its creation failed,
// and after shmem_finalize (then nothing is recorded but the calls' time).
std::atomic<MPI_Win> g_pe_window{MPI_WIN_NULL};

bool ProfileStartedBefore() noexcept {
  int initialized = 0;
  return PMPI_Initialized(&initialized) == MPI_SUCCESS && initialized;
}

// Collective over the world, like shmem_init itself, so every PE creates it.
// Errors return instead of aborting: without the window only the dependence
// rows are lost.
void CreatePeWindow() noexcept {
  MPI_Errhandler saved;
  if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved) != MPI_SUCCESS)
    return;
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Win win = MPI_WIN_NULL;
  if (PMPI_Win_create(nullptr, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS) {
    WinCreated(win);
    g_pe_window.store(win);
  }
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
  PMPI_Errhandler_free(&saved);
}

// Hazard: collective; shmem_finalize is, and runs it on every PE.
void FreePeWindow() noexcept {
  MPI_Win win = g_pe_window.exchange(MPI_WIN_NULL);
  if (win != MPI_WIN_NULL)
    PMPI_Win_free(&win);
}

template <typename Start> void Init(const char *op, const void *ra, const void *fa, Start start) {
  MpiCall call(op, MpiClass::Other, ra, fa);
  // A program that called MPI_Init first has its profile started already.
  bool ours = !ProfileStartedBefore();
  if (ours)
    InitStarting();
  start();
  call.Stop();
  if (!ProfileStartedBefore())
    return; // the implementation failed to start: nothing to profile
  if (ours && call.active())
    InitDone(call);
  CreatePeWindow();
}

// An operation on PE's memory: an rma row (count, bytes, no wait) and a
// pending operation until shmem_quiet or shmem_barrier_all.
void Issued(MpiCall &call, int pe, uint64_t bytes) noexcept {
  call.Stop();
  MPI_Win win = g_pe_window.load(std::memory_order_relaxed);
  if (!call.active() || win == MPI_WIN_NULL || pe < 0) {
    call.add_bytes(bytes);
    return;
  }
  Rma(call, win, pe, bytes);
}

} // namespace
} // namespace scalana::rt

using scalana::MpiClass;
using scalana::rt::MpiCall;

#define SCALANA_NEXT(name, type)                                                                  \
  static const auto next_ = reinterpret_cast<type>(scalana::rt::Next("p" #name, #name))
#define SCALANA_CALL(name, cls)                                                                   \
  MpiCall call(#name, cls, __builtin_return_address(0), __builtin_frame_address(0))

extern "C" {

// ---- start and end

void shmem_init(void) {
  SCALANA_NEXT(shmem_init, void (*)());
  scalana::rt::Init("shmem_init", __builtin_return_address(0), __builtin_frame_address(0),
                    [] { next_(); });
}

int shmem_init_thread(int requested, int *provided) {
  SCALANA_NEXT(shmem_init_thread, int (*)(int, int *));
  int rc = 0;
  scalana::rt::Init("shmem_init_thread", __builtin_return_address(0),
                    __builtin_frame_address(0), [&] { rc = next_(requested, provided); });
  return rc;
}

void start_pes(int npes) { // OpenSHMEM 1.0's shmem_init
  SCALANA_NEXT(start_pes, void (*)(int));
  scalana::rt::Init("start_pes", __builtin_return_address(0), __builtin_frame_address(0),
                    [&] { next_(npes); });
}

void shmem_finalize(void) {
  SCALANA_NEXT(shmem_finalize, void (*)());
  {
    SCALANA_CALL(shmem_finalize, MpiClass::Other);
    // Written while MPI still runs: oshmem ends it without MPI_Finalize.
    scalana::rt::FinalizeProfile();
  }
  scalana::rt::FreePeWindow();
  next_();
}

void shmem_global_exit(int status) {
  SCALANA_NEXT(shmem_global_exit, void (*)(int));
  scalana::rt::AbortProfile(status);
  next_(status);
}

// ---- completion and synchronisation

// Completes this thread's pending operations: its time is wait on their
// targets, split by operation count (as MPI_Win_flush_all).
void shmem_quiet(void) {
  SCALANA_NEXT(shmem_quiet, void (*)());
  SCALANA_CALL(shmem_quiet, MpiClass::OneSided);
  next_();
  call.Stop();
  MPI_Win win = scalana::rt::g_pe_window.load(std::memory_order_relaxed);
  if (call.active() && win != MPI_WIN_NULL)
    scalana::rt::RmaSync(call, win, MPI_ANY_SOURCE);
}

// Orders, does not complete: the call's time only.
void shmem_fence(void) {
  SCALANA_NEXT(shmem_fence, void (*)());
  SCALANA_CALL(shmem_fence, MpiClass::OneSided);
  next_();
}

// A quiet and a barrier over all PEs (as MPI_Win_fence): wait on the pending
// operations' targets, or on the collective when none were pending.
void shmem_barrier_all(void) {
  SCALANA_NEXT(shmem_barrier_all, void (*)());
  SCALANA_CALL(shmem_barrier_all, MpiClass::Collective);
  next_();
  call.Stop();
  MPI_Win win = scalana::rt::g_pe_window.load(std::memory_order_relaxed);
  if (call.active() && win != MPI_WIN_NULL)
    scalana::rt::WinColl(call, win);
}

// A barrier that completes nothing.
void shmem_sync_all(void) {
  SCALANA_NEXT(shmem_sync_all, void (*)());
  SCALANA_CALL(shmem_sync_all, MpiClass::Collective);
  next_();
  call.Stop();
  if (call.active() && scalana::rt::g_pe_window.load(std::memory_order_relaxed) != MPI_WIN_NULL)
    scalana::rt::Coll(call, MPI_COMM_WORLD, 0);
}

// ---- operations on remote memory
//
// Blocking gets and fetching atomics are recorded like MPI_Get: their
// transfer is done when they return, but their wait is only their call's
// time; the next quiet or barrier completes them as pending operations.

// N elements of SIZE bytes between DEST and SRC (T: the element type, void
// for the untyped calls).
#define SCALANA_TRANSFER(T, name, size)                                                           \
  void shmem_##name(T *dest, const T *src, size_t n, int pe) {                                    \
    SCALANA_NEXT(shmem_##name, void (*)(T *, const T *, size_t, int));                            \
    SCALANA_CALL(shmem_##name, MpiClass::OneSided);                                               \
    next_(dest, src, n, pe);                                                                      \
    scalana::rt::Issued(call, pe, uint64_t(n) * (size));                                          \
  }

// One element of T on PE: single-element puts and gets, and the atomics.
#define SCALANA_ONE(T, name, params, args)                                                        \
  void shmem_##name params {                                                                      \
    SCALANA_NEXT(shmem_##name, void(*) params);                                                   \
    SCALANA_CALL(shmem_##name, MpiClass::OneSided);                                               \
    next_ args;                                                                                   \
    scalana::rt::Issued(call, pe, sizeof(T));                                                     \
  }
#define SCALANA_ONE_FETCH(T, name, params, args)                                                  \
  T shmem_##name params {                                                                         \
    SCALANA_NEXT(shmem_##name, T(*) params);                                                      \
    SCALANA_CALL(shmem_##name, MpiClass::OneSided);                                               \
    T v = next_ args;                                                                             \
    scalana::rt::Issued(call, pe, sizeof(T));                                                     \
    return v;                                                                                     \
  }

#define SCALANA_PUT_GET(T, t)                                                                     \
  SCALANA_TRANSFER(T, t##_put, sizeof(T))                                                         \
  SCALANA_TRANSFER(T, t##_get, sizeof(T))                                                         \
  SCALANA_TRANSFER(T, t##_put_nbi, sizeof(T))                                                     \
  SCALANA_TRANSFER(T, t##_get_nbi, sizeof(T))                                                     \
  SCALANA_ONE(T, t##_p, (T * addr, T value, int pe), (addr, value, pe))                           \
  SCALANA_ONE_FETCH(T, t##_g, (const T *addr, int pe), (addr, pe))

SCALANA_PUT_GET(char, char)
SCALANA_PUT_GET(short, short)
SCALANA_PUT_GET(int, int)
SCALANA_PUT_GET(long, long)
SCALANA_PUT_GET(long long, longlong)
SCALANA_PUT_GET(float, float)
SCALANA_PUT_GET(double, double)
SCALANA_PUT_GET(long double, longdouble)
SCALANA_PUT_GET(signed char, schar)
SCALANA_PUT_GET(unsigned char, uchar)
SCALANA_PUT_GET(unsigned short, ushort)
SCALANA_PUT_GET(unsigned int, uint)
SCALANA_PUT_GET(unsigned long, ulong)
SCALANA_PUT_GET(unsigned long long, ulonglong)
SCALANA_PUT_GET(int8_t, int8)
SCALANA_PUT_GET(int16_t, int16)
SCALANA_PUT_GET(int32_t, int32)
SCALANA_PUT_GET(int64_t, int64)
SCALANA_PUT_GET(uint8_t, uint8)
SCALANA_PUT_GET(uint16_t, uint16)
SCALANA_PUT_GET(uint32_t, uint32)
SCALANA_PUT_GET(uint64_t, uint64)
SCALANA_PUT_GET(size_t, size)
SCALANA_PUT_GET(ptrdiff_t, ptrdiff)

// Untyped: elements of 1 to 16 bytes.
#define SCALANA_MEM_FAMILY(dir)                                                                   \
  SCALANA_TRANSFER(void, dir##mem, 1)                                                             \
  SCALANA_TRANSFER(void, dir##mem_nbi, 1)                                                         \
  SCALANA_TRANSFER(void, dir##8, 1)                                                               \
  SCALANA_TRANSFER(void, dir##8_nbi, 1)                                                           \
  SCALANA_TRANSFER(void, dir##16, 2)                                                              \
  SCALANA_TRANSFER(void, dir##16_nbi, 2)                                                          \
  SCALANA_TRANSFER(void, dir##32, 4)                                                              \
  SCALANA_TRANSFER(void, dir##32_nbi, 4)                                                          \
  SCALANA_TRANSFER(void, dir##64, 8)                                                              \
  SCALANA_TRANSFER(void, dir##64_nbi, 8)                                                          \
  SCALANA_TRANSFER(void, dir##128, 16)                                                            \
  SCALANA_TRANSFER(void, dir##128_nbi, 16)
SCALANA_MEM_FAMILY(put)
SCALANA_MEM_FAMILY(get)

// ---- atomics: one operation of sizeof(T) bytes on PE

// Every AMO type (OpenSHMEM 1.4): fetch, set and swap.
#define SCALANA_AMO_EXTENDED(T, t)                                                                \
  SCALANA_ONE_FETCH(T, t##_atomic_fetch, (const T *src, int pe), (src, pe))                       \
  SCALANA_ONE(T, t##_atomic_set, (T * dest, T value, int pe), (dest, value, pe))                  \
  SCALANA_ONE_FETCH(T, t##_atomic_swap, (T * dest, T value, int pe), (dest, value, pe))
// Integer AMO types: add, inc and their fetching forms, compare-and-swap.
#define SCALANA_AMO_STANDARD(T, t)                                                                \
  SCALANA_AMO_EXTENDED(T, t)                                                                      \
  SCALANA_ONE(T, t##_atomic_add, (T * dest, T value, int pe), (dest, value, pe))                  \
  SCALANA_ONE(T, t##_atomic_inc, (T * dest, int pe), (dest, pe))                                  \
  SCALANA_ONE_FETCH(T, t##_atomic_fetch_add, (T * dest, T value, int pe), (dest, value, pe))      \
  SCALANA_ONE_FETCH(T, t##_atomic_fetch_inc, (T * dest, int pe), (dest, pe))                      \
  SCALANA_ONE_FETCH(T, t##_atomic_compare_swap, (T * dest, T cond, T value, int pe),              \
                    (dest, cond, value, pe))
// The names OpenSHMEM 1.4 deprecated, for int, long and long long only.
#define SCALANA_AMO_DEPRECATED(T, t)                                                              \
  SCALANA_ONE_FETCH(T, t##_fetch, (const T *src, int pe), (src, pe))                              \
  SCALANA_ONE(T, t##_set, (T * dest, T value, int pe), (dest, value, pe))                         \
  SCALANA_ONE_FETCH(T, t##_swap, (T * dest, T value, int pe), (dest, value, pe))                  \
  SCALANA_ONE(T, t##_add, (T * dest, T value, int pe), (dest, value, pe))                         \
  SCALANA_ONE(T, t##_inc, (T * dest, int pe), (dest, pe))                                         \
  SCALANA_ONE_FETCH(T, t##_fadd, (T * dest, T value, int pe), (dest, value, pe))                  \
  SCALANA_ONE_FETCH(T, t##_finc, (T * dest, int pe), (dest, pe))                                  \
  SCALANA_ONE_FETCH(T, t##_cswap, (T * dest, T cond, T value, int pe), (dest, cond, value, pe))

SCALANA_AMO_STANDARD(int, int)
SCALANA_AMO_STANDARD(long, long)
SCALANA_AMO_STANDARD(long long, longlong)
SCALANA_AMO_STANDARD(unsigned int, uint)
SCALANA_AMO_STANDARD(unsigned long, ulong)
SCALANA_AMO_STANDARD(unsigned long long, ulonglong)
SCALANA_AMO_EXTENDED(float, float)
SCALANA_AMO_EXTENDED(double, double)
SCALANA_AMO_DEPRECATED(int, int)
SCALANA_AMO_DEPRECATED(long, long)
SCALANA_AMO_DEPRECATED(long long, longlong)
// shmem_float_swap and friends of 1.3 (fetch, set, swap only).
SCALANA_ONE_FETCH(float, float_fetch, (const float *src, int pe), (src, pe))
SCALANA_ONE(float, float_set, (float *dest, float value, int pe), (dest, value, pe))
SCALANA_ONE_FETCH(float, float_swap, (float *dest, float value, int pe), (dest, value, pe))
SCALANA_ONE_FETCH(double, double_fetch, (const double *src, int pe), (src, pe))
SCALANA_ONE(double, double_set, (double *dest, double value, int pe), (dest, value, pe))
SCALANA_ONE_FETCH(double, double_swap, (double *dest, double value, int pe), (dest, value, pe))

} // extern "C"
