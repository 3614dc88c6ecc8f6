/* A small MPI program for the report tests, compiled from a file whose name
 * holds HTML markup: the report must show that name, and the root-cause
 * line's comment below, as text.
 *
 * Weak scaling with one growing part: the last rank's loop runs over
 * (ranks x N) elements, so the others wait for it in MPI_Recv and
 * MPI_Allreduce, more the more ranks there are. The token passes in a
 * function with a long name: its row of the PPG picture has the longest
 * label, which must not run into the nodes beside it. */
#include <mpi.h>
#include <stdio.h>

__attribute__((noinline)) void pass_the_token_from_the_last_rank_to_the_first(double *token,
                                                                              int rank, int size) {
  if (rank == size - 1)
    MPI_Send(token, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
  else if (rank == 0)
    MPI_Recv(token, 1, MPI_DOUBLE, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  volatile double sum = 0;
  long n = 3000000L * (rank == size - 1 ? size : 1);
  for (int it = 0; it < 10; ++it) {
    for (long j = 0; j < n; ++j) // ROOT CAUSE </script><img src=x onerror=alert(1)>
      sum += (double)(j % 7) * 0.5;
    double token = sum, total = 0;
    if (size > 1)
      pass_the_token_from_the_last_rank_to_the_first(&token, rank, size);
    MPI_Allreduce(&token, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("sum %g\n", (double)sum);
  MPI_Finalize();
  return 0;
}
