/* Attribution: the same heavy loop reached from two call sites, the first
 * doing 3x the work of the second. Its samples must land on two different
 * contexts, about 3:1. Weak scaling: every rank does the same work. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) void heavy(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i)
    s += (double)(i % 7) * 0.5;
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 400000000L;
  /* Interleaved rounds: interference from other jobs hits both sites alike. */
  for (int round = 0; round < 10; ++round) {
    heavy(3 * n / 10); /* call site A: 3x */
    heavy(n / 10);     /* call site B: 1x */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
