/* An MPI + OpenMP weak-scaling program: every iteration each rank relaxes
 * its grid in a parallel region of two threads (an `omp for` loop), then
 * joins the others in an MPI_Allreduce. With --inject, thread 0 of the last
 * rank does extra work inside the region that grows with the rank count, and
 * every other rank waits for it at the MPI_Allreduce. The loss is that loop:
 * the report must name it, on its line, through the parallel region
 * (`main > parallel region (hybrid_omp.c:N)`), not through the compiler's
 * outlined function.
 *
 *   hybrid_omp [--inject] [--iters N] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"

static volatile double sink;

int main(int argc, char **argv) {
  int inject;
  long iters = 40;
  ParseOptions(argc, argv, &inject, &iters);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 200000;
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i)
    x[i] = y[i] = (double)((i * 7 + rank) % 13);
  const long extra = inject && rank == size - 1 ? 1500000L * size : 0;
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
#pragma omp parallel num_threads(2)
    {
      for (int sweep = 0; sweep < 6; ++sweep) {
#pragma omp for
        for (int i = 1; i < n - 1; ++i)
          y[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]) + 1e-3 * y[i];
      }
      if (omp_get_thread_num() == 0) {
        double s = 0.0;
        for (long k = 0; k < extra; ++k) // ROOT CAUSE
          s += (double)(k % 7) * 0.5;
        sink = s;
      }
    }
    double local = y[(it * 31) % n], total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc += 1e-9 * total;
    double *t = x;
    x = y;
    y = t;
  }
  if (rank == 0)
    printf("hybrid_omp: %d ranks, %d threads each, %ld iterations, checksum %g\n", size, 2, iters,
           acc);
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
