/* Aggregated actor messaging over MPI two-sided calls, the pattern of
 * Conveyors and actor/selector runtimes, shared by the actor examples
 * (histogram_actor, igather_actor). Items are fixed-size arrays of int64 put
 * in mailboxes; each mailbox has one buffer per destination, sent with
 * MPI_Issend when full, and one MPI_Irecv(MPI_ANY_SOURCE) that ConveyorPoll
 * tests, running the program's handler on each item received. Termination:
 * a rank whose sends are all matched and who awaits nothing more enters an
 * MPI_Ibarrier, and keeps polling until it completes (synchronous sends make
 * that correct: once everyone is in the barrier, every message has been
 * matched by a receive).
 *
 * The including program defines the handler (called directly, so that the
 * profile sees it under the poll that runs it):
 *   static void Deliver(int box, int from, const int64_t *item);
 */
#ifndef SCALANA_EXAMPLES_CONVEYOR_H
#define SCALANA_EXAMPLES_CONVEYOR_H

#include "async_options.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

enum { kConveyorMaxBoxes = 2, kPollEvery = 64 };

static void Deliver(int box, int from, const int64_t *item);

typedef struct Pending {
  MPI_Request req;
  int64_t *data;
  struct Pending *next;
} Pending;

/* One conveyor per program: the mailbox tag is the mailbox's index. */
static struct {
  int boxes, ranks;
  long width;                         /* int64 per item */
  long capacity;                      /* items per message */
  int64_t **out[kConveyorMaxBoxes];   /* [box][dest][width * capacity] */
  long *out_len[kConveyorMaxBoxes];   /* [box][dest], in items */
  Pending *in_flight;                 /* sends not yet matched */
  int64_t *in_buf[kConveyorMaxBoxes]; /* [box][width * capacity] */
  MPI_Request in_req[kConveyorMaxBoxes];
  long awaited;       /* items this rank still waits for before it may stop */
  double handler_cpu; /* CPU time of the handlers run by ConveyorPoll */
} conveyor;

static inline void ConveyorPostReceive(int box) {
  MPI_Irecv(conveyor.in_buf[box], (int)(conveyor.width * conveyor.capacity), MPI_INT64_T,
            MPI_ANY_SOURCE, box, MPI_COMM_WORLD, &conveyor.in_req[box]);
}

/* BOXES mailboxes of items of WIDTH int64, CAPACITY items per message. */
static inline void ConveyorInit(int boxes, long width, long capacity) {
  MPI_Comm_size(MPI_COMM_WORLD, &conveyor.ranks);
  conveyor.boxes = boxes;
  conveyor.width = width;
  conveyor.capacity = capacity;
  for (int box = 0; box < boxes; ++box) {
    conveyor.out[box] = malloc(conveyor.ranks * sizeof(int64_t *));
    conveyor.out_len[box] = calloc(conveyor.ranks, sizeof(long));
    for (int d = 0; d < conveyor.ranks; ++d)
      conveyor.out[box][d] = malloc(width * capacity * sizeof(int64_t));
    conveyor.in_buf[box] = malloc(width * capacity * sizeof(int64_t));
    ConveyorPostReceive(box);
  }
}

static inline void ConveyorFlush(int box, int dest) {
  long len = conveyor.out_len[box][dest];
  if (len == 0)
    return;
  Pending *p = malloc(sizeof *p);
  p->data = conveyor.out[box][dest];
  conveyor.out[box][dest] = malloc(conveyor.width * conveyor.capacity * sizeof(int64_t));
  MPI_Issend(p->data, (int)(conveyor.width * len), MPI_INT64_T, dest, box, MPI_COMM_WORLD, &p->req);
  conveyor.out_len[box][dest] = 0;
  p->next = conveyor.in_flight;
  conveyor.in_flight = p;
}

static inline void ConveyorFlushAll(int box) {
  for (int d = 0; d < conveyor.ranks; ++d)
    ConveyorFlush(box, d);
}

/* Appends ITEM (width int64) to DEST's buffer in BOX; sends it when full. */
static inline void ConveyorPush(int box, int dest, const int64_t *item) {
  int64_t *slot = conveyor.out[box][dest] + conveyor.width * conveyor.out_len[box][dest];
  for (long k = 0; k < conveyor.width; ++k)
    slot[k] = item[k];
  if (++conveyor.out_len[box][dest] == conveyor.capacity)
    ConveyorFlush(box, dest);
}

/* Runs the handler on every message that has arrived; returns when none is
 * waiting. Also retires the sends that have been matched. */
static inline void ConveyorPoll(void) {
  for (int box = 0; box < conveyor.boxes; ++box) {
    int arrived = 1;
    while (arrived) {
      MPI_Status status;
      MPI_Test(&conveyor.in_req[box], &arrived, &status);
      if (!arrived)
        break;
      int n;
      MPI_Get_count(&status, MPI_INT64_T, &n);
      double t0 = CpuSeconds();
      for (long k = 0; k + conveyor.width <= n; k += conveyor.width)
        Deliver(box, status.MPI_SOURCE, conveyor.in_buf[box] + k);
      conveyor.handler_cpu += CpuSeconds() - t0;
      ConveyorPostReceive(box);
    }
  }
  for (Pending **pp = &conveyor.in_flight; *pp;) {
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

/* Called once the program has pushed all its own items: sends what is left,
 * then polls (sending what the handlers push on the way) until this rank's
 * sends are matched and it awaits nothing, then until every rank is there. */
static inline void ConveyorFinish(void) {
  for (int box = 0; box < conveyor.boxes; ++box)
    ConveyorFlushAll(box);
  MPI_Request barrier = MPI_REQUEST_NULL;
  int finished = 0;
  while (!finished) {
    ConveyorPoll();
    for (int box = 0; box < conveyor.boxes; ++box) /* what the handlers pushed */
      ConveyorFlushAll(box);
    if (barrier == MPI_REQUEST_NULL && !conveyor.in_flight && conveyor.awaited == 0)
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    if (barrier != MPI_REQUEST_NULL)
      MPI_Test(&barrier, &finished, MPI_STATUS_IGNORE);
  }
  /* A message matched just before the barrier completed may still be in a
   * posted receive: cancelling fails for it, and it is handled. */
  for (int box = 0; box < conveyor.boxes; ++box) {
    MPI_Status status;
    int cancelled;
    MPI_Cancel(&conveyor.in_req[box]);
    MPI_Wait(&conveyor.in_req[box], &status);
    MPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
      continue;
    int n;
    MPI_Get_count(&status, MPI_INT64_T, &n);
    for (long k = 0; k + conveyor.width <= n; k += conveyor.width)
      Deliver(box, status.MPI_SOURCE, conveyor.in_buf[box] + k);
  }
}

#endif
