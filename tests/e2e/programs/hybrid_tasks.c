/* An MPI + OpenMP program whose work is OpenMP tasks: in each step the
 * master thread of a 2-thread region creates the tasks and both threads run
 * them at the region's closing barrier. With --inject the last rank's last
 * task does four times the work of the others. The report must name the
 * injected task's loop on the last rank, as computation: running a task at
 * a barrier is work, not the barrier's wait.
 *
 *   hybrid_tasks [--inject] [--iters N] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "options.h"

static volatile double sink;

__attribute__((noinline)) static void step_task(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i)
    s += (double)(i % 5) * 0.5;
  sink += s;
}

__attribute__((noinline)) static void extra_task(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) // ROOT CAUSE
    s += (double)(i % 7) * 0.25;
  sink += s;
}

int main(int argc, char **argv) {
  int inject;
  long iters = 30;
  ParseOptions(argc, argv, &inject, &iters);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = 400000L;
  const int slow = inject && rank == size - 1;
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
#pragma omp parallel num_threads(2)
    {
#pragma omp master
      {
        for (int k = 0; k < 6; ++k) {
#pragma omp task
          step_task(n);
        }
#pragma omp task
        extra_task(slow ? 4 * n : n / 4);
      }
    }
    double local = sink, total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc += 1e-9 * total;
  }
  if (rank == 0)
    printf("hybrid_tasks: %d ranks, %ld iterations, checksum %g\n", size, iters, acc);
  MPI_Finalize();
  return 0;
}
