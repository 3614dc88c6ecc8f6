/* A high call rate at one call site, for SCALANA_DEP_SAMPLE: 2000 ring
 * exchanges, each a send (@send) and the wait of its receive (@wait). Rank 0
 * sends late, so its successor's waits add up to a known share of its time. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n, token = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int i = 0; i < 2000; ++i) {
    MPI_Request q;
    MPI_Irecv(&token, 1, MPI_INT, (r - 1 + n) % n, 9, MPI_COMM_WORLD, &q);
    if (r == 0)
      usleep(200);
    MPI_Send(&r, 1, MPI_INT, (r + 1) % n, 9, MPI_COMM_WORLD); /* @send */
    MPI_Wait(&q, MPI_STATUS_IGNORE);                          /* @wait */
  }
  MPI_Finalize();
  return 0;
}
