#include <mpi.h>
void exchange(double *x, int n) {
  for (int i = 0; i < n; ++i)
    MPI_Allreduce(MPI_IN_PLACE, x + i, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
