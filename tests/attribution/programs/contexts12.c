/* One line reached from twelve calling contexts, after Zeus-MP's boundary
 * routine: Boundary is called from twelve places of the time step, and its
 * loop's work grows with the square of the rank count on every rank (weak
 * scaling otherwise), so that its growth stands well out of the sampling
 * noise. At 8 ranks the loop is about 20% of each rank's CPU time (about 5%
 * of all the time measured, MPI waits included), so each context holds
 * under the 1% share a vertex needs to be reported alone: the line must be
 * found non-scalable with its contexts summed.
 *   contexts12 [--steps N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nranks;

__attribute__((noinline)) static double Boundary(double *u, int n, int face) {
  double s = 0.0;
  for (long k = 0; k < (long)nranks * nranks * 1200; ++k) // ROOT CAUSE: grows with the ranks
    s += u[(k * 7 + face) % n] * 1e-9;
  return s;
}

static double Interior(double *u, int n) {
  double s = 0.0;
  for (int sweep = 0; sweep < 200; ++sweep)
    for (int i = 1; i < n - 1; ++i) {
      u[i] = 0.5 * (u[i - 1] + u[i + 1]) + 1e-12 * sweep;
      s += u[i];
    }
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int steps = 250, n = 4096;
  for (int a = 1; a + 1 < argc; ++a)
    if (!strcmp(argv[a], "--steps"))
      steps = atoi(argv[++a]);
  double *u = malloc(sizeof(double) * (size_t)n), acc = 0.0;
  for (int i = 0; i < n; ++i)
    u[i] = (i % 13) * 0.1;
  for (int s = 0; s < steps; ++s) {
    acc += Interior(u, n);
    acc += Boundary(u, n, 0);
    acc += Boundary(u, n, 1);
    acc += Boundary(u, n, 2);
    acc += Boundary(u, n, 3);
    acc += Boundary(u, n, 4);
    acc += Boundary(u, n, 5);
    acc += Boundary(u, n, 6);
    acc += Boundary(u, n, 7);
    acc += Boundary(u, n, 8);
    acc += Boundary(u, n, 9);
    acc += Boundary(u, n, 10);
    acc += Boundary(u, n, 11);
    double sum = 0.0;
    MPI_Allreduce(&acc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc = sum * 1e-9;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("contexts12: %g\n", acc);
  free(u);
  MPI_Finalize();
  return 0;
}
