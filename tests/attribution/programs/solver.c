/* The physics of the shared-library test programs, built into libsolver.so
 * with `scalana-cc -fPIC -shared`: a relaxation sweep over each rank's
 * block (weak scaling) and a residual reduced with MPI_Allreduce, both in
 * the library. With INJECT the last rank sweeps its block more often, and
 * the more so the more ranks there are: the other ranks wait for it in the
 * library's MPI_Allreduce. The extra sweeps are marked as the root cause.
 */
#include "solver.h"

#include <mpi.h>

static double Sweep(double *u, int n) {
  double change = 0.0;
  for (int i = 1; i < n - 1; ++i) {
    double v = 0.5 * (u[i - 1] + u[i + 1]);
    change += (v - u[i]) * (v - u[i]);
    u[i] = v;
  }
  return change;
}

double solver_relax(double *u, int n, int steps, int inject) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double residual = 0.0;
  for (int s = 0; s < steps; ++s) {
    double local = Sweep(u, n);
    if (inject && rank == size - 1)
      for (int extra = 0; extra < size; ++extra) local += Sweep(u, n); // ROOT CAUSE: extra sweeps
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  return residual;
}
