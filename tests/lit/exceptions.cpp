// C++ exceptions: calls that may throw are invokes. An invoke is a call
// vertex like a call, and an MPI call inside `try` stays in its loop; the
// MPI calls after the loop are children of main, not of the loop or of a
// branch on the exception paths. The program throws, catches and
// finishes.
// RUN: rm -f %t.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cxx -O0 -c %s -o %t.o
// RUN: FileCheck %s < %t.json
// RUN: %scalana_cxx -O2 %s -o %t
// RUN: %mpirun -np 2 %t | FileCheck %s --check-prefix=OUT
#include <mpi.h>
#include <cstdio>
#include <stdexcept>
#include <string>

struct Guard {
  std::string name;
  ~Guard() { std::fflush(stdout); }
};

int step(int i) {
  if (i == 2)
    throw std::runtime_error("step 2");
  return i;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, caught = 0, total = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 4; ++i) {
    Guard g{"iteration"};
    try {
      total += step(i);
      MPI_Barrier(MPI_COMM_WORLD);
    } catch (const std::exception &) {
      ++caught;
    }
  }
  int sum = 0;
  MPI_Allreduce(&total, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("caught %d sum %d\n", caught, sum);
  MPI_Finalize();
  return 0;
}

// CHECK: {"key":"_Z4stepi","name":"step",
// CHECK: {"key":"main","name":"main",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2,3,9,10]}
// CHECK-NEXT: {"id":1,"kind":"mpi","parent":0,"line":28,{{.*}}"op":"MPI_Init"
// CHECK-NEXT: {"id":2,"kind":"mpi","parent":0,"line":30,{{.*}}"op":"MPI_Comm_rank"
// CHECK-NEXT: {"id":3,"kind":"loop","parent":0,"line":31,{{.*}}"children":[4,5,6,8]}
// CHECK-NEXT: {"id":4,"kind":"call","parent":3,"line":34,"col":16,"callee":"_Z4stepi"}
// CHECK-NEXT: {"id":5,"kind":"mpi","parent":3,"line":35,{{.*}}"op":"MPI_Barrier","class":"collective"}
// CHECK: {"id":9,"kind":"mpi","parent":0,"line":41,{{.*}}"op":"MPI_Allreduce"
// CHECK-NEXT: {"id":10,"kind":"mpi","parent":0,"line":44,{{.*}}"op":"MPI_Finalize"
// OUT: caught 1 sum 8
