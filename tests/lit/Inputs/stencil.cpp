// C++ code whose performance the old call-site instrumentation hurt most:
// a RAJA-style forall(lambda) stencil (inlined template and lambda bodies in
// a vectorisable loop), a virtual call in a loop, and a call that may throw.
#include <mpi.h>
#include <cstdio>
#include <stdexcept>
#include <vector>

template <typename Body> inline void forall(int begin, int end, Body &&body) {
  for (int i = begin; i < end; ++i)
    body(i);
}

struct Operator {
  virtual ~Operator() = default;
  virtual double apply(double x) const = 0;
};

struct Damp : Operator {
  double factor;
  explicit Damp(double f) : factor(f) {}
  double apply(double x) const override { return x * factor; }
};

double check(double v) {
  if (v != v)
    throw std::runtime_error("not a number");
  return v;
}

double sweep(std::vector<double> &u, std::vector<double> &tmp, const Operator &op) {
  const int n = static_cast<int>(u.size());
  forall(1, n - 1, [&](int i) { tmp[i] = 0.25 * (u[i - 1] + 2 * u[i] + u[i + 1]); });
  forall(1, n - 1, [&](int i) { u[i] = op.apply(tmp[i]); });
  double local = 0, global = 0;
  forall(0, n, [&](int i) { local += u[i] * u[i]; });
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::vector<double> u(1024, 1.0), tmp(1024, 0.0);
  Damp damp(0.5);
  double norm = 0;
  try {
    for (int step = 0; step < 10; ++step)
      norm = check(sweep(u, tmp, damp));
  } catch (const std::exception &e) {
    std::printf("error: %s\n", e.what());
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("norm %.3f\n", norm);
  MPI_Finalize();
  return 0;
}
