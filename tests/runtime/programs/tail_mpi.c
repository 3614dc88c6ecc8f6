/* A wrapper that checks its arguments with one MPI call, then ends in a
 * tail call of another (bale's lgp_atomic_add checks its PE against
 * shmem_n_pes(), then jumps to shmem_long_atomic_add): no frame of Reduce()
 * is on the stack inside MPI_Allreduce, and its return address is main's
 * call of Reduce. The wrapper says which operation ran; its time must be on
 * Reduce's MPI_Allreduce vertex (communication), not on main's call of
 * Reduce (computation). The test checks the jump in the binary. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int size; /* not on Reduce's stack, which must be empty for the jump */

__attribute__((noinline)) static int Reduce(double *x, int n) {
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (n > size * 1000)
    abort();
  return MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* @allreduce */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x[4] = {0}, s = 0.0;
  for (int step = 0; step < 200; ++step) {
    /* rank 0 works longer: the others wait in the Allreduce */
    for (long i = 0; i < (rank == 0 ? 2000000L : 200000L); ++i) /* @work */
      s += (double)(i % 5) * 1e-9;
    x[0] = s;
    Reduce(x, 4); /* @call_reduce */
  }
  if (rank == 0)
    printf("tail_mpi: %g\n", x[0]);
  MPI_Finalize();
  return 0;
}
