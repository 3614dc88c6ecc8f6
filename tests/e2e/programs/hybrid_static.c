/* An MPI + OpenMP program whose loss is a `schedule(static)` loop over an
 * imbalanced iteration space: iteration i costs i, so of two threads the
 * one given the upper half (thread 1) works three times as long as thread
 * 0, which waits for it at the loop's barrier, on every rank alike. The
 * ranks are balanced: only the thread dimension shows the loss, and the
 * report must name the inner loop with its culprit thread.
 *
 *   hybrid_static [--inject] [--iters N]   (without --inject: i costs 1) */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"

int main(int argc, char **argv) {
  int inject;
  long iters = 20;
  ParseOptions(argc, argv, &inject, &iters);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 2000;
  double *v = calloc(n, sizeof(double));
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
#pragma omp parallel for schedule(static) num_threads(2)
    for (int i = 0; i < n; ++i) {
      const long cost = inject ? (long)i * 5 : 5000;
      double s = v[i];
      for (long k = 0; k < cost; ++k) // ROOT CAUSE
        s += (double)((k + i) % 5) * 1e-3;
      v[i] = s * 0.5;
    }
    double local = v[(it * 7) % n], total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc += 1e-9 * total;
  }
  if (rank == 0)
    printf("hybrid_static: %d ranks, %ld iterations, checksum %g\n", size, iters, acc);
  free(v);
  MPI_Finalize();
  return 0;
}
