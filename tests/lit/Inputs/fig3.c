// The paper's Fig. 3 program: main holds Loop 1 (with Loop 1.1, Loop 1.2, a
// call to foo and MPI_Bcast); foo branches between MPI_Send and MPI_Recv.
#include <mpi.h>
#include <stdlib.h>

#define N 64
static int A[N];

void foo(int rank, int *buf) {
  if (rank % 2 == 0)
    MPI_Send(buf, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
  else
    MPI_Recv(buf, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  int rank, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int it = 0; it < 3; ++it) {
    for (int i = 0; i < N; ++i)
      A[i] = rand();
    for (int i = 0; i < N; ++i)
      sum += A[i] % 7;
    foo(rank, &sum);
    MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return sum < 0;
}
