/* An MPI + OpenMP weak-scaling program whose loss is its serial fraction:
 * every iteration each rank relaxes its grid in a parallel loop of two
 * threads, then, with --inject, runs a serial loop outside the region whose
 * work grows with the rank count (bookkeeping over all ranks), then joins
 * the others in an MPI_Allreduce. More threads would not shorten that loop:
 * the report must name it as the serial fraction.
 *
 *   hybrid_serial [--inject] [--iters N] */
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
  const long serial = inject ? 1500000L * size : 0;
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
#pragma omp parallel for schedule(static) num_threads(2)
    for (int i = 1; i < n - 1; ++i)
      y[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]) + 1e-3 * y[i];
    double s = 0.0;
    for (long k = 0; k < serial; ++k) // ROOT CAUSE
      s += (double)(k % 7) * 0.5;
    sink = s;
    double local = y[(it * 31) % n], total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc += 1e-9 * total;
    double *t = x;
    x = y;
    y = t;
  }
  if (rank == 0)
    printf("hybrid_serial: %d ranks, %ld iterations, checksum %g\n", size, iters, acc);
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
