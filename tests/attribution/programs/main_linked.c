/* Links libsolver.so, as a CMake project with BUILD_SHARED_LIBS=ON would.
 * usage: main_linked [--inject] [--steps N] */
#include "solver.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, steps, inject;
  double *u = solver_block(argc, argv, &n, &steps, &inject);
  solver_report(solver_relax(u, n, steps, inject));
  free(u);
  MPI_Finalize();
  return 0;
}
