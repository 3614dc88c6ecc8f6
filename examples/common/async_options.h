/* Shared by the fine-grained asynchronous examples (examples/histogram,
 * examples/igather): command line, key generation with its injected skew, the
 * producer and handler imbalances, and CPU timing. No MPI or OpenSHMEM here,
 * so that every variant (one-sided MPI, actor messaging, OpenSHMEM) can use it.
 * The injected loops stay in the programs, at their ROOT CAUSE markers; this
 * header only says how long they run and where the keys go.
 */
#ifndef SCALANA_EXAMPLES_ASYNC_OPTIONS_H
#define SCALANA_EXAMPLES_ASYNC_OPTIONS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline uint64_t Mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline long ParseLong(const char *text) {
  // -1 when TEXT is not a non-negative integer; ParseOptions rejects it.
  char *end;
  long v = strtol(text ? text : "", &end, 10);
  return (!text || !*text || *end || v < 0) ? -1 : v;
}

/* The options every variant takes. A program fills in its defaults and the
 * names of the options that differ between variants, then calls ParseOptions. */
typedef struct {
  /* Names: the per-rank operation count ("--updates", "--reads"), the chunk
   * ("--batch": operations per flush, "--buffer": items per message) and an
   * optional switch ("--fetch", "--atomic"; NULL: none). */
  const char *count_option, *chunk_option, *switch_option;
  int accepts_slowhandler; /* actor variants: the handler can be slowed */
  /* Values: defaults on entry, parsed on return. */
  long count, table, rounds, chunk, hot, factor, culprit;
  int hotspot, slowhandler, producer, flag;
} AsyncOptions;

/* Parses argv into O; RANKS is the rank (PE) count, the culprit defaults to
 * the last one. Returns 0 on bad usage: the caller prints its usage and quits
 * the way its runtime does. */
static inline int ParseOptions(AsyncOptions *o, int argc, char **argv, int ranks) {
  int bad_usage = 0;
  o->culprit = ranks - 1;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    int has_value = a + 1 < argc;
    if (!strcmp(arg, "--inject=hotspot"))
      o->hotspot = 1;
    else if (o->accepts_slowhandler && !strcmp(arg, "--inject=slowhandler"))
      o->slowhandler = 1;
    else if (!strcmp(arg, "--inject=producer"))
      o->producer = 1;
    else if (o->switch_option && !strcmp(arg, o->switch_option))
      o->flag = 1;
    else if (!strcmp(arg, o->count_option) && has_value)
      o->count = ParseLong(argv[++a]);
    else if (!strcmp(arg, "--table") && has_value)
      o->table = ParseLong(argv[++a]);
    else if (!strcmp(arg, "--rounds") && has_value)
      o->rounds = ParseLong(argv[++a]);
    else if (!strcmp(arg, o->chunk_option) && has_value)
      o->chunk = ParseLong(argv[++a]);
    else if (!strcmp(arg, "--hot") && has_value)
      o->hot = ParseLong(argv[++a]);
    else if (!strcmp(arg, "--factor") && has_value)
      o->factor = ParseLong(argv[++a]);
    else if (!strcmp(arg, "--culprit") && has_value)
      o->culprit = ParseLong(argv[++a]);
    else
      bad_usage = 1;
  }
  if (bad_usage || o->count < 1 || o->table < 1 || o->rounds < 1 || o->chunk < 1 || o->hot > 100 ||
      o->factor < 1 || o->culprit < 0)
    return 0;
  o->culprit %= ranks;
  return 1;
}

/* Hash rounds per key on RANK: --inject=producer makes the culprit's
 * producer loop --factor times longer. */
static inline long ProducerRounds(const AsyncOptions *o, int rank) {
  return (o->producer && rank == o->culprit) ? o->rounds * o->factor : o->rounds;
}

/* Extra hash rounds per handled item on RANK (0: none): --inject=slowhandler
 * slows the culprit's handler. */
static inline long HandlerRounds(const AsyncOptions *o, int rank) {
  return (o->slowhandler && rank == o->culprit) ? o->factor * o->rounds : 0;
}

/* Item I's key before hashing: distinct on every rank. */
static inline uint64_t KeySeed(int rank, long i) { return ((uint64_t)rank << 40) + (uint64_t)i; }

/* The rank that owns KEY's entry: uniform, except that --inject=hotspot sends
 * --hot percent of the keys to the culprit. */
static inline int KeyOwner(const AsyncOptions *o, uint64_t key, int ranks) {
  if (o->hotspot && (long)((key >> 20) % 100) < o->hot)
    return (int)o->culprit;
  return (int)(key % (uint64_t)ranks);
}

/* KEY's entry within its owner's part of the table. */
static inline long KeyOffset(const AsyncOptions *o, uint64_t key) {
  return (long)((key >> 32) % (uint64_t)o->table);
}

#endif
