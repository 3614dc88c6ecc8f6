/* A pipeline: items flow from rank 0 through every rank to the last one.
 * Rank i receives an item from rank i - 1 (MPI_Recv), applies its stage and
 * passes it on to rank i + 1 (MPI_Send); every twentieth item all ranks
 * agree on a checksum with MPI_Allreduce. Every stage does the same work
 * per item (weak scaling: more ranks, more stages).
 *
 * --inject: the middle stage (np / 2) does extra work on every item, so every
 * later stage waits for it in MPI_Recv, and the earlier ones in
 * MPI_Allreduce. */
#include "common.h"

enum { kItem = 256, kRounds = 7200, kTag = 3, kBatch = 20 };

static int my_rank, num_ranks;

/* The stage's work on one item: smoothing passes over its values. */
static void Stage(double *item, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    double prev = item[kItem - 1];
    for (int i = 0; i < kItem; ++i) {
      double cur = item[i];
      item[i] = 0.5 * cur + 0.25 * (prev + item[(i + 1) & (kItem - 1)]) +
                1e-3 / (1.0 + cur * cur);
      prev = cur;
    }
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "pipeline", 100);
  int culprit = Culprit(&opt, num_ranks / 2, num_ranks);

  double item[kItem], sink = 0.0, sum = 0.0, global = 0.0, t_work = 0.0, t_extra = 0.0;
  /* About two thirds of the stage's work. */
  long extra = (opt.inject && my_rank == culprit) ? SharedExtra(&opt, (long)kRounds * kItem / 2, 75) : 0;
  double lag = 0.0;

  for (long n = 0; n < opt.iters; ++n) {
    if (my_rank > 0) {
      MPI_Recv(item, kItem, MPI_DOUBLE, my_rank - 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      for (int i = 0; i < kItem; ++i)
        item[i] = 0.001 * (double)((n * 31 + i) % 97);
    }
    double t0 = CpuSeconds();
    Stage(item, kRounds);
    double t1 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: the middle stage's extra work per item
      lag = lag * 0.999999 + item[d & (kItem - 1)];
    double t2 = CpuSeconds();
    t_work += t1 - t0;
    t_extra += t2 - t1;
    if (my_rank < num_ranks - 1)
      MPI_Send(item, kItem, MPI_DOUBLE, my_rank + 1, kTag, MPI_COMM_WORLD);
    else
      for (int i = 0; i < kItem; ++i)
        sink += item[i];
    if (n % kBatch == kBatch - 1) {
      sum = sink + lag * 1e-9;
      MPI_Allreduce(&sum, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }

  Report("pipeline", &opt, culprit, t_work, t_extra, global);
  MPI_Finalize();
  return 0;
}
