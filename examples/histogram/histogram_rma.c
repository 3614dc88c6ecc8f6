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
 * The injected root causes are marked ROOT CAUSE in the code.
 *
 * usage: histogram_rma [--inject=hotspot|producer] [--updates N] [--table N]
 *                      [--rounds N] [--batch N] [--hot PERCENT] [--factor F]
 *                      [--culprit R] [--fetch]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int my_rank, num_ranks;

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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int hotspot = 0, producer = 0, fetch = 0, bad_usage = 0;
  long updates = 60000, table = 4096, rounds = 300, batch = 256, hot = 70, factor = 4;
  long culprit = num_ranks - 1;
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
    if (my_rank == 0)
      fprintf(stderr, "usage: histogram_rma [--inject=hotspot|producer] [--updates N] "
                      "[--table N] [--rounds N] [--batch N] [--hot PERCENT] [--factor F] "
                      "[--culprit R] [--fetch]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  culprit %= num_ranks;

  long *counts;
  MPI_Win win;
  MPI_Win_allocate(table * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counts,
                   &win);
  memset(counts, 0, table * sizeof(long));
  MPI_Barrier(MPI_COMM_WORLD);

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = (producer && my_rank == culprit) ? rounds * factor : rounds;
  const long one = 1;
  long old = 0, fetched = 0;
  double hash_cpu = 0;
  MPI_Win_lock_all(0, win);
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = ((uint64_t)my_rank << 40) + (uint64_t)i;
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int target = (int)(key % (uint64_t)num_ranks);
    if (hotspot && (long)((key >> 20) % 100) < hot)
      target = (int)culprit;
    MPI_Aint offset = (MPI_Aint)((key >> 32) % (uint64_t)table);
    if (fetch) {
      MPI_Get_accumulate(&one, 1, MPI_LONG, &old, 1, MPI_LONG, target, offset, 1, MPI_LONG,
                         MPI_SUM, win);
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
