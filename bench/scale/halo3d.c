/* The program whose profile bench-scale replicates to a million ranks: a 3-D
 * halo exchange on a periodic process grid (MPI_Dims_create), every rank
 * trading faces, edges and corners with its 26 neighbours (MPI_Isend,
 * MPI_Irecv, MPI_Waitall), relaxing its block, and summing a residual over
 * its z-plane (a sub-communicator, MPI_Allreduce) and over all ranks every
 * tenth step. Ranks on the x = 0 face also apply a boundary condition, so
 * ranks differ in the vertices they have data at.
 *
 * The benchmark makes a few ranks slow in the loop marked ROOT CAUSE; the
 * program itself runs it for the same time everywhere. */
#include <mpi.h>
#include <stdio.h>

enum { kN = 32, kIters = 300, kCells = kN * kN * kN };

static double block[kCells], next[kCells];
static double faces[26][kN * kN], halos[26][kN * kN];

static double Relax(void) {
  double res = 0;
  for (int sweep = 0; sweep < 8; ++sweep)
    for (int i = 1; i < kCells - 1; ++i) {
      next[i] = 0.5 * block[i] + 0.25 * (next[i - 1] + block[i + 1]);
      res += (next[i] - block[i]) * (next[i] - block[i]);
    }
  for (int i = 0; i < kCells; ++i)
    block[i] = next[i];
  return res;
}

static double Source(int step) {
  double s = 0;
  for (int i = 0; i < 8 * kCells; ++i) // ROOT CAUSE: made slow on a few ranks
    s += block[i % kCells] * (1.0 + 1e-3 * (step + i % 7));
  return s;
}

static void Boundary(void) {
  for (int i = 0; i < 64 * kN * kN; ++i)
    block[i % (kN * kN)] = 0.5 * block[(i + 1) % (kN * kN)] + 0.5;
}

int main(int argc, char **argv) {
  int rank, size, dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, me[3];
  MPI_Comm grid, plane;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 3, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &grid);
  MPI_Comm_rank(grid, &rank);
  MPI_Cart_coords(grid, rank, 3, me);
  MPI_Comm_split(MPI_COMM_WORLD, me[2], rank, &plane);
  int peer[26], n = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy && !dz)
          continue;
        int c[3] = {me[0] + dx, me[1] + dy, me[2] + dz};
        MPI_Cart_rank(grid, c, &peer[n++]);
      }
  for (int i = 0; i < kCells; ++i)
    block[i] = (double)(i % 17) / 17.0;
  double total = 0;
  for (int step = 0; step < kIters; ++step) {
    MPI_Request req[52];
    for (int k = 0; k < 26; ++k)
      MPI_Irecv(halos[k], kN * kN, MPI_DOUBLE, peer[k], 25 - k, MPI_COMM_WORLD, &req[k]);
    for (int k = 0; k < 26; ++k)
      MPI_Isend(faces[k], kN * kN, MPI_DOUBLE, peer[k], k, MPI_COMM_WORLD, &req[26 + k]);
    MPI_Waitall(52, req, MPI_STATUSES_IGNORE);
    double res = Relax() + Source(step), sum = 0;
    if (me[0] == 0)
      Boundary();
    MPI_Allreduce(&res, &sum, 1, MPI_DOUBLE, MPI_SUM, plane);
    if (step % 10 == 0)
      MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("halo3d: %d ranks, residual %g\n", size, total);
  MPI_Finalize();
  return 0;
}
