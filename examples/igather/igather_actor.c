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
 * the barrier completes. The messaging is ../common/conveyor.h (two
 * mailboxes, items of two int64); options, keys and skew come from
 * ../common/async_options.h.
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
#include "../common/async_options.h"
#include "../common/conveyor.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kRequest = 0, kReply = 1, kMailboxes = 2 };

/* The value stored at global index G: the reader can check what it got. */
static int64_t ValueAt(int64_t g) { return 3 * g + 1; }

static int64_t *entries;      /* my part of the table */
static int64_t *result;       /* [reads]: what each read got */
static long handler_rounds;   /* extra work per request (0: none) */
static uint64_t handler_sink; /* keeps the handler's work from being optimised away */

/* Request handler: reads the entry and answers the requester. */
static void HandleRequest(int from, int64_t offset, int64_t index) {
  uint64_t x = (uint64_t)offset;
  for (long r = 0; r < handler_rounds; ++r) // ROOT CAUSE (slowhandler): slow on the culprit
    x = Mix(x);
  handler_sink ^= x;
  int64_t reply[2] = {index, entries[offset]};
  ConveyorPush(kReply, from, reply);
}

static void HandleReply(int64_t index, int64_t value) {
  result[index] = value;
  --conveyor.awaited;
}

/* The conveyor's handler: requests are (offset, index), replies (index, value). */
static void Deliver(int box, int from, const int64_t *item) {
  if (box == kRequest)
    HandleRequest(from, item[0], item[1]);
  else
    HandleReply(item[0], item[1]);
}

int main(int argc, char **argv) {
  int my_rank, num_ranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  AsyncOptions o = {.count_option = "--reads",
                    .chunk_option = "--buffer",
                    .accepts_slowhandler = 1,
                    .count = 40000,
                    .table = 4096,
                    .rounds = 600,
                    .chunk = 256,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, num_ranks)) {
    if (my_rank == 0)
      fprintf(stderr, "usage: igather_actor [--inject=hotspot|slowhandler|producer] "
                      "[--reads N] [--table N] [--rounds N] [--buffer N] [--hot PERCENT] "
                      "[--factor F] [--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long reads = o.count;
  int64_t table_size = o.table;

  entries = malloc(table_size * sizeof(int64_t));
  for (int64_t k = 0; k < table_size; ++k)
    entries[k] = ValueAt(my_rank * table_size + k);
  result = calloc(reads, sizeof(int64_t));
  int64_t *want = malloc(reads * sizeof(int64_t));
  ConveyorInit(kMailboxes, 2, o.chunk); /* items of two int64 */
  handler_rounds = HandlerRounds(&o, my_rank);

  /* The key hash stands for the work that finds what to read. */
  long my_rounds = ProducerRounds(&o, my_rank);
  double hash_cpu = 0;
  for (long i = 0; i < reads; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(my_rank, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int dest = KeyOwner(&o, key, num_ranks); /* the culprit, for --hot percent */
    int64_t offset = KeyOffset(&o, key);
    want[i] = ValueAt(dest * table_size + offset);
    if (dest == my_rank) { /* local reads need no message */
      result[i] = entries[offset];
    } else {
      ++conveyor.awaited; /* its reply */
      int64_t request[2] = {offset, i};
      ConveyorPush(kRequest, dest, request);
    }
    if (i % kPollEvery == 0)
      ConveyorPoll();
  }
  /* Replies this rank owes go out as their requests arrive; it stops once
   * every reply it awaits is in and everyone is done. */
  ConveyorFinish();

  long wrong = 0, wrong_total = 0;
  for (long i = 0; i < reads; ++i)
    wrong += result[i] != want[i];
  double hash_min, hash_max, handler_max;
  MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&conveyor.handler_cpu, &handler_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
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
