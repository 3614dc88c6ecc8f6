/* Loads libsolver.so with dlopen by its bare name, found through this
 * program's RUNPATH ($ORIGIN), as plug-in codes load their solvers.
 * usage: main_dl [--inject] [--steps N] */
#include "solver.h"

#include <dlfcn.h>
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
  void *lib = dlopen("libsolver.so", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "main_dl: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  solver_relax_fn relax = (solver_relax_fn)dlsym(lib, "solver_relax");
  double *u = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i)
    u[i] = (i % 17) * 0.1;
  double r = relax(u, n, steps, inject);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("residual %g\n", r);
  free(u);
  dlclose(lib);
  MPI_Finalize();
  return 0;
}
