/* MPI calls the compiler merged, after Nekbone's gop: Gop reduces with one
 * of four MPI_Allreduce calls, and at -O2 clang sinks them into one call
 * instruction whose line is 0. Every rank does the same computation (weak
 * scaling), so the loss is the reductions' waiting: nothing is injected, and
 * the report must name communication, never computation, for it.
 *
 *   merged_mpi [--iters N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The four calls differ only in the operation: one call with a line-0
 * location at -O2 (tests/e2e/e2e.py checks the report's warning that says
 * so, or the test would not test it). */
__attribute__((noinline)) void Gop(double *x, double *w, int n, int op) {
  if (op == 0)
    MPI_Allreduce(x, w, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (op == 1)
    MPI_Allreduce(x, w, n, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
  else if (op == 2)
    MPI_Allreduce(x, w, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  else
    MPI_Allreduce(x, w, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  memcpy(x, w, sizeof(double) * (size_t)n);
}

static double Relax(double *x, int n) {
  double s = 0.0;
  for (int i = 1; i < n - 1; ++i) {
    x[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]);
    s += x[i];
  }
  return s;
}

int main(int argc, char **argv) {
  long iters = 600;
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "--iters"))
      iters = atol(argv[++i]);
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = 20000, m = 64;
  double *x = calloc(n, sizeof(double)), r[64], w[64];
  for (int i = 0; i < n; ++i)
    x[i] = (double)((i * 7 + rank) % 13);
  double acc = 0.0;
  for (long it = 0; it < iters; ++it) {
    for (int sweep = 0; sweep < 10; ++sweep)
      acc += Relax(x, n);
    for (int k = 0; k < m; ++k)
      r[k] = 1.0 + 1e-12 * (acc + k);
    Gop(r, w, m, (int)(it % 4));
    acc = 1e-9 * r[it % m];
  }
  if (rank == 0)
    printf("merged_mpi: checksum %g\n", acc);
  free(x);
  MPI_Finalize();
  return 0;
}
