/* A communication layer of the program's own, after bale's conveyors: the
 * ranks tell each other they reached an epoch by plain stores into
 * mailboxes in an MPI shared-memory window, wait by polling their own, and
 * then unpack a block from every sender. No MPI call runs in the layer, so
 * no wrapper times it: its samples look like computation that grows with
 * the rank count (p blocks to unpack, p slots to poll), more than the last
 * rank's injected work does. Declared a communication layer (scalana detect
 * --comm-layer 'mbox_*'), its time is communication, and the injected work
 * is the computation cause.
 *
 *   poll_layer [--inject] [--iters N]   (all ranks on one node) */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "options.h"

/* --- The layer: mbox_of[r] is rank r's mailbox, one slot per sender, and
 * block_of[r] the block r sends (kBlock doubles). */
enum { kBlock = 16384 };
static _Atomic long **mbox_of;
static double **block_of;
static int mbox_rank, mbox_size;

static void mbox_open(MPI_Comm comm, MPI_Win *win) {
  MPI_Comm_rank(comm, &mbox_rank);
  MPI_Comm_size(comm, &mbox_size);
  const size_t slots = sizeof(long) * (size_t)mbox_size, block = sizeof(double) * kBlock;
  char *mine;
  MPI_Win_allocate_shared((MPI_Aint)(slots + block), 1, MPI_INFO_NULL, comm, &mine, win);
  for (int i = 0; i < mbox_size; ++i)
    atomic_store(&((_Atomic long *)mine)[i], 0);
  for (int i = 0; i < kBlock; ++i)
    ((double *)(mine + slots))[i] = (double)((i + mbox_rank) % 17);
  mbox_of = malloc(sizeof(*mbox_of) * (size_t)mbox_size);
  block_of = malloc(sizeof(*block_of) * (size_t)mbox_size);
  for (int r = 0; r < mbox_size; ++r) {
    MPI_Aint size;
    int unit;
    char *base;
    MPI_Win_shared_query(*win, r, &size, &unit, &base);
    mbox_of[r] = (_Atomic long *)base;
    block_of[r] = (double *)(base + slots);
  }
  MPI_Barrier(comm);
}

__attribute__((noinline)) static void mbox_signal_all(long epoch) {
  for (int r = 0; r < mbox_size; ++r)
    atomic_store_explicit(&mbox_of[r][mbox_rank], epoch, memory_order_release);
}

/* Waits until every rank has signalled EPOCH (the wait no wrapper sees),
 * then unpacks every sender's block. */
__attribute__((noinline)) static double mbox_wait_all(long epoch) {
  for (;;) {
    int behind = 0;
    for (int src = 0; src < mbox_size; ++src)
      behind += atomic_load_explicit(&mbox_of[mbox_rank][src], memory_order_acquire) < epoch;
    if (!behind)
      break;
    /* Sleep, not spin: 8 ranks share 2 cores in the tests, and a spinning
     * rank's CPU time would measure the scheduler, not the layer. */
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
  double sum = 0.0;
  for (int src = 0; src < mbox_size; ++src)
    for (int i = 0; i < kBlock; ++i)
      sum += block_of[src][i] * (double)(epoch & 7);
  return 1e-12 * sum;
}

/* --- The program. */
static double Relax(double *x, int n, int sweeps) {
  double s = 0.0;
  for (int k = 0; k < sweeps; ++k)
    for (int i = 1; i < n - 1; ++i) {
      x[i] = 0.25 * (x[i - 1] + 2.0 * x[i] + x[i + 1]);
      s += x[i];
    }
  return s;
}

int main(int argc, char **argv) {
  int inject;
  long iters = 4000;
  ParseOptions(argc, argv, &inject, &iters);
  MPI_Init(&argc, &argv);
  int rank, size, node_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_size);
  if (node_size != size) {
    if (rank == 0)
      fprintf(stderr, "poll_layer: all ranks must share one node\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Win win;
  mbox_open(node, &win);
  const int n = 2000; /* in L1: the layer's blocks do not slow it */
  double *x = calloc(n, sizeof(double));
  for (int i = 0; i < n; ++i)
    x[i] = (double)((i * 7 + rank) % 13);
  double acc = 0.0;
  for (long it = 1; it <= iters; ++it) {
    acc += Relax(x, n, 100);
    /* The last rank's extra work, about 0.7% of the rest per other rank. */
    if (inject && rank == size - 1 && it % 2 == 0)
      for (long k = 0; k < (size - 1) * 12000L; ++k) // ROOT CAUSE
        acc += 1e-9 * (double)(k ^ (k >> 3));
    mbox_signal_all(it);
    acc += mbox_wait_all(it);
  }
  if (rank == 0)
    printf("poll_layer: checksum %g\n", acc);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(mbox_of);
  free(block_of);
  free(x);
  MPI_Finalize();
  return 0;
}
