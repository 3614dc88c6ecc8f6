/* Function-pointer dispatch in the style of hypre's multigrid setup: the
 * solver is a struct of function pointers (halo exchange, smoother per
 * level, restriction, interpolation, norm), the smoothers picked from a
 * table by a "relax type" number, as BoomerAMG does. Each iteration is one
 * V-cycle on a 1-D ring split into equal segments (weak scaling: a fixed
 * segment per rank): exchange ghosts with MPI_Sendrecv, smooth, restrict,
 * down to the coarsest level, where an MPI_Allreduce couples all ranks, and
 * back up.
 *
 * --inject: rank 1 picks a costlier smoother for its finest level (a
 * relaxation with inner passes per point); its ring neighbours wait in
 * MPI_Sendrecv, everyone in the coarse MPI_Allreduce. */
#include "common.h"

enum { kFine = 4096, kLevels = 4, kSweeps = 150, kInner = 2 };

static int my_rank, num_ranks;

typedef struct {
  int n;         /* points of this rank's segment on this level */
  double *u, *f; /* with a ghost point on each side */
} Level;

typedef void (*ExchangeFn)(Level *);
typedef void (*RelaxFn)(Level *, int sweeps);
typedef void (*TransferFn)(Level *from, Level *to);
typedef double (*NormFn)(const Level *);

typedef struct {
  Level level[kLevels];
  ExchangeFn exchange;
  RelaxFn relax[kLevels];
  TransferFn restrict_to_coarse, interpolate_to_fine;
  NormFn norm;
} Solver;

static void ExchangeGhosts(Level *l) {
  int left = (my_rank + num_ranks - 1) % num_ranks, right = (my_rank + 1) % num_ranks;
  MPI_Sendrecv(&l->u[l->n], 1, MPI_DOUBLE, right, 41, &l->u[0], 1, MPI_DOUBLE, left, 41,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&l->u[1], 1, MPI_DOUBLE, left, 42, &l->u[l->n + 1], 1, MPI_DOUBLE, right, 42,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Relax type 0: Gauss-Seidel, in place. */
static void RelaxGaussSeidel(Level *l, int sweeps) {
  double *u = l->u, *f = l->f;
  for (int s = 0; s < sweeps; ++s)
    for (int i = 1; i <= l->n; ++i)
      u[i] = (f[i] + u[i - 1] + u[i + 1]) / (2.0 + 1e-2);
}

/* Relax type 1: each point relaxed several times against its neighbours'
 * current values: smooths more per sweep, costs more. */
static void RelaxInnerPasses(Level *l, int sweeps) {
  double *u = l->u, *f = l->f;
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 1; i <= l->n; ++i) {
      double v = u[i];
      for (int k = 0; k < kInner; ++k) // ROOT CAUSE: rank 1's costlier smoother on the finest level
        v = 0.5 * v + 0.5 * (f[i] + u[i - 1] + u[i + 1] - v) / (1.0 + 1e-2);
      u[i] = v;
    }
  }
}

static const RelaxFn kRelaxTypes[] = {RelaxGaussSeidel, RelaxInnerPasses};

static void Restrict(Level *fine, Level *coarse) {
  for (int i = 1; i <= coarse->n; ++i) {
    coarse->f[i] = 0.5 * (fine->f[2 * i - 1] + fine->f[2 * i]) + 1e-3 * fine->u[2 * i];
    coarse->u[i] = 0.0;
  }
}

/* Averages the coarse values into the fine ones (damped, so the values
 * stay bounded over any number of cycles). */
static void Interpolate(Level *coarse, Level *fine) {
  for (int i = 1; i <= coarse->n; ++i) {
    fine->u[2 * i - 1] = 0.5 * (fine->u[2 * i - 1] + coarse->u[i]);
    fine->u[2 * i] = 0.5 * (fine->u[2 * i] + coarse->u[i]);
  }
}

static double Norm(const Level *l) {
  double s = 0.0;
  for (int i = 1; i <= l->n; ++i)
    s += l->u[i] * l->u[i];
  return s;
}

static double VCycle(Solver *s, double *t_relax, double *t_extra) {
  for (int k = 0; k < kLevels; ++k) {
    Level *l = &s->level[k];
    s->exchange(l);
    double t0 = CpuSeconds();
    s->relax[k](l, kSweeps);
    double dt = CpuSeconds() - t0;
    *(s->relax[k] == RelaxGaussSeidel ? t_relax : t_extra) += dt;
    if (k + 1 < kLevels)
      s->restrict_to_coarse(l, &s->level[k + 1]);
  }
  double local = s->norm(&s->level[kLevels - 1]), global;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int k = kLevels - 2; k >= 0; --k)
    s->interpolate_to_fine(&s->level[k + 1], &s->level[k]);
  return global;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "fptr", 40);
  int culprit = Culprit(&opt, 1, num_ranks);

  Solver s;
  for (int k = 0; k < kLevels; ++k) {
    Level *l = &s.level[k];
    l->n = kFine >> k;
    l->u = calloc(l->n + 2, sizeof(double));
    l->f = calloc(l->n + 2, sizeof(double));
    for (int i = 1; i <= l->n; ++i)
      l->f[i] = 1e-3 * ((i * 5 + my_rank) % 17);
    s.relax[k] = kRelaxTypes[0];
  }
  if (opt.inject && my_rank == culprit)
    s.relax[0] = kRelaxTypes[1];
  s.exchange = ExchangeGhosts;
  s.restrict_to_coarse = Restrict;
  s.interpolate_to_fine = Interpolate;
  s.norm = Norm;

  double total = 0.0, t_work = 0.0, t_extra = 0.0;
  for (long it = 0; it < opt.iters; ++it)
    total += VCycle(&s, &t_work, &t_extra);

  Report("fptr", &opt, culprit, t_work, t_extra, total);
  for (int k = 0; k < kLevels; ++k) {
    free(s.level[k].u);
    free(s.level[k].f);
  }
  MPI_Finalize();
  return 0;
}
