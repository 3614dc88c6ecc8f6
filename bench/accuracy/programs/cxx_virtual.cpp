// C++ with virtual calls, templates and lambdas: a reaction-diffusion step
// made of operators (an abstract class with a virtual Apply) held in a
// vector and applied in turn through one call site; a ring halo exchange
// with MPI_Sendrecv written as a template over the element type; a
// template reduction taking a lambda, whose result is summed with
// MPI_Allreduce. Weak scaling: a fixed field per rank.
//
// --inject: the middle rank (np / 2) adds one more operator, a stiff
// reaction, to its list: one more target of the same virtual call, found on
// that rank only. Its ring neighbours wait in MPI_Sendrecv, everyone in
// MPI_Allreduce.
#include "common.h"

#include <memory>
#include <vector>

namespace {

constexpr int kCells = 4096;
constexpr int kPasses = 330;

int my_rank, num_ranks;

template <typename T>
struct MpiType;
template <>
struct MpiType<double> {
  static MPI_Datatype Get() { return MPI_DOUBLE; }
};

// Ghost cells: field[0] and field[n + 1] come from the ring neighbours.
template <typename T>
void ExchangeRing(std::vector<T> &field) {
  const int n = static_cast<int>(field.size()) - 2;
  const int left = (my_rank + num_ranks - 1) % num_ranks, right = (my_rank + 1) % num_ranks;
  MPI_Sendrecv(&field[n], 1, MpiType<T>::Get(), right, 21, &field[0], 1, MpiType<T>::Get(), left,
               21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&field[1], 1, MpiType<T>::Get(), left, 22, &field[n + 1], 1, MpiType<T>::Get(),
               right, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

template <typename T, typename F>
T Accumulate(const std::vector<T> &v, T init, F f) {
  for (std::size_t i = 1; i + 1 < v.size(); ++i)
    init = f(init, v[i]);
  return init;
}

class Operator {
public:
  virtual ~Operator() = default;
  virtual double Apply(std::vector<double> &u) = 0;
};

class Diffusion : public Operator {
public:
  double Apply(std::vector<double> &u) override {
    double change = 0.0;
    for (int p = 0; p < kPasses; ++p) {
      for (int i = 1; i <= kCells; ++i) {
        double v = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        change += (v - u[i]) * (v - u[i]);
        u[i] = v;
      }
    }
    return change;
  }
};

class Decay : public Operator {
public:
  explicit Decay(double rate) : rate_(rate) {}
  double Apply(std::vector<double> &u) override {
    double s = 0.0;
    for (int p = 0; p < kPasses / 2; ++p) {
      for (int i = 1; i <= kCells; ++i) {
        u[i] = u[i] / (1.0 + rate_ * u[i] * u[i]);
        s += u[i];
      }
    }
    return s * 1e-9;
  }

private:
  double rate_;
};

// A stiff reaction integrated with many small substeps per cell.
class StiffReaction : public Operator {
public:
  explicit StiffReaction(long substeps) : substeps_(substeps) {}
  double Apply(std::vector<double> &u) override {
    double y = u[1];
    for (long k = 0; k < substeps_; ++k) // ROOT CAUSE: the middle rank's extra reaction operator
      y += 1e-4 * (u[1 + (k & (kCells - 1))] - y * y);
    return y * 1e-9;
  }

private:
  long substeps_;
};

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "cxx_virtual", 50);
  const int culprit = Culprit(&opt, num_ranks / 2, num_ranks);

  std::vector<double> u(kCells + 2);
  for (int i = 0; i < kCells + 2; ++i)
    u[i] = 0.01 * ((7 * i + my_rank) % 29);
  std::vector<std::unique_ptr<Operator>> ops;
  ops.push_back(std::make_unique<Diffusion>());
  ops.push_back(std::make_unique<Decay>(0.05));
  // About two thirds of the regular operators' work.
  if (opt.inject && my_rank == culprit)
    ops.push_back(std::make_unique<StiffReaction>(3L * kPasses * kCells / 4));

  double change = 0.0, total = 0.0, t_work = 0.0, t_extra = 0.0;
  for (long it = 0; it < opt.iters; ++it) {
    ExchangeRing(u);
    for (auto &op : ops) {
      const double t0 = CpuSeconds();
      change += op->Apply(u);
      const double dt = CpuSeconds() - t0;
      (dynamic_cast<StiffReaction *>(op.get()) ? t_extra : t_work) += dt;
    }
    double local = Accumulate(u, 0.0, [](double a, double b) { return a + b * b; }) + change;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("cxx_virtual", &opt, culprit, t_work, t_extra, total * 1e-6);
  MPI_Finalize();
  return 0;
}
