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
 * The injected root causes are marked ROOT CAUSE in the code.
 *
 * Open MPI's oshmem: run with `oshrun --mca osc ^rdma` (docs/async.md).
 *
 * usage: igather_shmem [--inject=hotspot|producer] [--reads N] [--table N]
 *                      [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                      [--culprit R] [--atomic]
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

/* The value stored at global index G: the reader can check what it got. */
static long ValueAt(long g) { return 3 * g + 1; }

/* Reductions over all PEs (OpenSHMEM 1.4 *_to_all): symmetric work and
 * synchronisation arrays; one pSync per call in a row, so no barrier is
 * needed between them. */
static long p_sync[3][SHMEM_REDUCE_SYNC_SIZE];
static long long_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double double_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long long_in, long_out;
static double double_in, double_out;

int main(int argc, char **argv) {
  shmem_init();
  this_pe = shmem_my_pe();
  pe_count = shmem_n_pes();

  int hotspot = 0, producer = 0, atomic = 0, bad_usage = 0;
  long reads = 30000, table = 4096, rounds = 600, batch = 256, hot = 70, factor = 4;
  long culprit = pe_count - 1;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject=hotspot"))
      hotspot = 1;
    else if (!strcmp(argv[a], "--inject=producer"))
      producer = 1;
    else if (!strcmp(argv[a], "--atomic"))
      atomic = 1;
    else if (!strcmp(argv[a], "--reads") && a + 1 < argc)
      reads = ParseLong(argv[++a]);
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
  if (bad_usage || reads < 1 || table < 1 || rounds < 1 || batch < 1 || hot > 100 ||
      factor < 1 || culprit < 0) {
    if (this_pe == 0)
      fprintf(stderr, "usage: igather_shmem [--inject=hotspot|producer] [--reads N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--atomic]\n");
    shmem_global_exit(2);
  }
  culprit %= pe_count;
  for (int k = 0; k < 3; ++k)
    for (int s = 0; s < SHMEM_REDUCE_SYNC_SIZE; ++s)
      p_sync[k][s] = SHMEM_SYNC_VALUE;

  long *entries = shmem_malloc(table * sizeof(long)); /* symmetric: same offsets on every PE */
  if (!entries) {
    fprintf(stderr, "igather_shmem: PE %d: shmem_malloc failed\n", this_pe);
    shmem_global_exit(1);
  }
  for (long k = 0; k < table; ++k)
    entries[k] = ValueAt(this_pe * table + k);
  shmem_barrier_all();

  /* The key hash stands for the work that finds what to read. */
  long my_rounds = (producer && this_pe == culprit) ? rounds * factor : rounds;
  long *got = malloc(batch * sizeof(long)), *want = malloc(batch * sizeof(long));
  long wrong = 0;
  double hash_cpu = 0;
  for (long i = 0; i < reads; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = ((uint64_t)this_pe << 40) + (uint64_t)i;
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = (int)(key % (uint64_t)pe_count);
    if (hotspot && (long)((key >> 20) % 100) < hot)
      target = (int)culprit;
    long offset = (long)((key >> 32) % (uint64_t)table), slot = i % batch;
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

  double cpu_min, cpu_max;
  long wrong_total;
  long_in = wrong;
  shmem_long_sum_to_all(&long_out, &long_in, 1, 0, 0, pe_count, long_work, p_sync[0]);
  wrong_total = long_out;
  double_in = hash_cpu;
  shmem_double_min_to_all(&double_out, &double_in, 1, 0, 0, pe_count, double_work, p_sync[1]);
  cpu_min = double_out;
  shmem_double_max_to_all(&double_out, &double_in, 1, 0, 0, pe_count, double_work, p_sync[2]);
  cpu_max = double_out;
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
