/* Histogram (random updates to a distributed table) with OpenSHMEM: every PE
 * owns --table counters of a symmetric array; each PE computes --updates keys
 * and atomically adds 1 to the counter each key names, wherever it lives,
 * with shmem_long_atomic_add (shmem_long_atomic_fetch_add with --fetch, which
 * also returns the old count), completing them with shmem_quiet every --batch
 * updates.
 *
 * Weak scaling: updates and table size per PE do not change with the PE
 * count. Injections (--culprit R, default the last PE):
 *   --inject=hotspot   --hot percent of every PE's keys fall on PE R's part
 *                      of the table: R becomes the target of most updates
 *   --inject=producer  PE R hashes each key --factor times longer, so its
 *                      producer loop runs longer and the others wait for it
 * The injected root causes are marked ROOT CAUSE in the code; options, keys
 * and skew come from ../common/async_options.h, the reductions from
 * ../common/shmem_reduce.h.
 *
 * Open MPI's oshmem: run with `oshrun --mca osc ^rdma` (docs/async.md).
 *
 * usage: histogram_shmem [--inject=hotspot|producer] [--updates N] [--table N]
 *                        [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                        [--culprit R] [--fetch]
 */
#include "../common/async_options.h"
#include "../common/shmem_reduce.h"

#include <shmem.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  shmem_init();
  int this_pe = shmem_my_pe();
  int pe_count = shmem_n_pes();

  AsyncOptions o = {.count_option = "--updates",
                    .chunk_option = "--batch",
                    .switch_option = "--fetch",
                    .count = 60000,
                    .table = 4096,
                    .rounds = 300,
                    .chunk = 256,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, pe_count)) {
    if (this_pe == 0)
      fprintf(stderr, "usage: histogram_shmem [--inject=hotspot|producer] [--updates N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--fetch]\n");
    shmem_global_exit(2);
  }
  long updates = o.count, table = o.table, batch = o.chunk;
  int fetch = o.flag;
  ShmemReduceInit();

  long *counts = shmem_calloc(table, sizeof(long)); /* symmetric: same offsets on every PE */
  if (!counts) {
    fprintf(stderr, "histogram_shmem: PE %d: shmem_calloc failed\n", this_pe);
    shmem_global_exit(1);
  }
  shmem_barrier_all();

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = ProducerRounds(&o, this_pe);
  long fetched = 0;
  double hash_cpu = 0;
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(this_pe, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = KeyOwner(&o, key, pe_count); /* the culprit, for --hot percent */
    long offset = KeyOffset(&o, key);
    if (fetch)
      fetched += shmem_long_atomic_fetch_add(&counts[offset], 1, target); /* old is here now */
    else
      shmem_long_atomic_add(&counts[offset], 1, target);
    if ((i + 1) % batch == 0)
      shmem_quiet();
  }
  shmem_quiet();
  shmem_barrier_all();

  /* Check: every update landed once; report the busiest target's share. */
  long mine = 0;
  for (long k = 0; k < table; ++k)
    mine += counts[k];
  long total = ShmemSumLong(mine), most = ShmemMaxLong(mine);
  double cpu_min = ShmemMinDouble(hash_cpu), cpu_max = ShmemMaxDouble(hash_cpu);
  /* Every PE has the reductions' results: no broadcast of the status. */
  int status = total != updates * pe_count;
  if (this_pe == 0)
    printf("histogram_shmem: %d PEs, %ld updates, busiest target %.0f%% (fair %.0f%%), "
           "key hashing cpu min %.3f max %.3f s%s\n",
           pe_count, total, 100.0 * most / total, 100.0 / pe_count, cpu_min, cpu_max,
           status ? " WRONG TOTAL" : "");
  (void)fetched;
  shmem_barrier_all(); /* nobody frees the table while another PE still reads its part */
  shmem_free(counts);
  shmem_finalize();
  return status;
}
