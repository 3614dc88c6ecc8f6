/* Rank 1 ends the run early after some work, in the way argv[1] says:
 * abort (MPI_Abort, the default), segv (a fatal signal) or exit (exit
 * without MPI_Finalize). Every rank's data must still be on disk. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *how = argc > 1 ? argv[1] : "abort";
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double s = 0;
  for (long i = 0; i < 20000000L; ++i)
    s += (double)(i % 3);
  sink = s;
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 1) {
    if (!strcmp(how, "segv")) {
      volatile int *p = NULL;
      *p = 1;
    } else if (!strcmp(how, "exit")) {
      exit(0);
    } else {
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  sleep(20); /* the others wait to be killed by the launcher */
  MPI_Finalize();
  return 0;
}
