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
 * The injected root causes are marked ROOT CAUSE in the code.
 *
 * Open MPI's oshmem: run with `oshrun --mca osc ^rdma` (docs/async.md).
 *
 * usage: histogram_shmem [--inject=hotspot|producer] [--updates N] [--table N]
 *                        [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                        [--culprit R] [--fetch]
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int this_pe, pe_count;

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static uint64_t Mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static long ParseLong(const char *text) {
  // -1 when TEXT is not a non-negative integer; main reports it.
  char *end;
  long v = strtol(text ? text : "", &end, 10);
  return (!text || !*text || *end || v < 0) ? -1 : v;
}

/* Reductions over all PEs (OpenSHMEM 1.4 *_to_all): symmetric work and
 * synchronisation arrays; one pSync per call in a row, so no barrier is
 * needed between them. */
static long p_sync[4][SHMEM_REDUCE_SYNC_SIZE];
static long long_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double double_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long long_in, long_out;
static double double_in, double_out;

int main(int argc, char **argv) {
  shmem_init();
  this_pe = shmem_my_pe();
  pe_count = shmem_n_pes();

  int hotspot = 0, producer = 0, fetch = 0, bad_usage = 0;
  long updates = 60000, table = 4096, rounds = 300, batch = 256, hot = 70, factor = 4;
  long culprit = pe_count - 1;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject=hotspot"))
      hotspot = 1;
    else if (!strcmp(argv[a], "--inject=producer"))
      producer = 1;
    else if (!strcmp(argv[a], "--fetch"))
      fetch = 1;
    else if (!strcmp(argv[a], "--updates") && a + 1 < argc)
      updates = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--table") && a + 1 < argc)
      table = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
      rounds = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--batch") && a + 1 < argc)
      batch = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--hot") && a + 1 < argc)
      hot = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--factor") && a + 1 < argc)
      factor = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--culprit") && a + 1 < argc)
      culprit = ParseLong(argv[++a]);
    else
      bad_usage = 1;
  }
  if (bad_usage || updates < 1 || table < 1 || rounds < 1 || batch < 1 || hot > 100 ||
      factor < 1 || culprit < 0) {
    if (this_pe == 0)
      fprintf(stderr, "usage: histogram_shmem [--inject=hotspot|producer] [--updates N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--fetch]\n");
    shmem_global_exit(2);
  }
  culprit %= pe_count;
  for (int k = 0; k < 4; ++k)
    for (int s = 0; s < SHMEM_REDUCE_SYNC_SIZE; ++s)
      p_sync[k][s] = SHMEM_SYNC_VALUE;

  long *counts = shmem_calloc(table, sizeof(long)); /* symmetric: same offsets on every PE */
  if (!counts) {
    fprintf(stderr, "histogram_shmem: PE %d: shmem_calloc failed\n", this_pe);
    shmem_global_exit(1);
  }
  shmem_barrier_all();

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = (producer && this_pe == culprit) ? rounds * factor : rounds;
  long fetched = 0;
  double hash_cpu = 0;
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = ((uint64_t)this_pe << 40) + (uint64_t)i;
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = (int)(key % (uint64_t)pe_count);
    if (hotspot && (long)((key >> 20) % 100) < hot)
      target = (int)culprit;
    long offset = (long)((key >> 32) % (uint64_t)table);
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
  long total, most;
  double cpu_min, cpu_max;
  long_in = mine;
  shmem_long_sum_to_all(&long_out, &long_in, 1, 0, 0, pe_count, long_work, p_sync[0]);
  total = long_out;
  shmem_long_max_to_all(&long_out, &long_in, 1, 0, 0, pe_count, long_work, p_sync[1]);
  most = long_out;
  double_in = hash_cpu;
  shmem_double_min_to_all(&double_out, &double_in, 1, 0, 0, pe_count, double_work, p_sync[2]);
  cpu_min = double_out;
  shmem_double_max_to_all(&double_out, &double_in, 1, 0, 0, pe_count, double_work, p_sync[3]);
  cpu_max = double_out;
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
