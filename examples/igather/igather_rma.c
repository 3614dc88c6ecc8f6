/* Index-gather (random reads of a distributed table) with MPI one-sided
 * communication, passive target: every rank owns --table entries of a
 * window; each rank computes --reads keys and fetches the entry each key
 * names, wherever it lives, with MPI_Get (MPI_Fetch_and_op with MPI_NO_OP,
 * an atomic read, with --atomic), completing them with MPI_Win_flush_all
 * every --batch reads.
 *
 * Weak scaling: reads and table size per rank do not change with the rank
 * count. Injections (--culprit R, default the last rank):
 *   --inject=hotspot   --hot percent of every rank's keys fall on rank R's
 *                      part of the table: R becomes the target of most reads
 *   --inject=producer  rank R hashes each key --factor times longer, so its
 *                      request loop runs longer and the others wait for it
 * The injected root causes are marked ROOT CAUSE in the code; options, keys
 * and skew come from ../common/async_options.h.
 *
 * usage: igather_rma [--inject=hotspot|producer] [--reads N] [--table N]
 *                    [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                    [--culprit R] [--atomic]
 */
#include "../common/async_options.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The value stored at global index G: the reader can check what it got. */
static long ValueAt(long g) { return 3 * g + 1; }

int main(int argc, char **argv) {
  int my_rank, num_ranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  AsyncOptions o = {.count_option = "--reads",
                    .chunk_option = "--batch",
                    .switch_option = "--atomic",
                    .count = 30000,
                    .table = 4096,
                    .rounds = 600,
                    .chunk = 256,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, num_ranks)) {
    if (my_rank == 0)
      fprintf(stderr, "usage: igather_rma [--inject=hotspot|producer] [--reads N] [--table N] "
                      "[--rounds N] [--batch N] [--hot PERCENT] [--factor F] [--culprit R] "
                      "[--atomic]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long reads = o.count, table = o.table, batch = o.chunk;
  int atomic = o.flag;

  long *entries;
  MPI_Win win;
  MPI_Win_allocate(table * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &entries,
                   &win);
  for (long k = 0; k < table; ++k)
    entries[k] = ValueAt(my_rank * table + k);
  MPI_Barrier(MPI_COMM_WORLD);

  /* The key hash stands for the work that finds what to read. */
  long my_rounds = ProducerRounds(&o, my_rank);
  long *got = malloc(batch * sizeof(long)), *want = malloc(batch * sizeof(long));
  long wrong = 0, nothing = 0;
  double hash_cpu = 0;
  MPI_Win_lock_all(0, win);
  for (long i = 0; i < reads; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(my_rank, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = KeyOwner(&o, key, num_ranks); /* the culprit, for --hot percent */
    long offset = KeyOffset(&o, key), slot = i % batch;
    want[slot] = ValueAt(target * table + offset);
    if (atomic)
      MPI_Fetch_and_op(&nothing, &got[slot], MPI_LONG, target, offset, MPI_NO_OP, win);
    else
      MPI_Get(&got[slot], 1, MPI_LONG, target, offset, 1, MPI_LONG, win);
    if (slot == batch - 1 || i == reads - 1) {
      MPI_Win_flush_all(win);
      for (long k = 0; k <= slot; ++k)
        wrong += got[k] != want[k];
    }
  }
  MPI_Win_unlock_all(win);

  double cpu_min, cpu_max;
  long wrong_total = 0;
  MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &cpu_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int status = 0;
  if (my_rank == 0) {
    status = wrong_total != 0;
    printf("igather_rma: %d ranks, %ld reads, %ld wrong, key hashing cpu min %.3f max %.3f s\n",
           num_ranks, reads * num_ranks, wrong_total, cpu_min, cpu_max);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(got);
  free(want);
  MPI_Finalize();
  return status;
}
