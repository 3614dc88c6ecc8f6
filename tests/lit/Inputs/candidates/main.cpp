// The indirect calls: this file sees none of their targets.
#include "solver.h"
#include <cstdio>
#include <mpi.h>
void Run(Kernel k, Smoother *s, double *x, int n) {
  for (int it = 0; it < 3; ++it) {
    k(x, n);
    s->relax(x, n);
  }
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double x[4] = {1, 2, 3, 4};
  Smoother *s = MakeSmoother(0);
  Run(PickKernel(argc > 5), s, x, 4);
  delete s;
  std::printf("x0 %g\n", x[0]);
  MPI_Finalize();
}
