/* Index-gather (random reads of a distributed table) with OpenSHMEM: every PE
 * owns --table entries of a symmetric array; each PE computes --reads keys
 * and fetches the entry each key names, wherever it lives, with shmem_long_g
 * (shmem_long_atomic_fetch, an atomic read, with --atomic), calling
 * shmem_quiet every --batch reads before it checks them, as the one-sided MPI
 * variant flushes.
 *
 * Weak scaling: reads and table size per PE do not change with the PE count.
 * Injections (--culprit R, default the last PE):
 *   --inject=hotspot   --hot percent of every PE's keys fall on PE R's part
 *                      of the table: R becomes the target of most reads
 *   --inject=producer  PE R hashes each key --factor times longer, so its
 *                      request loop runs longer and the others wait for it
 * The injected root causes are marked ROOT CAUSE in the code; options, keys
 * and skew come from ../common/async_options.h, the reductions from
 * ../common/shmem_reduce.h.
 *
 * Open MPI's oshmem: run with `oshrun --mca osc ^rdma` (docs/async.md).
 *
 * usage: igather_shmem [--inject=hotspot|producer] [--reads N] [--table N]
 *                      [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                      [--culprit R] [--atomic]
 */
#include "../common/async_options.h"
#include "../common/shmem_reduce.h"

#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The value stored at global index G: the reader can check what it got. */
static long ValueAt(long g) { return 3 * g + 1; }

int main(int argc, char **argv) {
  shmem_init();
  int this_pe = shmem_my_pe();
  int pe_count = shmem_n_pes();

  AsyncOptions o = {.count_option = "--reads",
                    .chunk_option = "--batch",
                    .switch_option = "--atomic",
                    .count = 30000,
                    .table = 4096,
                    .rounds = 600,
                    .chunk = 256,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, pe_count)) {
    if (this_pe == 0)
      fprintf(stderr, "usage: igather_shmem [--inject=hotspot|producer] [--reads N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--atomic]\n");
    shmem_global_exit(2);
  }
  long reads = o.count, table = o.table, batch = o.chunk;
  int atomic = o.flag;
  ShmemReduceInit();

  long *entries = shmem_malloc(table * sizeof(long)); /* symmetric: same offsets on every PE */
  if (!entries) {
    fprintf(stderr, "igather_shmem: PE %d: shmem_malloc failed\n", this_pe);
    shmem_global_exit(1);
  }
  for (long k = 0; k < table; ++k)
    entries[k] = ValueAt(this_pe * table + k);
  shmem_barrier_all();

  /* The key hash stands for the work that finds what to read. */
  long my_rounds = ProducerRounds(&o, this_pe);
  long *got = malloc(batch * sizeof(long)), *want = malloc(batch * sizeof(long));
  long wrong = 0;
  double hash_cpu = 0;
  for (long i = 0; i < reads; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(this_pe, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = KeyOwner(&o, key, pe_count); /* the culprit, for --hot percent */
    long offset = KeyOffset(&o, key), slot = i % batch;
    want[slot] = ValueAt(target * table + offset);
    if (atomic)
      got[slot] = shmem_long_atomic_fetch(&entries[offset], target);
    else
      got[slot] = shmem_long_g(&entries[offset], target);
    if (slot == batch - 1 || i == reads - 1) {
      shmem_quiet();
      for (long k = 0; k <= slot; ++k)
        wrong += got[k] != want[k];
    }
  }
  shmem_barrier_all();

  long wrong_total = ShmemSumLong(wrong);
  double cpu_min = ShmemMinDouble(hash_cpu), cpu_max = ShmemMaxDouble(hash_cpu);
  /* Every PE has the reductions' results: no broadcast of the status. */
  int status = wrong_total != 0;
  if (this_pe == 0)
    printf("igather_shmem: %d PEs, %ld reads, %ld wrong, key hashing cpu min %.3f max %.3f s\n",
           pe_count, reads * pe_count, wrong_total, cpu_min, cpu_max);
  shmem_barrier_all(); /* nobody frees the table while another PE may still read it */
  shmem_free(entries);
  free(got);
  free(want);
  shmem_finalize();
  return status;
}
