/* Deterministic MPI traffic for the checks of the profile written at
 * MPI_Finalize: every count, byte and peer depends on the rank only, and
 * ranks reach MPI calls through call chains of rank-dependent depth, so each
 * group of ranks has calling contexts of its own. Run with --sampler off,
 * two runs record the same profile but for times, hosts and pids. */
#include <mpi.h>
#include <stdlib.h>

static int buf[4096], rbuf[4096];

/* Recursion makes a new calling context per depth. */
static void down(int depth, MPI_Comm comm) {
  if (depth > 0) {
    down(depth - 1, comm);
    return;
  }
  int x = 1, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm); /* @deep_allreduce */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int next = (r + 1) % n, prev = (r - 1 + n) % n;
  for (int it = 0; it < 20; ++it) {
    int count = 1 + (r * 37 + it) % 1000; /* bytes differ per rank */
    MPI_Sendrecv(buf, count, MPI_INT, next, 7, rbuf, 4096, MPI_INT, prev, 7, /* @ring */
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  down(r % 7, half); /* every rank of HALF reaches this Allreduce once */
  MPI_Bcast(buf, 10, MPI_INT, 0, MPI_COMM_WORLD); /* @bcast */
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
