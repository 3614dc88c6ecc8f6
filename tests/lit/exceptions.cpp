// C++ exceptions: calls become invokes; the pass instruments them (restore
// on the normal path, depth and vertex reset in the landing pad) and the
// module still verifies; the program throws, catches and finishes.
// RUN: %scalana_cxx -O0 -S -emit-llvm %s -o %t.O0.ll
// RUN: %opt -passes=verify -disable-output %t.O0.ll
// RUN: %scalana_cxx -O2 -S -emit-llvm %s -o %t.O2.ll
// RUN: %opt -passes=verify -disable-output %t.O2.ll
// RUN: FileCheck %s --check-prefix=IR < %t.O0.ll
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

// IR-LABEL: define {{.*}} @main(
// IR: invoke {{.*}} @_Z4stepi(
// IR: landingpad
// IR: catch ptr @_ZTISt9exception
// IR-NEXT: store volatile i32
// IR-NEXT: store volatile i64
// OUT: caught 1 sum 8
