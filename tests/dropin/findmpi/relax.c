// One-dimensional relaxation: sweeps over a local block, a halo exchange
// between the sweeps (exchange.cpp) and a residual reduced over all ranks.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void exchange_halo(double *u, int n);

static double sweep(double *u, double *v, int n) {
  double change = 0;
  for (int i = 1; i < n - 1; ++i) {
    v[i] = 0.5 * (u[i - 1] + u[i + 1]);
    change += (v[i] - u[i]) * (v[i] - u[i]);
  }
  for (int i = 1; i < n - 1; ++i)
    u[i] = v[i];
  return change;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int iterations = argc > 1 ? atoi(argv[1]) : 2000;
  const int n = 20000;
  double *u = calloc(n, sizeof *u), *v = calloc(n, sizeof *v);
  u[0] = u[n - 1] = 1.0;
  double residual = 0;
  for (int it = 0; it < iterations; ++it) {
    exchange_halo(u, n);
    double local = sweep(u, v, n);
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("residual %.3e\n", residual);
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
