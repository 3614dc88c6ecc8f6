/* What one wrapped MPI call costs, and what the profiler costs a program
 * that makes about a million small calls per second per rank. Built with
 * plain mpicc on clang-19; bench_wrapper.py runs it as is and under
 * `scalana prof` (the runtime preloaded) and subtracts.
 *
 *   wrapper_cost percall N   ns per call of MPI_Isend, MPI_Irecv, MPI_Test
 *                            (polling a request that does not complete),
 *                            MPI_Test through one helper that two callers
 *                            call in turn (MPI_Test_2callers: one call
 *                            site, two chains of calls at the same stack
 *                            depth), MPI_Accumulate, MPI_Get,
 *                            MPI_Win_flush; N calls each, only the calls
 *                            themselves timed
 *   wrapper_cost rate N [W]  two message-rate loops, N iterations each: an
 *                            Isend/Irecv/Test exchange and an Accumulate
 *                            stream with a flush every 64; W units of
 *                            computation (a dependent multiply-add each)
 *                            after every MPI call set the call rate; prints
 *                            their times and MPI calls per second per rank
 *
 * Figures are in CPU time of the calling thread, so that other programs
 * of a shared machine preempting a rank do not count (the rate loops also
 * print wall time; calls per second are per CPU second of the rank).
 *
 * 2 ranks. Output lines: "<name> <value>" on rank 0 (rank 1's for Irecv). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(int thread) {
  struct timespec ts;
  clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#define NOW() cpu_now(1)

enum { kBatch = 256 };

static int rank;
static long work_units;
static volatile unsigned long long sink;

/* Fixed computation between calls, the same in every run: one dependent
 * multiply-add per unit. The empty asm keeps the compiler from combining
 * units (clang-19 folds the plain loop into far fewer operations, gcc
 * does not), so a unit costs the same whichever compiler built it. */
static void work(void) {
  unsigned long long x = sink;
  for (long i = 0; i < work_units; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
  }
  sink = x;
}

static void report(const char *name, double seconds, long calls) {
  printf("%s %.2f\n", name, seconds * 1e9 / (double)calls);
}

/* Isend timed on rank 0, Irecv on rank 1; the completions are not timed. */
static void p2p_posts(long n) {
  MPI_Request reqs[kBatch];
  int buf[kBatch];
  double t = 0;
  for (long done = 0; done < n; done += kBatch) {
    double t0 = NOW();
    for (int i = 0; i < kBatch; ++i) {
      if (rank == 0)
        MPI_Isend(&buf[i], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &reqs[i]);
      else
        MPI_Irecv(&buf[i], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &reqs[i]);
    }
    t += NOW() - t0;
    MPI_Waitall(kBatch, reqs, MPI_STATUSES_IGNORE);
  }
  double other = 0;
  if (rank == 1)
    MPI_Send(&t, 1, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
  else
    MPI_Recv(&other, 1, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) {
    report("MPI_Isend", t, n);
    report("MPI_Irecv", other, n);
  }
}

/* MPI_Test on a receive nobody sends: the polling path. */
static void test_polling(long n) {
  int buf = 0, flag = 0;
  MPI_Request req;
  MPI_Irecv(&buf, 1, MPI_INT, 1 - rank, 99, MPI_COMM_WORLD, &req);
  double t0 = NOW();
  for (long i = 0; i < n; ++i)
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  double t = NOW() - t0;
  MPI_Cancel(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (rank == 0)
    report("MPI_Test", t, n);
}

/* Quicksilver's shape: every MPI_Test goes through a one-line helper,
 * reached from several callers whose frames lie at the same depth. */
__attribute__((noinline)) static int test_helper(MPI_Request *req) {
  int flag = 0;
  MPI_Test(req, &flag, MPI_STATUS_IGNORE);
  return flag;
}
__attribute__((noinline)) static int caller_a(MPI_Request *req) {
  volatile int pad = 1;
  return test_helper(req) + pad;
}
__attribute__((noinline)) static int caller_b(MPI_Request *req) {
  volatile int pad = 2;
  return test_helper(req) + pad;
}

static void test_two_callers(long n) {
  int buf = 0;
  long got = 0;
  MPI_Request req;
  MPI_Irecv(&buf, 1, MPI_INT, 1 - rank, 98, MPI_COMM_WORLD, &req);
  double t0 = NOW();
  for (long i = 0; i < n; ++i)
    got += (i & 1) ? caller_b(&req) : caller_a(&req);
  double t = NOW() - t0;
  MPI_Cancel(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  sink += (unsigned long long)got;
  if (rank == 0)
    report("MPI_Test_2callers", t, n);
}

static void rma(long n) {
  double *base;
  MPI_Win win;
  MPI_Win_allocate(kBatch * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  memset(base, 0, kBatch * sizeof(double));
  double one = 1, got[kBatch];
  double t_acc = 0, t_get = 0, t_flush = 0;
  MPI_Win_lock_all(0, win);
  for (long done = 0; done < n; done += kBatch) {
    double t0 = NOW();
    for (int i = 0; i < kBatch; ++i)
      MPI_Accumulate(&one, 1, MPI_DOUBLE, 1 - rank, i, 1, MPI_DOUBLE, MPI_SUM, win);
    t_acc += NOW() - t0;
    MPI_Win_flush(1 - rank, win);
    t0 = NOW();
    for (int i = 0; i < kBatch; ++i)
      MPI_Get(&got[i], 1, MPI_DOUBLE, 1 - rank, i, 1, MPI_DOUBLE, win);
    t_get += NOW() - t0;
    MPI_Win_flush(1 - rank, win);
  }
  /* Flush with nothing pending: the call itself. */
  double t0 = NOW();
  for (long i = 0; i < n; ++i)
    MPI_Win_flush(1 - rank, win);
  t_flush = NOW() - t0;
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  if (rank == 0) {
    report("MPI_Accumulate", t_acc, n);
    report("MPI_Get", t_get, n);
    report("MPI_Win_flush", t_flush, n);
  }
}

/* Each iteration: one Isend and one Irecv per rank, then Test until both
 * complete (at least 2 Tests). */
static double rate_p2p(long n, long *calls, double *cpu) {
  int out = 1, in = 0;
  long made = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = cpu_now(1);
  for (long i = 0; i < n; ++i) {
    MPI_Request r[2];
    MPI_Irecv(&in, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, &r[0]);
    work();
    MPI_Isend(&out, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, &r[1]);
    work();
    made += 2;
    for (int k = 0; k < 2; ++k) {
      int flag = 0;
      while (!flag) {
        MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE);
        work();
        ++made;
      }
    }
  }
  *calls = made;
  *cpu = cpu_now(1) - c0;
  return MPI_Wtime() - t0;
}

static double rate_acc(long n, long *calls, double *cpu) {
  double *base, one = 1;
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = cpu_now(1);
  MPI_Win_lock_all(0, win);
  for (long i = 0; i < n; ++i) {
    MPI_Accumulate(&one, 1, MPI_DOUBLE, 1 - rank, (int)(i & 63), 1, MPI_DOUBLE, MPI_SUM, win);
    work();
    if ((i & 63) == 63) {
      MPI_Win_flush(1 - rank, win);
      work();
    }
  }
  *calls = n + n / 64;
  MPI_Win_unlock_all(win);
  double t = MPI_Wtime() - t0;
  *cpu = cpu_now(1) - c0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  return t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 wrapper_cost percall|rate N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long n = atol(argv[2]);
  n = (n + kBatch - 1) / kBatch * kBatch;
  if (strcmp(argv[1], "percall") == 0) {
    p2p_posts(n);
    test_polling(n);
    test_two_callers(n);
    rma(n);
  } else {
    work_units = argc > 3 ? atol(argv[3]) : 0;
    long pc = 0, ac = 0;
    double pcpu = 0, acpu = 0;
    /* The writer thread's start (first snapshot, the binary's ids) is done
     * by now: a fixed cost per run, not per call. */
    MPI_Barrier(MPI_COMM_WORLD);
    double until = MPI_Wtime() + 0.3;
    while (MPI_Wtime() < until)
      ;
    double p = rate_p2p(n, &pc, &pcpu), a = rate_acc(n, &ac, &acpu);
    if (rank == 0)
      printf("rate_p2p %.4f\nrate_p2p_cpu %.4f\nrate_p2p_calls_per_s %.0f\n"
             "rate_acc %.4f\nrate_acc_cpu %.4f\nrate_acc_calls_per_s %.0f\n",
             p, pcpu, pc / pcpu, a, acpu, ac / acpu);
  }
  MPI_Finalize();
  return 0;
}
