/* An MPI + OpenMP weak-scaling program whose loss is one thread: every
 * iteration each rank relaxes its grid in a parallel loop of two chunks,
 * one per thread (schedule(static)), then joins the others in an
 * MPI_Allreduce. With --inject, the chunk of thread 0 on the last rank does
 * extra work that grows with the rank count: thread 1 of that rank waits
 * for it at the loop's barrier, and every other rank waits for that rank at
 * the MPI_Allreduce. The report must name the loop, through the parallel
 * region, with its culprit `rank <last> thread 0`, and count both waits in
 * what a fix gives back. Without --inject the threads and ranks are
 * balanced: no computation may stand out.
 *
 *   hybrid_threads [--inject] [--iters N] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"

static volatile double sink;

static void relax(const double *x, double *y, int lo, int hi) {
  for (int sweep = 0; sweep < 4; ++sweep)
    for (int i = lo; i < hi; ++i)
      y[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]) + 1e-3 * y[i];
}

int main(int argc, char **argv) {
  int inject;
  long iters = 40;
  ParseOptions(argc, argv, &inject, &iters);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 200002;
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i)
    x[i] = y[i] = (double)((i * 7 + rank) % 13);
  const long extra = inject && rank == size - 1 ? 1200000L * size : 0;
  const int half = (n - 2) / 2;
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
#pragma omp parallel for schedule(static) num_threads(2)
    for (int chunk = 0; chunk < 2; ++chunk) {
      relax(x, y, 1 + chunk * half, 1 + (chunk + 1) * half);
      if (chunk == 0) {
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
    printf("hybrid_threads: %d ranks, %d threads each, %ld iterations, checksum %g\n", size,
           omp_get_max_threads(), iters, acc);
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
