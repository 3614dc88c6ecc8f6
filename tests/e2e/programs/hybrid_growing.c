/* An MPI + OpenMP program whose loss is a thread imbalance that grows with
 * the rank count: in a `schedule(static)` loop, the upper half of the
 * iterations (thread 1's) costs more the more ranks there are, so thread
 * 1's time over thread 0's doubles each time the ranks double, on every
 * rank alike, while the balanced rest of the work stays the same per rank.
 * (Long and steep enough that the excess at 4 ranks is about twice the
 * sampling noise of its growth: at 20 iterations and half the slope one
 * run in ten fell just under it.)
 * The report must name the inner loop with its culprit thread, and as
 * non-scalable: the imbalance is what grows, not what any rank does more.
 *
 *   hybrid_growing [--inject] [--iters N]   (without --inject: balanced) */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"

int main(int argc, char **argv) {
  int inject;
  long iters = 30;
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
      const long cost = (inject && i >= n / 2) ? 5000 + 2500L * size : 5000;
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
    printf("hybrid_growing: %d ranks, %ld iterations, checksum %g\n", size, iters, acc);
  free(v);
  MPI_Finalize();
  return 0;
}
