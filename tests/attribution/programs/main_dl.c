/* Loads libsolver.so with dlopen by its bare name, found through this
 * program's RUNPATH ($ORIGIN), as plug-in codes load their solvers.
 * usage: main_dl [--inject] [--steps N] */
#include "solver.h"

#include <dlfcn.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, steps, inject;
  double *u = solver_block(argc, argv, &n, &steps, &inject);
  void *lib = dlopen("libsolver.so", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "main_dl: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  solver_relax_fn relax = (solver_relax_fn)dlsym(lib, "solver_relax");
  solver_report(relax(u, n, steps, inject));
  free(u);
  dlclose(lib);
  MPI_Finalize();
  return 0;
}
