/* Serialisation in an OpenMP team: each of two threads computes as much,
 * then does more work inside one critical section, so one of them waits
 * there while the other holds it (on a core of its own: the test runs the
 * rank unbound). The program measures each thread's waits to enter, for
 * the test to hold the profiler's critical waits to.
 *
 *   openmp_critical [REGIONS] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static void work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @work */
    s += (double)(i % 5) * 0.5;
  sink += s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long regions = argc > 1 ? atol(argv[1]) : 40;
  double waited[2] = {0, 0};
  for (long r = 0; r < regions; ++r) {
#pragma omp parallel num_threads(2) /* @region */
    {
      int t = omp_get_thread_num();
      work(200000);
      double before = omp_get_wtime();
#pragma omp critical /* @critical */
      {
        waited[t] += omp_get_wtime() - before;
        work(2000000);
      }
    }
  }
  printf("rank %d waited %.6f %.6f\n", rank, waited[0], waited[1]);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
