/* Histogram (random updates to a distributed table) with aggregated actor
 * messaging, the pattern of Conveyors and actor/selector runtimes built with
 * MPI two-sided calls: each rank owns --table counters; each rank computes
 * --updates keys and sends "add 1 at offset k" to the owner of each key. The
 * messages are gathered in one buffer per destination, sent with MPI_Issend
 * when the buffer is full; every rank keeps an MPI_Irecv(MPI_ANY_SOURCE)
 * posted and polls it with MPI_Test, running the handler on each message it
 * receives. Termination: when a rank's sends have all been matched it enters
 * an MPI_Ibarrier and keeps polling until the barrier completes (synchronous
 * sends make that correct: once everyone is in the barrier, every message has
 * been matched by a receive).
 *
 * Weak scaling: updates and table size per rank do not change with the rank
 * count. Injections (--culprit R, default the last rank):
 *   --inject=hotspot      --hot percent of every rank's keys fall on rank R:
 *                         R receives most of the messages
 *   --inject=slowhandler  rank R's handler works --factor x --rounds longer
 *                         on each update it applies
 *   --inject=producer     rank R hashes each key --factor times longer, so
 *                         its producer loop runs longer
 * The injected root causes are marked ROOT CAUSE in the code.
 *
 * usage: histogram_actor [--inject=hotspot|slowhandler|producer] [--updates N]
 *                        [--table N] [--rounds N] [--buffer N] [--hot PERCENT]
 *                        [--factor F] [--culprit R]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kTag = 11, kPollEvery = 64 };

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

/* --- The mailbox: per-destination buffers, sends in flight, one receive. */
typedef struct Pending {
  MPI_Request req;
  int64_t *data;
  struct Pending *next;
} Pending;

static long capacity;        /* items per message */
static int64_t **out;        /* [dest][capacity] */
static long *out_len;        /* [dest] */
static Pending *in_flight;   /* sends not yet matched */
static int64_t *in_buf;      /* [capacity] */
static MPI_Request in_req;
static long *table, table_size;
static long handled;         /* updates applied here */
static long handler_rounds;  /* extra work per update (0: none) */
static double handler_cpu;
static uint64_t handler_sink; /* keeps the handler's work from being optimised away */

static void PostReceive(void) {
  MPI_Irecv(in_buf, (int)capacity, MPI_INT64_T, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &in_req);
}

/* Applies one update to the local part of the table. */
static void Handle(int64_t offset) {
  uint64_t x = (uint64_t)offset;
  for (long r = 0; r < handler_rounds; ++r) // ROOT CAUSE (slowhandler): slow on the culprit
    x = Mix(x);
  handler_sink ^= x;
  table[offset] += 1;
  ++handled;
}

static void Flush(int dest) {
  if (out_len[dest] == 0)
    return;
  Pending *p = malloc(sizeof *p);
  p->data = out[dest];
  out[dest] = malloc(capacity * sizeof(int64_t));
  MPI_Issend(p->data, (int)out_len[dest], MPI_INT64_T, dest, kTag, MPI_COMM_WORLD, &p->req);
  out_len[dest] = 0;
  p->next = in_flight;
  in_flight = p;
}

/* Runs the handler on every message that has arrived; returns when none is
 * waiting. Also retires the sends that have been matched. */
static void Poll(void) {
  int arrived = 1;
  while (arrived) {
    MPI_Status status;
    MPI_Test(&in_req, &arrived, &status);
    if (!arrived)
      break;
    int n;
    MPI_Get_count(&status, MPI_INT64_T, &n);
    double t0 = CpuSeconds();
    for (int k = 0; k < n; ++k)
      Handle(in_buf[k]);
    handler_cpu += CpuSeconds() - t0;
    PostReceive();
  }
  for (Pending **pp = &in_flight; *pp;) {
    int done;
    MPI_Test(&(*pp)->req, &done, MPI_STATUS_IGNORE);
    if (!done) {
      pp = &(*pp)->next;
      continue;
    }
    Pending *p = *pp;
    *pp = p->next;
    free(p->data);
    free(p);
  }
}

static void Push(int dest, int64_t offset) {
  if (dest == my_rank) { /* local updates need no message */
    Handle(offset);
    return;
  }
  out[dest][out_len[dest]++] = offset;
  if (out_len[dest] == capacity)
    Flush(dest);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int hotspot = 0, slowhandler = 0, producer = 0, bad_usage = 0;
  long updates = 40000, rounds = 600, hot = 70, factor = 4, culprit = num_ranks - 1;
  capacity = 512;
  table_size = 4096;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject=hotspot"))
      hotspot = 1;
    else if (!strcmp(argv[a], "--inject=slowhandler"))
      slowhandler = 1;
    else if (!strcmp(argv[a], "--inject=producer"))
      producer = 1;
    else if (!strcmp(argv[a], "--updates") && a + 1 < argc)
      updates = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--table") && a + 1 < argc)
      table_size = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
      rounds = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--buffer") && a + 1 < argc)
      capacity = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--hot") && a + 1 < argc)
      hot = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--factor") && a + 1 < argc)
      factor = ParseLong(argv[++a]);
    else if (!strcmp(argv[a], "--culprit") && a + 1 < argc)
      culprit = ParseLong(argv[++a]);
    else
      bad_usage = 1;
  }
  if (bad_usage || updates < 1 || table_size < 1 || rounds < 1 || capacity < 1 || hot > 100 ||
      factor < 1 || culprit < 0) {
    if (my_rank == 0)
      fprintf(stderr, "usage: histogram_actor [--inject=hotspot|slowhandler|producer] "
                      "[--updates N] [--table N] [--rounds N] [--buffer N] [--hot PERCENT] "
                      "[--factor F] [--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  culprit %= num_ranks;

  table = calloc(table_size, sizeof(long));
  out = malloc(num_ranks * sizeof *out);
  out_len = calloc(num_ranks, sizeof *out_len);
  for (int d = 0; d < num_ranks; ++d)
    out[d] = malloc(capacity * sizeof(int64_t));
  in_buf = malloc(capacity * sizeof(int64_t));
  handler_rounds = (slowhandler && my_rank == culprit) ? factor * rounds : 0;
  PostReceive();

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = (producer && my_rank == culprit) ? rounds * factor : rounds;
  double hash_cpu = 0;
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = ((uint64_t)my_rank << 40) + (uint64_t)i;
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int dest = (int)(key % (uint64_t)num_ranks);
    if (hotspot && (long)((key >> 20) % 100) < hot)
      dest = (int)culprit;
    Push(dest, (int64_t)((key >> 32) % (uint64_t)table_size));
    if (i % kPollEvery == 0)
      Poll();
  }
  for (int d = 0; d < num_ranks; ++d)
    Flush(d);

  /* Termination: poll until every send is matched, then until everyone is. */
  MPI_Request barrier = MPI_REQUEST_NULL;
  int finished = 0;
  while (!finished) {
    Poll();
    if (barrier == MPI_REQUEST_NULL && !in_flight)
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    if (barrier != MPI_REQUEST_NULL)
      MPI_Test(&barrier, &finished, MPI_STATUS_IGNORE);
  }
  /* A message matched just before the barrier completed may still be in the
   * posted receive: cancelling fails for it, and it is handled. */
  MPI_Status status;
  int cancelled;
  MPI_Cancel(&in_req);
  MPI_Wait(&in_req, &status);
  MPI_Test_cancelled(&status, &cancelled);
  if (!cancelled) {
    int n;
    MPI_Get_count(&status, MPI_INT64_T, &n);
    for (int k = 0; k < n; ++k)
      Handle(in_buf[k]);
  }

  /* Check: every update landed once; report the busiest target's share. */
  long total = 0, most = 0;
  double hash_min, hash_max, handler_max;
  MPI_Reduce(&handled, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&handled, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&handler_cpu, &handler_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int status_code = 0;
  if (my_rank == 0) {
    status_code = total != updates * num_ranks;
    printf("histogram_actor: %d ranks, %ld updates, busiest target %.0f%% (fair %.0f%%), "
           "key hashing cpu min %.3f max %.3f s, handler cpu max %.3f s (%llx)%s\n",
           num_ranks, total, 100.0 * most / total, 100.0 / num_ranks, hash_min, hash_max,
           handler_max, (unsigned long long)(handler_sink & 0xf), status_code ? " WRONG TOTAL" : "");
  }
  MPI_Bcast(&status_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status_code;
}
