/* Every wrapped MPI family, each call at its own hand-set vertex id, so the
 * test can check each dependence row's kind, peer, tag and communicator.
 * Needs at least 2 ranks. Ids are listed in test_runtime.py. */
#include "hand_ctx.h"

#include <mpi.h>
#include <stdlib.h>

enum { K = 8 };

int main(int argc, char **argv) {
  CTX.vertex = ID(0);
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int next = (r + 1) % n, prev = (r - 1 + n) % n;
  int sbuf[K] = {0}, rbuf[K * 64];

  /* Blocking ring: eager-sized, so every rank can send first. */
  MPI_AT(1, MPI_Send(sbuf, K, MPI_INT, next, 11, MPI_COMM_WORLD));
  MPI_AT(2, MPI_Recv(rbuf, K, MPI_INT, prev, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

  /* ANY_SOURCE receives completed by Waitany and Waitsome. */
  if (r == 0) {
    MPI_Request reqs[64];
    for (int i = 0; i < n - 1; ++i)
      MPI_AT(3, MPI_Irecv(rbuf + K * i, K, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &reqs[i]));
    int done = 0;
    for (int i = 0; i < (n - 1) / 2; ++i) {
      int idx;
      MPI_AT(4, MPI_Waitany(n - 1, reqs, &idx, MPI_STATUS_IGNORE));
      ++done;
    }
    while (done < n - 1) {
      int out, idx[64];
      MPI_AT(5, MPI_Waitsome(n - 1, reqs, &out, idx, MPI_STATUSES_IGNORE));
      done += out;
    }
  } else {
    MPI_Request q;
    MPI_AT(6, MPI_Isend(sbuf, K, MPI_INT, 0, 22, MPI_COMM_WORLD, &q));
    MPI_AT(7, MPI_Wait(&q, MPI_STATUS_IGNORE));
  }

  /* Sendrecv with an ANY_SOURCE receive: the status names the peer. */
  MPI_AT(8, MPI_Sendrecv(sbuf, K, MPI_INT, next, 33, rbuf, K, MPI_INT, MPI_ANY_SOURCE, 33,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));

  /* Persistent requests stay registered across Start. */
  MPI_Request pr[2];
  MPI_AT(9, MPI_Send_init(sbuf, K, MPI_INT, next, 44, MPI_COMM_WORLD, &pr[0]));
  MPI_AT(10, MPI_Recv_init(rbuf, K, MPI_INT, prev, 44, MPI_COMM_WORLD, &pr[1]));
  for (int it = 0; it < 3; ++it) {
    MPI_AT(11, MPI_Startall(2, pr));
    MPI_AT(12, MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);

  /* Issend/Irecv completed by a Testall loop. */
  MPI_Request tr[2];
  MPI_AT(13, MPI_Issend(sbuf, K, MPI_INT, next, 55, MPI_COMM_WORLD, &tr[0]));
  MPI_AT(14, MPI_Irecv(rbuf, K, MPI_INT, prev, 55, MPI_COMM_WORLD, &tr[1]));
  int flag = 0;
  while (!flag)
    MPI_AT(15, MPI_Testall(2, tr, &flag, MPI_STATUSES_IGNORE));

  /* Collectives on a split communicator: members are world ranks. */
  MPI_Comm sub;
  MPI_AT(16, MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub));
  double x = r, y;
  MPI_AT(17, MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, sub));
  MPI_Request cr;
  MPI_AT(18, MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, sub, &cr));
  MPI_AT(19, MPI_Wait(&cr, MPI_STATUS_IGNORE));
  MPI_AT(20, MPI_Bcast(sbuf, K, MPI_INT, 0, MPI_COMM_WORLD));
  MPI_AT(21, MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD));
  MPI_AT(22, MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD));
  MPI_AT(23, MPI_Ibarrier(MPI_COMM_WORLD, &cr));
  MPI_AT(24, MPI_Wait(&cr, MPI_STATUS_IGNORE));

  /* One-sided: targets through the window's group. */
  int *base;
  MPI_Win win;
  MPI_AT(25, MPI_Win_allocate(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                              &win));
  MPI_AT(26, MPI_Win_fence(0, win));
  MPI_AT(27, MPI_Put(sbuf, K, MPI_INT, next, 0, K, MPI_INT, win));
  MPI_AT(28, MPI_Win_fence(0, win));
  int far = (r + 2) % n;
  MPI_AT(29, MPI_Win_lock(MPI_LOCK_SHARED, far, 0, win));
  MPI_AT(30, MPI_Get(rbuf, K, MPI_INT, far, 0, K, MPI_INT, win));
  MPI_AT(31, MPI_Win_unlock(far, win));
  MPI_AT(32, MPI_Win_free(&win));

  /* A window on the split communicator: its rank numbers are sub ranks. */
  int sr, sn;
  MPI_Comm_rank(sub, &sr);
  MPI_Comm_size(sub, &sn);
  MPI_Win sw;
  /* Only the even group: Open MPI's shared-memory windows name their backing
   * file after the communicator id, which both split halves share, and two
   * windows created at once collide. Windows on one rank are refused. */
  if (sn > 1 && r % 2 == 0) {
    MPI_AT(33, MPI_Win_create(rbuf, K * sizeof(int), sizeof(int), MPI_INFO_NULL, sub, &sw));
    MPI_AT(34, MPI_Win_fence(0, sw));
    MPI_AT(35, MPI_Put(sbuf, 1, MPI_INT, (sr + 1) % sn, 0, 1, MPI_INT, sw));
    MPI_AT(36, MPI_Win_fence(0, sw));
    MPI_AT(37, MPI_Win_free(&sw));
  }
  MPI_AT(38, MPI_Comm_free(&sub));
  MPI_Finalize();
  return 0;
}
