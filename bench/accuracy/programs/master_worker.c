/* Master/worker: rank 0 starts each round with MPI_Bcast, then collects one
 * result per worker with MPI_Irecv(MPI_ANY_SOURCE) and MPI_Waitany, in
 * whatever order they come. Every worker computes the same number of
 * task() calls per round (weak scaling: more ranks, more tasks in all).
 *
 * --inject: the last worker runs extra calls of the same task() function
 * every round. The hard part for an analysis: task() is also every worker's
 * regular work, so its own loop is not what differs; the extra calls are.
 * The master waits for that worker in MPI_Waitany, everyone else for the
 * master in the next MPI_Bcast. */
#include "common.h"

enum { kTasks = 12, kLength = 72000, kTagResult = 7 };

static int my_rank, num_ranks;

/* One unit of work: a scalar recurrence, pure CPU. */
static double task(long seed, int length) {
  double x = 1e-3 * (double)(seed % 1000), s = 0.0;
  for (int i = 0; i < length; ++i) {
    x = x * 0.999 + 0.5 / (1.0 + x * x);
    s += x;
  }
  return s;
}

static double Master(long rounds, int workers) {
  MPI_Request *req = malloc(workers * sizeof(MPI_Request));
  double *result = malloc(workers * sizeof(double)), total = 0.0;
  for (long r = 0; r < rounds; ++r) {
    long seed = 1000 * r;
    MPI_Bcast(&seed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int w = 0; w < workers; ++w)
      MPI_Irecv(&result[w], 1, MPI_DOUBLE, MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &req[w]);
    for (int done = 0; done < workers; ++done) {
      int which;
      MPI_Status st;
      MPI_Waitany(workers, req, &which, &st);
      total += result[which];
    }
  }
  free(req);
  free(result);
  return total;
}

static double Worker(long rounds, long extra_tasks, double *t_work, double *t_extra) {
  double acc = 0.0;
  for (long r = 0; r < rounds; ++r) {
    long seed;
    MPI_Bcast(&seed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double t0 = CpuSeconds(), mine = 0.0;
    for (int t = 0; t < kTasks; ++t)
      mine += task(seed + t, kLength);
    double t1 = CpuSeconds();
    for (long e = 0; e < extra_tasks; ++e)
      mine += task(seed + kTasks + e, kLength); // ROOT CAUSE: the last worker's extra task() calls
    *t_extra += CpuSeconds() - t1;
    *t_work += t1 - t0;
    MPI_Send(&mine, 1, MPI_DOUBLE, 0, kTagResult, MPI_COMM_WORLD);
    acc += mine;
  }
  return acc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "master_worker", 40);
  if (num_ranks < 2) {
    if (my_rank == 0)
      fprintf(stderr, "master_worker: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* Rank 0 is the master, so the default culprit is the last worker. */
  int culprit = Culprit(&opt, num_ranks - 1, num_ranks);
  /* Two thirds more tasks than the regular ones. */
  long extra_tasks = (opt.inject && my_rank == culprit) ? kTasks * 2 / 3 : 0;
  double t_work = 0.0, t_extra = 0.0, check;
  if (my_rank == 0)
    check = Master(opt.iters, num_ranks - 1);
  else
    check = Worker(opt.iters, extra_tasks, &t_work, &t_extra);
  Report("master_worker", &opt, culprit, t_work, t_extra, check * 1e-6);
  MPI_Finalize();
  return 0;
}
