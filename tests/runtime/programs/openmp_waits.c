/* OpenMP waits and the fork's calling context. One function forks a
 * parallel region of two threads and is called from two places; thread 0
 * does three times the work of thread 1 in the same loop, so thread 1 waits
 * at the region's closing barrier for the rest of each region. The
 * profiler must place thread 1's samples under each caller (its stack holds
 * no frame of either), count its waiting as OpenMP wait time of the region,
 * and book the samples taken while it spins there to that wait.
 *
 *   openmp_waits [REGIONS] */
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static void work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @work */
    s += (double)(i % 5) * 0.5;
  sink += s;
}

__attribute__((noinline)) static void region(long n) {
#pragma omp parallel num_threads(2)            /* @region */
  work(omp_get_thread_num() == 0 ? 3 * n : n); /* @call_work */
}

__attribute__((noinline)) static void caller_a(long regions, long n) {
  for (long r = 0; r < regions; ++r)
    region(n); /* @call_a */
}

__attribute__((noinline)) static void caller_b(long regions, long n) {
  for (long r = 0; r < regions; ++r)
    region(n); /* @call_b */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long regions = argc > 1 ? atol(argv[1]) : 40;
  caller_a(regions, 4000000L);
  caller_b(regions, 4000000L);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
