/* A communication-bound weak-scaling program: every iteration each rank does
 * the same computation, then an MPI_Alltoall that sends a fixed block to
 * every other rank, so the bytes each rank sends grow with the rank count.
 * Nothing is injected: the loss is in the all-to-all, and the report must
 * name it as communication and say that its bytes per rank grow.
 *
 *   alltoall [--iters N] [--block DOUBLES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double Relax(double *x, int n) {
  double s = 0.0;
  for (int i = 1; i < n - 1; ++i) {
    x[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]);
    s += x[i];
  }
  return s;
}

int main(int argc, char **argv) {
  long iters = 150, block = 4096;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--iters"))
      iters = atol(argv[++i]);
    else if (!strcmp(argv[i], "--block"))
      block = atol(argv[++i]);
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 20000;
  double *x = calloc(n, sizeof(double));
  double *out = malloc(sizeof(double) * block * size), *in = malloc(sizeof(double) * block * size);
  for (int i = 0; i < n; ++i)
    x[i] = (double)((i * 7 + rank) % 13);
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
    for (int sweep = 0; sweep < 40; ++sweep)
      acc += Relax(x, n);
    for (long k = 0; k < block * size; ++k)
      out[k] = acc + (double)k;
    MPI_Alltoall(out, (int)block, MPI_DOUBLE, in, (int)block, MPI_DOUBLE, MPI_COMM_WORLD);
    acc = 1e-9 * in[(it * 31) % (block * size)];
  }
  double total = 0.0;
  MPI_Reduce(&acc, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("alltoall: %d ranks, %ld iterations, checksum %g\n", size, iters, total);
  free(x);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
