// C++ with virtual calls, small non-inlined functions and recursion: a scene
// of shapes behind a base class (virtual area/perimeter/scale), a recursive
// quadtree over points with recursive range queries, and a fib-like
// recursive count. One allreduce of the step's figures per step; weak
// scaling (every rank has the same amount of work).
//
// usage: shapes [steps]
// Prints on rank 0 one line "native_speed wall=<s> cpu=<s> check=<value>":
// wall is the main phase's MPI_Wtime span (max over ranks), cpu the process
// CPU time of that phase summed over ranks, check a checksum that must not
// depend on how the program was built.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

namespace {

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Small helpers kept out of line, as a library's accessors often are: the
// call itself is what is being measured.
__attribute__((noinline)) double Square(double x) { return x * x; }
__attribute__((noinline)) double Hypot(double x, double y) { return std::sqrt(Square(x) + Square(y)); }

struct Shape {
  virtual ~Shape() = default;
  virtual double Area() const = 0;
  virtual double Perimeter() const = 0;
  virtual void Scale(double f) = 0;
};

struct Circle final : Shape {
  double r;
  explicit Circle(double r) : r(r) {}
  double Area() const override { return M_PI * Square(r); }
  double Perimeter() const override { return 2 * M_PI * r; }
  void Scale(double f) override { r *= f; }
};

struct Rect final : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double Area() const override { return w * h; }
  double Perimeter() const override { return 2 * (w + h); }
  void Scale(double f) override { w *= f; h *= f; }
};

struct Triangle final : Shape {
  double ax, ay, bx, by, cx, cy;
  Triangle(double ax, double ay, double bx, double by, double cx, double cy)
      : ax(ax), ay(ay), bx(bx), by(by), cx(cx), cy(cy) {}
  double Area() const override { return 0.5 * std::fabs((bx - ax) * (cy - ay) - (cx - ax) * (by - ay)); }
  double Perimeter() const override {
    return Hypot(bx - ax, by - ay) + Hypot(cx - bx, cy - by) + Hypot(ax - cx, ay - cy);
  }
  void Scale(double f) override { ax *= f; ay *= f; bx *= f; by *= f; cx *= f; cy *= f; }
};

// A shape made of others: Area recurses through virtual calls.
struct Group final : Shape {
  std::vector<std::unique_ptr<Shape>> parts;
  double Area() const override {
    double a = 0;
    for (const auto &p : parts) a += p->Area();
    return a;
  }
  double Perimeter() const override {
    double p = 0;
    for (const auto &s : parts) p += s->Perimeter();
    return p;
  }
  void Scale(double f) override {
    for (auto &p : parts) p->Scale(f);
  }
};

unsigned Next(unsigned &seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}
double Uniform(unsigned &seed) { return (Next(seed) & 0xffff) / 65536.0; }

std::unique_ptr<Shape> MakeShape(unsigned &seed, int depth) {
  switch (Next(seed) % (depth > 0 ? 4 : 3)) {
  case 0: return std::make_unique<Circle>(0.1 + Uniform(seed));
  case 1: return std::make_unique<Rect>(0.1 + Uniform(seed), 0.1 + Uniform(seed));
  case 2:
    return std::make_unique<Triangle>(Uniform(seed), Uniform(seed), Uniform(seed), Uniform(seed),
                                      Uniform(seed), Uniform(seed));
  default: {
    auto g = std::make_unique<Group>();
    for (int k = 0; k < 3; ++k) g->parts.push_back(MakeShape(seed, depth - 1));
    return g;
  }
  }
}

struct Point {
  double x, y;
};

// Region quadtree: a leaf holds up to kLeaf points, a node four children.
class QuadTree {
 public:
  QuadTree(double x0, double y0, double x1, double y1) : x0_(x0), y0_(y0), x1_(x1), y1_(y1) {}
  void Insert(const Point &p, int depth = 0) {
    if (!kids_[0]) {
      if (pts_.size() < kLeaf || depth > 20) {
        pts_.push_back(p);
        return;
      }
      Split(depth);
    }
    Child(p)->Insert(p, depth + 1);
  }
  // Points inside the box, visiting only the nodes that overlap it.
  long Count(double qx0, double qy0, double qx1, double qy1) const {
    if (qx1 < x0_ || qx0 > x1_ || qy1 < y0_ || qy0 > y1_) return 0;
    if (!kids_[0]) {
      long n = 0;
      for (const Point &p : pts_) n += Inside(p, qx0, qy0, qx1, qy1);
      return n;
    }
    long n = 0;
    for (const auto &k : kids_) n += k->Count(qx0, qy0, qx1, qy1);
    return n;
  }

 private:
  static constexpr size_t kLeaf = 8;
  __attribute__((noinline)) static bool Inside(const Point &p, double qx0, double qy0, double qx1,
                                               double qy1) {
    return p.x >= qx0 && p.x <= qx1 && p.y >= qy0 && p.y <= qy1;
  }
  QuadTree *Child(const Point &p) const {
    double mx = 0.5 * (x0_ + x1_), my = 0.5 * (y0_ + y1_);
    return kids_[(p.x >= mx) + 2 * (p.y >= my)].get();
  }
  void Split(int depth) {
    double mx = 0.5 * (x0_ + x1_), my = 0.5 * (y0_ + y1_);
    kids_[0] = std::make_unique<QuadTree>(x0_, y0_, mx, my);
    kids_[1] = std::make_unique<QuadTree>(mx, y0_, x1_, my);
    kids_[2] = std::make_unique<QuadTree>(x0_, my, mx, y1_);
    kids_[3] = std::make_unique<QuadTree>(mx, my, x1_, y1_);
    std::vector<Point> old;
    old.swap(pts_);
    for (const Point &q : old) Child(q)->Insert(q, depth + 1);
  }
  double x0_, y0_, x1_, y1_;
  std::vector<Point> pts_;
  std::unique_ptr<QuadTree> kids_[4];
};

// Fibonacci-like recursion: the number of compositions of n into 1s, 2s and 3s.
__attribute__((noinline)) long Tribonacci(int n) {
  if (n < 3) return n == 0 ? 1 : n;
  return Tribonacci(n - 1) + Tribonacci(n - 2) + Tribonacci(n - 3);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int steps = argc > 1 ? std::atoi(argv[1]) : 900;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  unsigned seed = 12345u + 977u * rank;
  std::vector<std::unique_ptr<Shape>> scene;
  for (int i = 0; i < 20000; ++i) scene.push_back(MakeShape(seed, 2));
  QuadTree tree(0, 0, 1, 1);
  for (int i = 0; i < 50000; ++i) tree.Insert({Uniform(seed), Uniform(seed)});

  double sums[3] = {0, 0, 0}, total[3];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = CpuNow();
  for (int s = 0; s < steps; ++s) {
    double area = 0, perim = 0;
    for (const auto &sh : scene) {
      area += sh->Area();
      perim += sh->Perimeter();
    }
    // Grow and shrink in turn so the figures stay bounded.
    double f = s % 2 ? 1.0 / 1.01 : 1.01;
    for (auto &sh : scene) sh->Scale(f);
    long hits = 0;
    for (int q = 0; q < 150; ++q) {
      double x = Uniform(seed) * 0.9, y = Uniform(seed) * 0.9;
      hits += tree.Count(x, y, x + 0.1, y + 0.1);
    }
    hits += Tribonacci(18 + s % 3);
    double local[3] = {area, perim, static_cast<double>(hits)};
    MPI_Allreduce(local, total, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 3; ++k) sums[k] += total[k];
  }
  double wall = MPI_Wtime() - t0, cpu = CpuNow() - c0, wall_max, cpu_sum;
  MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("native_speed wall=%.6f cpu=%.6f check=%.12e\n", wall_max, cpu_sum,
                sums[0] + sums[1] + sums[2]);
  MPI_Finalize();
  return 0;
}
