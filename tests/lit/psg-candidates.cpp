// C++ virtual calls and their candidates: the functions in the called slot
// of the module's vtables, of the call's type (overrides and inherited ones,
// once each). A call through a function pointer of the same LLVM type gets
// the functions whose address the module takes, not the methods, which only
// vtables hold. The same candidates at -O0 and -O2 (clang emits other
// destructor calls at -O2). psg-candidates.test runs `scalana psg`.
// RUN: rm -f %t.json %t.O0.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cxx -O2 -c %s -o %t.o
// RUN: FileCheck %s < %t.json
// RUN: env SCALANA_PSG_DUMP=%t.O0.json %scalana_cxx -O0 -c %s -o %t.O0.o
// RUN: grep '"candidates"' %t.json > %t.O2.candidates
// RUN: grep '"candidates"' %t.O0.json > %t.O0.candidates
// RUN: diff %t.O0.candidates %t.O2.candidates
#include <mpi.h>

struct Smoother {
  virtual ~Smoother() = default;
  virtual void relax(int sweeps);
  virtual void restrict_to(int level);
};
struct Jacobi : Smoother {
  void relax(int sweeps) override;
};
struct Chebyshev : Smoother {
  void relax(int sweeps) override;
  void restrict_to(int level) override;
};

void Smoother::relax(int sweeps) { (void)sweeps; }
void Smoother::restrict_to(int level) {
  if (level > 0)
    MPI_Barrier(MPI_COMM_WORLD);
}
void Jacobi::relax(int sweeps) {
  double r = sweeps;
  MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
void Chebyshev::relax(int sweeps) { (void)sweeps; }
void Chebyshev::restrict_to(int level) { (void)level; }

static void log_step(Smoother *s, int level) { (void)s, (void)level; }
static void (*hook)(Smoother *, int) = log_step;

void cycle(Smoother &s, int levels) {
  for (int l = 0; l < levels; ++l) {
    s.relax(2);
    s.restrict_to(l);
    hook(&s, l);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Jacobi j;
  Chebyshev c;
  cycle(j, 3);
  cycle(c, 1);
  MPI_Finalize();
  return 0;
}

// CHECK: "key":"_Z5cycleR8Smootheri"
// CHECK: "line":46,"col":7,"indirect":true,"candidates":["_ZN6Jacobi5relaxEi","_ZN8Smoother5relaxEi","_ZN9Chebyshev5relaxEi"],"sig":"void (ptr, i32)","slot":2}
// CHECK-NEXT: "line":47,"col":7,"indirect":true,"candidates":["_ZN8Smoother11restrict_toEi","_ZN9Chebyshev11restrict_toEi"],"sig":"void (ptr, i32)","slot":3}
// CHECK-NEXT: "line":48,"col":5,"indirect":true,"candidates":["{{[^"]*}}psg-candidates.cpp:_ZL8log_stepP8Smootheri"],"sig":"void (ptr, i32)"}
