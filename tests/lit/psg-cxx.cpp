// Local PSGs of C++ code: a class method, a template instantiated twice, a
// lambda that calls MPI, a virtual call (indirect). Standard-library code is
// not user code. With the deprecated MPI C++ bindings visible (no
// OMPI_SKIP_MPICXX), their MPI:: functions get no PSG and a call through
// them is recorded as the C operation they wrap.
// RUN: rm -f %t.json %t.bind.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cxx -O0 -c %s -o %t.o
// RUN: FileCheck %s < %t.json
// RUN: env SCALANA_PSG_DUMP=%t.bind.json %clangxx -fpass-plugin=%plugin -gline-tables-only -I%mpi_include -DWITH_BINDINGS -O0 -c %s -o %t.bind.o
// RUN: FileCheck %s --check-prefix=BIND < %t.bind.json
#include <mpi.h>
#include <vector>

struct Solver {
  std::vector<double> u;
  virtual ~Solver() = default;
  virtual void relax(int sweeps);
  double norm() const;
};

void Solver::relax(int sweeps) {
  for (int s = 0; s < sweeps; ++s)
    for (double &x : u)
      x *= 0.5;
}

double Solver::norm() const {
  double local = 0, global = 0;
  for (double x : u)
    local += x * x;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

template <typename T> T reduce_max(T v) {
  T out = v;
  MPI_Allreduce(&v, &out, 1, sizeof(T) == 4 ? MPI_INT : MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double run(Solver &solver, int steps) {
  auto barrier = [](int step) {
    if (step % 10 == 0)
      MPI_Barrier(MPI_COMM_WORLD);
  };
  double r = 0;
  for (int i = 0; i < steps; ++i) {
    solver.relax(2);
    barrier(i);
    r += solver.norm() + reduce_max(i) + reduce_max(r);
  }
#ifdef WITH_BINDINGS
  MPI::COMM_WORLD.Barrier();
#endif
  return r;
}

// CHECK: "language":"c++"
// CHECK-NOT: "name":"std::
// CHECK: {"key":"_ZN6Solver5relaxEi","name":"Solver::relax",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":22,"end_line":24,"depth":1,"children":[2]}
// CHECK-NEXT: {"id":2,"kind":"loop","parent":1,"line":23,"end_line":24,"depth":2}]}
// CHECK-NEXT: {"key":"_ZNK6Solver4normEv","name":"Solver::norm",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":29,"end_line":30,"depth":1}
// CHECK-NEXT: {"id":2,"kind":"mpi","parent":0,"line":31,"col":3,"op":"MPI_Allreduce","class":"collective"}]}
// CHECK-NEXT: {"key":"_Z10reduce_maxIdET_S0_","name":"reduce_max<double>","hash":"0x{{[0-9a-f]+}}","linkage":"linkonce"
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"mpi","parent":0,"line":37,"col":3,"op":"MPI_Allreduce","class":"collective"}]}
// CHECK-NEXT: {"key":"_Z10reduce_maxIiET_S0_","name":"reduce_max<int>",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"mpi","parent":0,"line":37,"col":3,"op":"MPI_Allreduce","class":"collective"}]}
// CHECK-NEXT: {"key":"_Z3runR6Solveri","name":"run",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":47,"end_line":51,"depth":1,"children":[2,3,4,5,6]}
// CHECK-NEXT: {"id":2,"kind":"call","parent":1,"line":48,"col":12,"indirect":true,"candidates":["_ZN6Solver5relaxEi"],"sig":"void (ptr, i32)","slot":2}
// CHECK-NEXT: {"id":3,"kind":"call","parent":1,"line":49,"col":5,"callee":"{{.*}}psg-cxx.cpp:_ZZ3runR6SolveriENK3$_0clEi"}
// CHECK-NEXT: {"id":4,"kind":"call","parent":1,"line":50,"col":17,"callee":"_ZNK6Solver4normEv"}
// CHECK-NEXT: {"id":5,"kind":"call","parent":1,"line":50,"col":26,"callee":"_Z10reduce_maxIiET_S0_"}
// CHECK-NEXT: {"id":6,"kind":"call","parent":1,"line":50,"col":42,"callee":"_Z10reduce_maxIdET_S0_"}]}
// CHECK-NEXT: {"key":"{{.*}}psg-cxx.cpp:_ZZ3runR6SolveriENK3$_0clEi","name":"run(Solver&, int)::$_0::operator()",{{.*}}"linkage":"internal"
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"branch","parent":0,"line":43,"end_line":44,"children":[2]}
// CHECK-NEXT: {"id":2,"kind":"mpi","parent":1,"arm":0,"line":44,"col":7,"op":"MPI_Barrier","class":"collective"}]}
// CHECK-NOT: MPI::

// BIND-NOT: "name":"MPI::
// BIND: {"key":"_Z3runR6Solveri"
// BIND: "op":"MPI_Barrier","class":"collective"}]}
// BIND-NOT: "name":"MPI::
