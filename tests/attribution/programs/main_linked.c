/* Links libsolver.so, as a CMake project with BUILD_SHARED_LIBS=ON would.
 * usage: main_linked [--inject] [--steps N] */
#include "solver.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int inject = 0, steps = 400, n = 20000;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject"))
      inject = 1;
    else if (!strcmp(argv[a], "--steps") && a + 1 < argc)
      steps = atoi(argv[++a]);
  }
  double *u = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i)
    u[i] = (i % 17) * 0.1;
  double r = solver_relax(u, n, steps, inject);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("residual %g\n", r);
  free(u);
  MPI_Finalize();
  return 0;
}
