/* Histogram (random updates to a distributed table) with MPI one-sided
 * communication, passive target: every rank owns --table counters of a
 * window; each rank computes --updates keys and adds 1 to the counter each key
 * names, wherever it lives, with MPI_Accumulate (MPI_Get_accumulate with
 * --fetch, which also returns the old count), flushing every --batch updates.
 *
 * Weak scaling: updates and table size per rank do not change with the rank
 * count. Injections (--culprit R, default the last rank):
 *   --inject=hotspot   --hot percent of every rank's keys fall on rank R's
 *                      part of the table: R becomes the target of most updates
 *   --inject=producer  rank R hashes each key --factor times longer, so its
 *                      producer loop runs longer and the others wait for it
 * The injected root causes are marked ROOT CAUSE in the code; options, keys
 * and skew come from ../common/async_options.h.
 *
 * usage: histogram_rma [--inject=hotspot|producer] [--updates N] [--table N]
 *                      [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                      [--culprit R] [--fetch]
 */
#include "../common/async_options.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int my_rank, num_ranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  AsyncOptions o = {.count_option = "--updates",
                    .chunk_option = "--batch",
                    .switch_option = "--fetch",
                    .count = 60000,
                    .table = 4096,
                    .rounds = 300,
                    .chunk = 256,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, num_ranks)) {
    if (my_rank == 0)
      fprintf(stderr, "usage: histogram_rma [--inject=hotspot|producer] [--updates N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--fetch]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long updates = o.count, table = o.table, batch = o.chunk;
  int fetch = o.flag;

  long *counts;
  MPI_Win win;
  MPI_Win_allocate(table * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counts,
                   &win);
  memset(counts, 0, table * sizeof(long));
  MPI_Barrier(MPI_COMM_WORLD);

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = ProducerRounds(&o, my_rank);
  const long one = 1;
  long old = 0, fetched = 0;
  double hash_cpu = 0;
  MPI_Win_lock_all(0, win);
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(my_rank, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = KeyOwner(&o, key, num_ranks); /* the culprit, for --hot percent */
    MPI_Aint offset = (MPI_Aint)KeyOffset(&o, key);
    if (fetch) {
      MPI_Get_accumulate(&one, 1, MPI_LONG, &old, 1, MPI_LONG, target, offset, 1, MPI_LONG, MPI_SUM,
                         win);
      MPI_Win_flush(target, win); /* old is needed now */
      fetched += old;
    } else {
      MPI_Accumulate(&one, 1, MPI_LONG, target, offset, 1, MPI_LONG, MPI_SUM, win);
    }
    if ((i + 1) % batch == 0)
      MPI_Win_flush_all(win);
  }
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Check: every update landed once; report the busiest target's share. */
  long mine = 0;
  for (long k = 0; k < table; ++k)
    mine += counts[k];
  long total = 0, most = 0;
  double cpu_min, cpu_max;
  MPI_Reduce(&mine, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &cpu_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int status = 0;
  if (my_rank == 0) {
    status = total != updates * num_ranks;
    printf("histogram_rma: %d ranks, %ld updates, busiest target %.0f%% (fair %.0f%%), "
           "key hashing cpu min %.3f max %.3f s%s\n",
           num_ranks, total, 100.0 * most / total, 100.0 / num_ranks, cpu_min, cpu_max,
           status ? " WRONG TOTAL" : "");
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return status;
}
