/* 2-D halo exchange with MPI_Sendrecv: nonlinear diffusion on a block per
 * rank of a 2-D process grid (MPI_Dims_create; weak scaling: the block size
 * is fixed).
 *
 * Every iteration trades the four block edges with MPI_Sendrecv (columns
 * packed into buffers), relaxes the block with several sweeps (block-Jacobi
 * style: the inner sweeps need no exchange), and solves a scalar nonlinear
 * boundary condition with Newton steps; every fifth iteration the residual is
 * summed with MPI_Allreduce.
 *
 * --inject: one rank (the middle one, np / 2) needs many more Newton steps
 * for its boundary condition; its grid neighbours wait in MPI_Sendrecv and
 * everyone in MPI_Allreduce. */
#include "common.h"

enum { kNX = 96, kNY = 96, kSweeps = 200, kNewton = 150000 };
#define IDX(i, j) ((j) * (kNX + 2) + (i))

static int my_rank, num_ranks;
static int west, east, south, north;

static void Exchange(double *u, double *send, double *recv) {
  /* Rows are contiguous; columns go through the buffers. */
  MPI_Sendrecv(&u[IDX(1, kNY)], kNX, MPI_DOUBLE, north, 1, &u[IDX(1, 0)], kNX, MPI_DOUBLE, south,
               1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&u[IDX(1, 1)], kNX, MPI_DOUBLE, south, 2, &u[IDX(1, kNY + 1)], kNX, MPI_DOUBLE,
               north, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int j = 1; j <= kNY; ++j)
    send[j - 1] = u[IDX(kNX, j)];
  MPI_Sendrecv(send, kNY, MPI_DOUBLE, east, 3, recv, kNY, MPI_DOUBLE, west, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (west != MPI_PROC_NULL)
    for (int j = 1; j <= kNY; ++j)
      u[IDX(0, j)] = recv[j - 1];
  for (int j = 1; j <= kNY; ++j)
    send[j - 1] = u[IDX(1, j)];
  MPI_Sendrecv(send, kNY, MPI_DOUBLE, west, 4, recv, kNY, MPI_DOUBLE, east, 4, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (east != MPI_PROC_NULL)
    for (int j = 1; j <= kNY; ++j)
      u[IDX(kNX + 1, j)] = recv[j - 1];
}

/* Diffusion with a coefficient that depends on the solution. */
static double Diffuse(const double *u, double *unew) {
  double res = 0.0;
  for (int j = 1; j <= kNY; ++j) {
    for (int i = 1; i <= kNX; ++i) {
      double c = u[IDX(i, j)], k = 0.2 / (1.0 + c * c);
      double v = c + k * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] +
                          u[IDX(i, j + 1)] - 4.0 * c);
      res += (v - c) * (v - c);
      unew[IDX(i, j)] = v;
    }
  }
  return res;
}

/* Newton's method for the cube root that sets the boundary value; a fixed
 * number of steps, as a solver with a tight tolerance would take. */
static double BoundarySolve(double target, long steps) {
  double x = 1.0 + target;
  for (long k = 0; k < steps; ++k) // ROOT CAUSE: many more Newton steps on the culprit
    x -= (x * x * x - target) / (3.0 * x * x);
  return x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "halo2d", 60);
  int culprit = Culprit(&opt, num_ranks / 2, num_ranks);

  int dims[2] = {0, 0};
  MPI_Dims_create(num_ranks, 2, dims);
  int cx = my_rank % dims[0], cy = my_rank / dims[0];
  west = cx > 0 ? my_rank - 1 : MPI_PROC_NULL;
  east = cx < dims[0] - 1 ? my_rank + 1 : MPI_PROC_NULL;
  south = cy > 0 ? my_rank - dims[0] : MPI_PROC_NULL;
  north = cy < dims[1] - 1 ? my_rank + dims[0] : MPI_PROC_NULL;

  size_t cells = (size_t)(kNX + 2) * (kNY + 2);
  double *u = calloc(cells, sizeof(double)), *unew = calloc(cells, sizeof(double));
  double send[kNY], recv[kNY];
  for (int j = 1; j <= kNY; ++j)
    for (int i = 1; i <= kNX; ++i)
      u[IDX(i, j)] = unew[IDX(i, j)] = 0.01 * ((i + 3 * j + my_rank) % 17);
  /* Four times the regular Newton steps: the extra three are close to the
   * rest of a rank's work. */
  long newton = (opt.inject && my_rank == culprit) ? 4L * kNewton : kNewton;
  double res = 0.0, total = 0.0, bc = 0.0, t_work = 0.0, t_extra = 0.0;

  for (long it = 0; it < opt.iters; ++it) {
    Exchange(u, send, recv);
    double t0 = CpuSeconds();
    for (int s = 0; s < kSweeps; ++s) {
      res = Diffuse(u, unew);
      double *t = u;
      u = unew, unew = t;
    }
    double t1 = CpuSeconds();
    bc += BoundarySolve(2.0 + 1e-3 * (double)(it % 7), newton);
    double t2 = CpuSeconds();
    /* The regular share of the Newton steps counts as work, the rest as extra. */
    t_work += (t1 - t0) + (t2 - t1) * kNewton / (double)newton;
    t_extra += (t2 - t1) * (1.0 - kNewton / (double)newton);
    if (it % 5 == 4)
      MPI_Allreduce(&res, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("halo2d", &opt, culprit, t_work, t_extra, total + bc);
  free(u);
  free(unew);
  MPI_Finalize();
  return 0;
}
