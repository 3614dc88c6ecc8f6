/* Messages across an intercommunicator: the world split into its even and
 * odd ranks, the halves joined by MPI_Intercomm_create. Peers on an
 * intercommunicator are ranks of the remote group; the profile must name
 * them as world ranks so that each send meets its receive. Rank i of one
 * half talks to rank i of the other (world ranks 2i and 2i+1). World rank 0
 * computes four times as long as the others before it sends: its partner
 * (world rank 1) waits for it across the intercommunicator, which is the
 * path `scalana detect` must find back to rank 0. Needs an even number of
 * ranks, at least 2. */
#include <mpi.h>

enum { K = 16, ROUNDS = 3, WORK = 20000000 };

static volatile double sink;

static void Work(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) /* @work */
    x += i * 1e-9;
  sink += x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int world, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int color = world % 2;
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, world, &half);
  /* The other half's leader is its world rank 0 or 1. */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter); /* @create */
  int me;
  MPI_Comm_rank(inter, &me);
  int sbuf[K] = {0}, rbuf[K];

  for (int round = 0; round < ROUNDS; ++round) {
    Work(world == 0 ? 4 * WORK : WORK);
    /* Blocking: the even half sends first, the odd one receives from
     * whoever sends (MPI_ANY_SOURCE: the status names the remote rank). */
    if (color == 0) {
      MPI_Send(sbuf, K, MPI_INT, me, 1, inter); /* @send */
      MPI_Recv(rbuf, K, MPI_INT, me, 2, inter, MPI_STATUS_IGNORE); /* @recv */
    } else {
      MPI_Recv(rbuf, K, MPI_INT, MPI_ANY_SOURCE, 1, inter, MPI_STATUS_IGNORE); /* @recv_any */
      MPI_Send(sbuf, K, MPI_INT, me, 2, inter); /* @send_back */
    }
    /* Non-blocking both ways, completed together (the odd half receives
     * from MPI_ANY_SOURCE: the completion's status names the peer). */
    MPI_Request q[2];
    MPI_Irecv(rbuf, K, MPI_INT, color ? MPI_ANY_SOURCE : me, 3, inter, &q[0]); /* @irecv */
    MPI_Isend(sbuf, K, MPI_INT, me, 3, inter, &q[1]); /* @isend */
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE); /* @waitall */
    /* A collective over both groups. */
    MPI_Barrier(inter); /* @barrier */
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
