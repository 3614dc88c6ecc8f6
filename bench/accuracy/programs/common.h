/* Shared by the C and C++ programs of the accuracy benchmark: the command
 * line every program takes and the one summary line it prints from rank 0.
 *
 *   PROGRAM [--inject|-i] [--iters N] [--scale F] [--culprit R] [--share PCT]
 *
 * The summary line lets the benchmark (and a reader) check the injected
 * effect without ScalAna: the CPU time of the regular work and of the injected
 * work, measured by the program itself on the calling thread. */
#ifndef ACCURACY_COMMON_H
#define ACCURACY_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int inject;   /* plant the root cause marked ROOT CAUSE in the source */
  long iters;   /* main-loop trip count; the work per rank does not depend on the rank count */
  long culprit; /* the rank made late; -1: the program's own choice */
  long share;   /* the injection's size in % of the culprit's regular work; 0: the program's own */
} Options;

/* Thread CPU time, not wall time: ranks share cores here, and only CPU time
 * says how much work a rank did. */
static inline double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline long ParseCount(const char *text) {
  char *end;
  long v;
  if (!text || !*text)
    return -1;
  v = strtol(text, &end, 10);
  return (*end || v < 0) ? -1 : v;
}

static inline Options ParseOptions(int argc, char **argv, const char *name, long iters) {
  Options o = {0, iters, -1, 0};
  int bad = 0, rank;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject") || !strcmp(argv[a], "-i"))
      o.inject = 1;
    else if (!strcmp(argv[a], "--iters") && a + 1 < argc)
      o.iters = ParseCount(argv[++a]);
    else if (!strcmp(argv[a], "--culprit") && a + 1 < argc)
      o.culprit = ParseCount(argv[++a]);
    else if (!strcmp(argv[a], "--scale") && a + 1 < argc)
      o.iters = (long)((double)iters * atof(argv[++a]) + 0.5); /* the default's multiple */
    else if (!strcmp(argv[a], "--share") && a + 1 < argc)
      bad |= (o.share = ParseCount(argv[++a])) < 1;
    else
      bad = 1;
  }
  if (bad || o.iters < 1) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      fprintf(stderr, "usage: %s [--inject|-i] [--iters N] [--scale F] [--culprit R] [--share PCT]\n", name);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return o;
}

/* The injection's trip count EXTRA, sized by --share: EXTRA costs about
 * OWN_PCT % of the regular work (the program's own measurement), so PCT %
 * takes EXTRA * PCT / OWN_PCT. The summary line reports the share reached. */
static inline long SharedExtra(const Options *o, long extra, double own_pct) {
  return o->share > 0 ? (long)((double)extra * (double)o->share / own_pct) : extra;
}

/* The rank the injection slows: --culprit if given, else FALLBACK; modulo the
 * rank count, so every scale has one. */
static inline int Culprit(const Options *o, int fallback, int num_ranks) {
  long c = o->culprit >= 0 ? o->culprit : fallback;
  return (int)(c % num_ranks);
}

/* One line from rank 0: regular work's CPU time (min and max over ranks),
 * the injected work's (max), and a checksum that keeps the compiler from
 * dropping the work. */
static inline void Report(const char *name, const Options *o, int culprit, double t_work,
                          double t_extra, double check) {
  int rank, size;
  double in[2] = {t_work, t_extra}, hi[2], lo[2], sum;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Reduce(in, hi, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(in, lo, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&check, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("accuracy %s np=%d inject=%d culprit=%d work_cpu_min=%.3f work_cpu_max=%.3f "
           "extra_cpu_max=%.3f check=%.6g\n",
           name, size, o->inject, culprit, lo[0], hi[0], hi[1], sum);
}

#endif
