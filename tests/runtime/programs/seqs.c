/* Message numbering and waiting points at 2 ranks (docs/formats.md `seqs`,
 * docs/async.md "How it is recorded"). Rank 0 sends to rank 1 on tag 7 in
 * four phases, each from other call sites, so only the message numbers tell
 * which receive took which send:
 *   A: 5 blocking sends, received by 5 blocking receives    messages 1-5
 *   B: 3 Isends + Waitall, received by 3 Irecvs + Waitall     6-8
 *   C: 4 sends after a delay, each received by an ANY_SOURCE
 *      Irecv polled with MPI_Test until it completes           9-12
 *   D: a persistent send started twice, a persistent receive 13-14
 * Tag 8 carries 2 messages of its own channel during phase A (1-2). Tag 9
 * then carries 20 sent alternately from two call sites, odd numbers from
 * one and even from the other: 10 ranges each, more than a row keeps.
 * Then one-sided: rank 0 accumulates into rank 1's window and flushes.
 * Trip counts are volatile: an unrolled loop would spread one marked call
 * over several call sites. */
#include <mpi.h>
#include <unistd.h>

static volatile int two = 2, three = 3, four = 4, five = 5, ten = 10;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, x = 0, y[3] = {0, 0, 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Request q[3];
  if (r == 0) {
    for (int i = 0; i < five; ++i) {
      MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); /* @send_a */
      if (i < two)
        MPI_Send(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD); /* @send_other */
    }
    for (int i = 0; i < three; ++i)
      MPI_Isend(&y[i], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[i]); /* @isend_b */
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE); /* @waitall_b */
    usleep(300000);
    for (int i = 0; i < four; ++i)
      MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); /* @send_c */
    MPI_Send_init(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[0]); /* @send_init_d */
    for (int i = 0; i < two; ++i) {
      MPI_Start(&q[0]);                    /* @start_d */
      MPI_Wait(&q[0], MPI_STATUS_IGNORE); /* @wait_d */
    }
    MPI_Request_free(&q[0]); /* @free_d */
    for (int i = 0; i < ten; ++i) {
      MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* @alt_a */
      MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* @alt_b */
    }
  } else {
    for (int i = 0; i < five; ++i) {
      MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @recv_a */
      if (i < two)
        MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @recv_other */
    }
    for (int i = 0; i < three; ++i)
      MPI_Irecv(&y[i], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &q[i]); /* @irecv_b */
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE); /* @waitall_rb */
    for (int i = 0; i < four; ++i) {
      int flag = 0;
      MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &q[0]); /* @irecv_c */
      while (!flag)
        MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE); /* @test_c */
    }
    MPI_Recv_init(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &q[0]); /* @recv_init_d */
    for (int i = 0; i < two; ++i) {
      MPI_Start(&q[0]);                    /* @rstart_d */
      MPI_Wait(&q[0], MPI_STATUS_IGNORE); /* @rwait_d */
    }
    MPI_Request_free(&q[0]); /* @rfree_d */
    for (int i = 0; i < 2 * ten; ++i)
      MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @alt_recv */
  }

  double *base, one = 1;
  MPI_Win win;
  MPI_Win_allocate(16 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, /* @win */
                   &base, &win);
  MPI_Win_lock_all(0, win); /* @lock_all */
  if (r == 0) {
    for (int i = 0; i < ten; ++i)
      MPI_Accumulate(&one, 1, MPI_DOUBLE, 1, i, 1, MPI_DOUBLE, MPI_SUM, win); /* @acc */
    MPI_Win_flush(1, win); /* @flush */
    MPI_Put(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win); /* @put */
    MPI_Win_flush_all(win);                                /* @flush_all */
  }
  MPI_Win_unlock_all(win); /* @unlock_all */
  MPI_Win_free(&win);      /* @win_free */
  MPI_Finalize();
  return 0;
}
