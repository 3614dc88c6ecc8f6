/* Every wrapped MPI family, each call on its own marked line, so the test can
 * check each dependence row's kind, peer, tag and communicator at the call
 * site it came from. test_runtime.py finds each call by its marker comment,
 * which sits on the line where the call starts (the line its call site is
 * attributed to), and by the MPI operation named there. Needs at least 2
 * ranks. */
#include <mpi.h>
#include <stdlib.h>

enum { K = 8 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int next = (r + 1) % n, prev = (r - 1 + n) % n;
  int sbuf[K] = {0}, rbuf[K * 64];

  /* Blocking ring: eager-sized, so every rank can send first. */
  MPI_Send(sbuf, K, MPI_INT, next, 11, MPI_COMM_WORLD); /* @send */
  MPI_Recv(rbuf, K, MPI_INT, prev, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @recv */

  /* ANY_SOURCE receives completed by Waitany and Waitsome. */
  if (r == 0) {
    MPI_Request reqs[64];
    for (int i = 0; i < n - 1; ++i)
      MPI_Irecv(rbuf + K * i, K, MPI_INT, MPI_ANY_SOURCE, 22, /* @irecv_any */
                MPI_COMM_WORLD, &reqs[i]);
    int done = 0;
    for (int i = 0; i < (n - 1) / 2; ++i) {
      int idx;
      MPI_Waitany(n - 1, reqs, &idx, MPI_STATUS_IGNORE); /* @waitany */
      ++done;
    }
    while (done < n - 1) {
      int out, idx[64];
      MPI_Waitsome(n - 1, reqs, &out, idx, MPI_STATUSES_IGNORE); /* @waitsome */
      done += out;
    }
  } else {
    MPI_Request q;
    MPI_Isend(sbuf, K, MPI_INT, 0, 22, MPI_COMM_WORLD, &q); /* @isend */
    MPI_Wait(&q, MPI_STATUS_IGNORE); /* @wait_isend */
  }

  /* Sendrecv with an ANY_SOURCE receive: the status names the peer. */
  MPI_Sendrecv(sbuf, K, MPI_INT, next, 33, rbuf, K, MPI_INT, MPI_ANY_SOURCE, 33, /* @sendrecv */
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  /* Persistent requests stay registered across Start. */
  MPI_Request pr[2];
  MPI_Send_init(sbuf, K, MPI_INT, next, 44, MPI_COMM_WORLD, &pr[0]); /* @send_init */
  MPI_Recv_init(rbuf, K, MPI_INT, prev, 44, MPI_COMM_WORLD, &pr[1]); /* @recv_init */
  for (int it = 0; it < 3; ++it) {
    MPI_Startall(2, pr); /* @startall */
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE); /* @waitall */
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);

  /* Issend/Irecv completed by a Testall loop. */
  MPI_Request tr[2];
  MPI_Issend(sbuf, K, MPI_INT, next, 55, MPI_COMM_WORLD, &tr[0]); /* @issend */
  MPI_Irecv(rbuf, K, MPI_INT, prev, 55, MPI_COMM_WORLD, &tr[1]); /* @irecv */
  int flag = 0;
  while (!flag)
    MPI_Testall(2, tr, &flag, MPI_STATUSES_IGNORE); /* @testall */

  /* Collectives on a split communicator: members are world ranks. */
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub); /* @comm_split */
  double x = r, y;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, sub); /* @allreduce_sub */
  MPI_Request cr;
  MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, sub, &cr); /* @iallreduce_sub */
  MPI_Wait(&cr, MPI_STATUS_IGNORE); /* @wait_iallreduce */
  MPI_Bcast(sbuf, K, MPI_INT, 0, MPI_COMM_WORLD); /* @bcast */
  MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD); /* @alltoall */
  MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD); /* @gather */
  MPI_Ibarrier(MPI_COMM_WORLD, &cr); /* @ibarrier */
  MPI_Wait(&cr, MPI_STATUS_IGNORE); /* @wait_ibarrier */

  /* One-sided: targets through the window's group. */
  int *base;
  MPI_Win win;
  MPI_Win_allocate(K * sizeof(int), sizeof(int), MPI_INFO_NULL, /* @win_allocate */
                   MPI_COMM_WORLD, &base, &win);
  MPI_Win_fence(0, win); /* @fence_open */
  MPI_Put(sbuf, K, MPI_INT, next, 0, K, MPI_INT, win); /* @put */
  MPI_Win_fence(0, win); /* @fence_close */
  int far = (r + 2) % n;
  MPI_Win_lock(MPI_LOCK_SHARED, far, 0, win); /* @win_lock */
  MPI_Get(rbuf, K, MPI_INT, far, 0, K, MPI_INT, win); /* @get */
  MPI_Win_unlock(far, win); /* @win_unlock */
  MPI_Win_free(&win); /* @win_free */

  /* A window on the split communicator: its rank numbers are sub ranks. */
  int sr, sn;
  MPI_Comm_rank(sub, &sr);
  MPI_Comm_size(sub, &sn);
  MPI_Win sw;
  /* Only the even group: Open MPI's shared-memory windows name their backing
   * file after the communicator id, which both split halves share, and two
   * windows created at once collide. Windows on one rank are refused. */
  if (sn > 1 && r % 2 == 0) {
    MPI_Win_create(rbuf, K * sizeof(int), sizeof(int), MPI_INFO_NULL, /* @sub_win_create */
                   sub, &sw);
    MPI_Win_fence(0, sw); /* @sub_fence_open */
    MPI_Put(sbuf, 1, MPI_INT, (sr + 1) % sn, 0, 1, MPI_INT, sw); /* @sub_put */
    MPI_Win_fence(0, sw); /* @sub_fence_close */
    MPI_Win_free(&sw); /* @sub_win_free */
  }
  MPI_Comm_free(&sub); /* @comm_free */
  MPI_Finalize();
  return 0;
}
