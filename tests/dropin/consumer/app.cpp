#include <mpi.h>

extern "C" double helper(int n);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double local = helper(10), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return global < 0;
}
