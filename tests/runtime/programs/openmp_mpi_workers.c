/* MPI calls made by OpenMP workers. One function forks a region of two
 * threads and is called from two places; in it each thread computes, then
 * calls MPI_Allreduce on a communicator of its own (MPI_THREAD_MULTIPLE).
 * The worker's stack starts at the region's body, so its call's context
 * must take the fork's calling context, as its samples do, and take the
 * right one for each caller of the region.
 *
 *   openmp_mpi_workers [REGIONS] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;
static MPI_Comm comms[2];

__attribute__((noinline)) static void work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @work */
    s += (double)(i % 5) * 0.5;
  sink += s;
}

__attribute__((noinline)) static void region(long n) {
#pragma omp parallel num_threads(2) /* @region */
  {
    int t = omp_get_thread_num();
    work(n);
    double x = t, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[t]); /* @allreduce */
    sink += y;
  }
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
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "openmp_mpi_workers: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  long regions = argc > 1 ? atol(argv[1]) : 20;
  caller_a(regions, 2000000L);
  caller_b(regions, 2000000L);
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
  MPI_Finalize();
  return 0;
}
