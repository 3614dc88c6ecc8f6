/* Where a worker's wait at a region's closing barrier ends. Each region
 * of two threads has thread 0 busy 3 ms and thread 1 busy 1 ms; between
 * regions the main thread alone computes 10 ms. libomp reports the end of
 * thread 1's wait at the closing barrier only when the next region
 * releases it: the profiler must end that wait where the region ended
 * (at most 2 ms later), not count the serial 10 ms as waiting.
 *
 *   openmp_region_end [REGIONS] */
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

/* Busy for MS of wall clock (not CPU time: the threads share the cores
 * with other jobs, and a wait is wall clock). */
static void busy_ms(double ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    sink += 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long regions = argc > 1 ? atol(argv[1]) : 30;
  for (long r = 0; r < regions; ++r) {
#pragma omp parallel num_threads(2)
    busy_ms(omp_get_thread_num() == 0 ? 3 : 1);
    busy_ms(10);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
