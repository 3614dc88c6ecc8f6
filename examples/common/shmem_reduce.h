/* Reductions over all PEs for the OpenSHMEM examples (histogram_shmem,
 * igather_shmem), with the OpenSHMEM 1.4 *_to_all routines: symmetric work,
 * source, result and synchronisation arrays. Consecutive reductions use
 * different pSync and data arrays, so no barrier is needed between them; they
 * are reused only after a barrier.
 */
#ifndef SCALANA_EXAMPLES_SHMEM_REDUCE_H
#define SCALANA_EXAMPLES_SHMEM_REDUCE_H

#include <shmem.h>

enum { kReduceSyncs = 4 };

static long reduce_sync[kReduceSyncs][SHMEM_REDUCE_SYNC_SIZE];
/* Work, source and result per pSync: other PEs may still use the previous
 * reduction's while this PE runs the next. */
static long reduce_long_work[kReduceSyncs][SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double reduce_double_work[kReduceSyncs][SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long reduce_long_in[kReduceSyncs], reduce_long_out[kReduceSyncs];
static double reduce_double_in[kReduceSyncs], reduce_double_out[kReduceSyncs];
static int reduce_calls;

/* Call after shmem_init and before a barrier that precedes the first
 * reduction: no PE may use a pSync before every PE has set it. */
static inline void ShmemReduceInit(void) {
  for (int k = 0; k < kReduceSyncs; ++k)
    for (int s = 0; s < SHMEM_REDUCE_SYNC_SIZE; ++s)
      reduce_sync[k][s] = SHMEM_SYNC_VALUE;
}

/* The pSync and data slot of the next reduction. */
static inline int NextSlot(void) {
  if (reduce_calls > 0 && reduce_calls % kReduceSyncs == 0)
    shmem_barrier_all();
  return reduce_calls++ % kReduceSyncs;
}

/* Each returns the reduction of V over all PEs, on every PE. */
static inline long ShmemSumLong(long v) {
  int k = NextSlot();
  reduce_long_in[k] = v;
  shmem_long_sum_to_all(&reduce_long_out[k], &reduce_long_in[k], 1, 0, 0, shmem_n_pes(),
                        reduce_long_work[k], reduce_sync[k]);
  return reduce_long_out[k];
}

static inline long ShmemMaxLong(long v) {
  int k = NextSlot();
  reduce_long_in[k] = v;
  shmem_long_max_to_all(&reduce_long_out[k], &reduce_long_in[k], 1, 0, 0, shmem_n_pes(),
                        reduce_long_work[k], reduce_sync[k]);
  return reduce_long_out[k];
}

static inline double ShmemMinDouble(double v) {
  int k = NextSlot();
  reduce_double_in[k] = v;
  shmem_double_min_to_all(&reduce_double_out[k], &reduce_double_in[k], 1, 0, 0, shmem_n_pes(),
                          reduce_double_work[k], reduce_sync[k]);
  return reduce_double_out[k];
}

static inline double ShmemMaxDouble(double v) {
  int k = NextSlot();
  reduce_double_in[k] = v;
  shmem_double_max_to_all(&reduce_double_out[k], &reduce_double_in[k], 1, 0, 0, shmem_n_pes(),
                          reduce_double_work[k], reduce_sync[k]);
  return reduce_double_out[k];
}

#endif
