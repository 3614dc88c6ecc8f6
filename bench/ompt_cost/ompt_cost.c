/* A region-heavy MPI + OpenMP program: REGIONS parallel regions, each a
 * short `omp for` loop and its barriers, then one MPI_Allreduce per 1000
 * regions. Prints the in-program wall time of the region loop, the
 * regions per second, and the time per region of the fastest batch of
 * 1000: two spinning threads on shared cores make the whole loop's time
 * vary 2.5x between identical runs, but the fastest batch is one both
 * threads ran undisturbed, the cost of the regions themselves.
 *
 *   ompt_cost REGIONS WORK */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double a[4096];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long regions = argc > 1 ? atol(argv[1]) : 200000;
  int work = argc > 2 ? atoi(argv[2]) : 256;
  if (work > 4096)
    work = 4096;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double sum = 0, best = 1e30, batch0 = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long r = 0; r < regions; ++r) {
    if (r % 1000 == 0)
      batch0 = MPI_Wtime();
#pragma omp parallel
    {
#pragma omp for
      for (int i = 0; i < work; ++i)
        a[i] = a[i] * 0.5 + (double)(i + r);
    }
    sum += a[r % work];
    if (r % 1000 == 999) {
      double dt = MPI_Wtime() - batch0;
      if (dt < best)
        best = dt;
      double total = 0;
      MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      sum = total * 1e-9;
    }
  }
  double t = MPI_Wtime() - t0;
  if (rank == 0) {
    printf("seconds %.6f\n", t);
    printf("regions_per_s %.0f\n", (double)regions / t);
    printf("best_batch_us_per_region %.4f\n", best * 1e3);
    printf("checksum %g\n", sum);
  }
  MPI_Finalize();
  return 0;
}
