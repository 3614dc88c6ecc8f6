// Instrumentation: the stores of include/scalana/context.h. A loop with no
// structural children costs no store per iteration: at -O0 (nothing merged
// or hoisted) `sum` has exactly three volatile stores: function entry, loop
// entry and loop exit. A user call pushes its call-site id and restores the
// depth; an MPI call sets the vertex and restores the parent (a restore
// that the next call's store overwrites at once is dropped). The program
// runs unchanged without the runtime.
// RUN: %scalana_cc -O0 -fno-discard-value-names -S -emit-llvm %s -o %t.ll
// RUN: FileCheck %s --check-prefix=IR < %t.ll
// RUN: %scalana_cc -O2 %s -o %t
// RUN: %llvm_nm -D %t | FileCheck %s --check-prefix=EXPORT
// RUN: %mpirun -np 2 %t | FileCheck %s --check-prefix=OUT
#include <mpi.h>
#include <stdio.h>

double sum(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += a[i];
  return s;
}

int main(int argc, char **argv) {
  double a[100];
  for (int i = 0; i < 100; ++i)
    a[i] = i;
  MPI_Init(&argc, &argv);
  double local = sum(a, 100), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("global %.0f\n", global);
  MPI_Finalize();
  return 0;
}

// IR: @__scalana_ctx = linkonce_odr thread_local global %struct.ScalanaThreadContext zeroinitializer, comdat, align 8
// IR: @__scalana_psg_record = private constant {{.*}} section "scalana_psg", align 1
// IR: @llvm.used = appending global {{.*}}@__scalana_psg_record
// IR-LABEL: define {{.*}}double @sum(
// IR-COUNT-3: store volatile i64
// IR-NOT: store volatile
// IR: ret double
// IR-LABEL: define {{.*}}i32 @main(
// IR: store volatile i64 [[MAIN:-?[0-9]+]], ptr %scalana.vertex
// IR: %scalana.d = load volatile i32, ptr %scalana.depth
// IR: store volatile i64 [[SITE:-?[0-9]+]], ptr %scalana.slot
// IR-NEXT: store volatile i32 {{%.*}}, ptr %scalana.depth
// IR-NEXT: store volatile i64 [[SITE]], ptr %scalana.vertex
// IR-NEXT: call double @sum(
// IR-NEXT: store volatile i32 %scalana.d, ptr %scalana.depth
// IR-NEXT: store volatile i64 [[MAIN]], ptr %scalana.vertex
// IR: store volatile i64 [[MPI:-?[0-9]+]], ptr %scalana.vertex
// IR-NEXT: call i32 @MPI_Allreduce(
// Back-to-back MPI calls: the restore of main's vertex between them would be
// overwritten at once, so it is left out.
// IR-NEXT: store volatile i64 [[RANK:-?[0-9]+]], ptr %scalana.vertex
// IR-NEXT: call i32 @MPI_Comm_rank(
// IR-NEXT: store volatile i64 [[MAIN]], ptr %scalana.vertex
// EXPORT: __scalana_ctx
// OUT: global 9900
