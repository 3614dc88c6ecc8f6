/* Rank 1 aborts after some work: every rank's data must still be on disk. */
#include <mpi.h>
#include <unistd.h>

static volatile double sink;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double s = 0;
  for (long i = 0; i < 20000000L; ++i)
    s += (double)(i % 3);
  sink = s;
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 1)
    MPI_Abort(MPI_COMM_WORLD, 3);
  sleep(20); /* the others wait to be killed by the launcher */
  MPI_Finalize();
  return 0;
}
