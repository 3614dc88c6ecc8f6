/* Index-gather (random reads of a distributed table) with aggregated actor
 * messaging, the pattern of Conveyors and actor/selector runtimes built with
 * MPI two-sided calls: each rank owns --table entries; each rank computes
 * --reads keys and sends a request "read offset k for my slot i" to the owner
 * of each key, whose request handler sends back a reply "slot i holds v".
 * Requests and replies are gathered in one buffer per destination and per
 * mailbox, sent with MPI_Issend when full; every rank keeps one
 * MPI_Irecv(MPI_ANY_SOURCE) posted per mailbox and polls them with MPI_Test,
 * running the handlers. Termination: once a rank has all its replies and its
 * sends have been matched it enters an MPI_Ibarrier and keeps polling until
 * the barrier completes.
 *
 * Weak scaling: reads and table size per rank do not change with the rank
 * count. Injections (--culprit R, default the last rank):
 *   --inject=hotspot      --hot percent of every rank's keys fall on rank R:
 *                         R receives most of the requests
 *   --inject=slowhandler  rank R's request handler works --factor x --rounds
 *                         longer on each request
 *   --inject=producer     rank R hashes each key --factor times longer, so
 *                         its request loop runs longer
 * The injected root causes are marked ROOT CAUSE in the code.
 *
 * usage: igather_actor [--inject=hotspot|slowhandler|producer] [--reads N]
 *                      [--table N] [--rounds N] [--buffer N] [--hot PERCENT]
 *                      [--factor F] [--culprit R]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kRequest = 0, kReply = 1, kMailboxes = 2, kPollEvery = 64 };

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

/* The value stored at global index G: the reader can check what it got. */
static int64_t ValueAt(int64_t g) { return 3 * g + 1; }

/* --- Mailboxes (requests, replies): per-destination buffers of pairs of
 * int64, sends in flight, one posted receive each. */
typedef struct Pending {
  MPI_Request req;
  int64_t *data;
  struct Pending *next;
} Pending;

static long capacity;                 /* pairs per message */
static int64_t **out[kMailboxes];     /* [box][dest][2 * capacity] */
static long *out_len[kMailboxes];     /* [box][dest], in pairs */
static Pending *in_flight;            /* sends not yet matched */
static int64_t *in_buf[kMailboxes];   /* [box][2 * capacity] */
static MPI_Request in_req[kMailboxes];
static int64_t *entries, table_size;  /* my part of the table */
static int64_t *result;               /* [reads]: what each read got */
static long replies_expected, replies_received;
static long handler_rounds;           /* extra work per request (0: none) */
static double handler_cpu;
static uint64_t handler_sink; /* keeps the handler's work from being optimised away */

static void PostReceive(int box) {
  MPI_Irecv(in_buf[box], (int)(2 * capacity), MPI_INT64_T, MPI_ANY_SOURCE, box, MPI_COMM_WORLD,
            &in_req[box]);
}

static void Flush(int box, int dest) {
  if (out_len[box][dest] == 0)
    return;
  Pending *p = malloc(sizeof *p);
  p->data = out[box][dest];
  out[box][dest] = malloc(2 * capacity * sizeof(int64_t));
  MPI_Issend(p->data, (int)(2 * out_len[box][dest]), MPI_INT64_T, dest, box, MPI_COMM_WORLD,
             &p->req);
  out_len[box][dest] = 0;
  p->next = in_flight;
  in_flight = p;
}

static void Push(int box, int dest, int64_t a, int64_t b) {
  int64_t *slot = out[box][dest] + 2 * out_len[box][dest];
  slot[0] = a;
  slot[1] = b;
  if (++out_len[box][dest] == capacity)
    Flush(box, dest);
}

/* Request handler: reads the entry and answers the requester. */
static void HandleRequest(int from, int64_t offset, int64_t index) {
  uint64_t x = (uint64_t)offset;
  for (long r = 0; r < handler_rounds; ++r) // ROOT CAUSE (slowhandler): slow on the culprit
    x = Mix(x);
  handler_sink ^= x;
  Push(kReply, from, index, entries[offset]);
}

static void HandleReply(int64_t index, int64_t value) {
  result[index] = value;
  ++replies_received;
}

/* Runs the handlers on every message that has arrived; returns when none is
 * waiting. Also retires the sends that have been matched. */
static void Poll(void) {
  for (int box = 0; box < kMailboxes; ++box) {
    int arrived = 1;
    while (arrived) {
      MPI_Status status;
      MPI_Test(&in_req[box], &arrived, &status);
      if (!arrived)
        break;
      int n;
      MPI_Get_count(&status, MPI_INT64_T, &n);
      double t0 = CpuSeconds();
      for (int k = 0; k + 1 < n; k += 2) {
        if (box == kRequest)
          HandleRequest(status.MPI_SOURCE, in_buf[box][k], in_buf[box][k + 1]);
        else
          HandleReply(in_buf[box][k], in_buf[box][k + 1]);
      }
      handler_cpu += CpuSeconds() - t0;
      PostReceive(box);
    }
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int hotspot = 0, slowhandler = 0, producer = 0, bad_usage = 0;
  long reads = 40000, rounds = 600, hot = 70, factor = 4, culprit = num_ranks - 1;
  capacity = 256;
  table_size = 4096;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject=hotspot"))
      hotspot = 1;
    else if (!strcmp(argv[a], "--inject=slowhandler"))
      slowhandler = 1;
    else if (!strcmp(argv[a], "--inject=producer"))
      producer = 1;
    else if (!strcmp(argv[a], "--reads") && a + 1 < argc)
      reads = ParseLong(argv[++a]);
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
  if (bad_usage || reads < 1 || table_size < 1 || rounds < 1 || capacity < 1 || hot > 100 ||
      factor < 1 || culprit < 0) {
    if (my_rank == 0)
      fprintf(stderr, "usage: igather_actor [--inject=hotspot|slowhandler|producer] "
                      "[--reads N] [--table N] [--rounds N] [--buffer N] [--hot PERCENT] "
                      "[--factor F] [--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  culprit %= num_ranks;

  entries = malloc(table_size * sizeof(int64_t));
  for (int64_t k = 0; k < table_size; ++k)
    entries[k] = ValueAt(my_rank * table_size + k);
  result = calloc(reads, sizeof(int64_t));
  int64_t *want = malloc(reads * sizeof(int64_t));
  for (int box = 0; box < kMailboxes; ++box) {
    out[box] = malloc(num_ranks * sizeof(int64_t *));
    out_len[box] = calloc(num_ranks, sizeof(long));
    for (int d = 0; d < num_ranks; ++d)
      out[box][d] = malloc(2 * capacity * sizeof(int64_t));
    in_buf[box] = malloc(2 * capacity * sizeof(int64_t));
    PostReceive(box);
  }
  handler_rounds = (slowhandler && my_rank == culprit) ? factor * rounds : 0;

  /* The key hash stands for the work that finds what to read. */
  long my_rounds = (producer && my_rank == culprit) ? rounds * factor : rounds;
  double hash_cpu = 0;
  for (long i = 0; i < reads; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = ((uint64_t)my_rank << 40) + (uint64_t)i;
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int dest = (int)(key % (uint64_t)num_ranks);
    if (hotspot && (long)((key >> 20) % 100) < hot)
      dest = (int)culprit;
    int64_t offset = (int64_t)((key >> 32) % (uint64_t)table_size);
    want[i] = ValueAt(dest * table_size + offset);
    if (dest == my_rank) { /* local reads need no message */
      result[i] = entries[offset];
    } else {
      ++replies_expected;
      Push(kRequest, dest, offset, i);
    }
    if (i % kPollEvery == 0)
      Poll();
  }
  for (int d = 0; d < num_ranks; ++d)
    Flush(kRequest, d);

  /* Termination: poll until every reply is in and every send matched (the
   * replies this rank owes go out as their requests arrive), then until
   * everyone is there. */
  MPI_Request barrier = MPI_REQUEST_NULL;
  int finished = 0;
  while (!finished) {
    Poll();
    for (int d = 0; d < num_ranks; ++d)
      Flush(kReply, d);
    if (barrier == MPI_REQUEST_NULL && !in_flight && replies_received == replies_expected)
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    if (barrier != MPI_REQUEST_NULL)
      MPI_Test(&barrier, &finished, MPI_STATUS_IGNORE);
  }
  /* Every request was answered before its sender entered the barrier, so
   * nothing can be left in the posted receives. */
  for (int box = 0; box < kMailboxes; ++box) {
    MPI_Cancel(&in_req[box]);
    MPI_Wait(&in_req[box], MPI_STATUS_IGNORE);
  }

  long wrong = 0, wrong_total = 0;
  for (long i = 0; i < reads; ++i)
    wrong += result[i] != want[i];
  double hash_min, hash_max, handler_max;
  MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&handler_cpu, &handler_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int status_code = 0;
  if (my_rank == 0) {
    status_code = wrong_total != 0;
    printf("igather_actor: %d ranks, %ld reads, %ld wrong, key hashing cpu min %.3f max %.3f s, "
           "handler cpu max %.3f s (%llx)\n",
           num_ranks, reads * num_ranks, wrong_total, hash_min, hash_max, handler_max,
           (unsigned long long)(handler_sink & 0xf));
  }
  MPI_Bcast(&status_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(want);
  MPI_Finalize();
  return status_code;
}
