// C++ built with g++-only options in CXXFLAGS.
#include <mpi.h>
#include <vector>

double kernel(const std::vector<double> &v) {
  double local = 0, global = 0;
  for (double x : v)
    local += x * x;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::vector<double> v(64, 1.0);
  double r = kernel(v);
  MPI_Finalize();
  return r < 0;
}
