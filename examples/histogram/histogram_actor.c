/* Histogram (random updates to a distributed table) with aggregated actor
 * messaging, the pattern of Conveyors and actor/selector runtimes built with
 * MPI two-sided calls: each rank owns --table counters; each rank computes
 * --updates keys and sends "add 1 at offset k" to the owner of each key. The
 * messages are gathered in one buffer per destination, sent with MPI_Issend
 * when the buffer is full; every rank keeps an MPI_Irecv(MPI_ANY_SOURCE)
 * posted and polls it with MPI_Test, running the handler on each message it
 * receives. Termination: when a rank's sends have all been matched it enters
 * an MPI_Ibarrier and keeps polling until the barrier completes. The
 * messaging is ../common/conveyor.h (one mailbox, items of one int64);
 * options, keys and skew come from ../common/async_options.h.
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
#include "../common/async_options.h"
#include "../common/conveyor.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kUpdates = 0 }; /* the only mailbox */

static long *table;           /* my part of the table */
static long handled;          /* updates applied here */
static long handler_rounds;   /* extra work per update (0: none) */
static uint64_t handler_sink; /* keeps the handler's work from being optimised away */

/* Applies one update to the local part of the table. */
static void Handle(int64_t offset) {
  uint64_t x = (uint64_t)offset;
  for (long r = 0; r < handler_rounds; ++r) // ROOT CAUSE (slowhandler): slow on the culprit
    x = Mix(x);
  handler_sink ^= x;
  table[offset] += 1;
  ++handled;
}

/* The conveyor's handler: ITEM is an offset into my part of the table. */
static void Deliver(int box, int from, const int64_t *item) {
  (void)box;
  (void)from;
  Handle(item[0]);
}

int main(int argc, char **argv) {
  int my_rank, num_ranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  AsyncOptions o = {.count_option = "--updates",
                    .chunk_option = "--buffer",
                    .accepts_slowhandler = 1,
                    .count = 40000,
                    .table = 4096,
                    .rounds = 600,
                    .chunk = 512,
                    .hot = 70,
                    .factor = 4};
  if (!ParseOptions(&o, argc, argv, num_ranks)) {
    if (my_rank == 0)
      fprintf(stderr, "usage: histogram_actor [--inject=hotspot|slowhandler|producer] "
                      "[--updates N] [--table N] [--rounds N] [--buffer N] [--hot PERCENT] "
                      "[--factor F] [--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long updates = o.count;

  table = calloc(o.table, sizeof(long));
  handler_rounds = HandlerRounds(&o, my_rank);
  ConveyorInit(kUpdates + 1, 1, o.chunk); /* one mailbox, items of one offset */

  /* The key hash stands for the work that finds what to update. */
  long my_rounds = ProducerRounds(&o, my_rank);
  double hash_cpu = 0;
  for (long i = 0; i < updates; ++i) { // ROOT CAUSE (hotspot): the keys' owners come out skewed
    double t0 = CpuSeconds();
    uint64_t key = KeySeed(my_rank, i);
    for (long r = 0; r < my_rounds; ++r) // ROOT CAUSE (producer): longer on the culprit
      key = Mix(key);
    hash_cpu += CpuSeconds() - t0;
    int dest = KeyOwner(&o, key, num_ranks); /* the culprit, for --hot percent */
    int64_t offset = KeyOffset(&o, key);
    if (dest == my_rank) /* local updates need no message */
      Handle(offset);
    else
      ConveyorPush(kUpdates, dest, &offset);
    if (i % kPollEvery == 0)
      ConveyorPoll();
  }
  ConveyorFinish(); /* every update sent has been handled */

  /* Check: every update landed once; report the busiest target's share. */
  long total = 0, most = 0;
  double hash_min, hash_max, handler_max;
  MPI_Reduce(&handled, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&handled, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash_cpu, &hash_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&conveyor.handler_cpu, &handler_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int status_code = 0;
  if (my_rank == 0) {
    status_code = total != updates * num_ranks;
    printf("histogram_actor: %d ranks, %ld updates, busiest target %.0f%% (fair %.0f%%), "
           "key hashing cpu min %.3f max %.3f s, handler cpu max %.3f s (%llx)%s\n",
           num_ranks, total, 100.0 * most / total, 100.0 / num_ranks, hash_min, hash_max,
           handler_max, (unsigned long long)(handler_sink & 0xf),
           status_code ? " WRONG TOTAL" : "");
  }
  MPI_Bcast(&status_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status_code;
}
