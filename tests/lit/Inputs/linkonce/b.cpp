#include "shared.h"
#include <cstdio>
double UseA(const int *v, int n);
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int v[4] = {1, 2, 3, 4};
  double x = Twice(v, 4) + UseA(v, 4);
  std::printf("x %g\n", x);
  MPI_Finalize();
}
