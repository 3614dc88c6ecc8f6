// The targets: their addresses are taken here, and the override's vtable is
// here, but nothing in this file calls them indirectly.
#include "solver.h"
#include <mpi.h>
static void Jacobi(double *x, int n) {
  for (int i = 0; i < n; ++i)
    x[i] *= 0.5;
  MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
void GaussSeidel(double *x, int n) {
  for (int i = 1; i < n; ++i)
    x[i] += x[i - 1];
}
struct Chebyshev : Smoother {
  void relax(double *x, int n) override {
    for (int i = 0; i < n; ++i)
      x[i] -= 1;
    MPI_Barrier(MPI_COMM_WORLD);
  }
};
Kernel PickKernel(int which) { return which ? Jacobi : GaussSeidel; }
Smoother *MakeSmoother(int) { return new Chebyshev; }
