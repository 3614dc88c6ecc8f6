// Leaf functions (local PSG = the function vertex alone) get no stores: they
// are always contracted into their caller's computation. A call in this
// module to such a leaf only sets `vertex` around the call (no push); a leaf
// whose address is taken, a weak leaf (another module may replace it) and a
// non-leaf keep the full protocol. Adjacent boundary stores merge: a call's
// restore directly followed by the block's exit store is dropped.
// RUN: %scalana_cc -O0 -fno-discard-value-names -S -emit-llvm %s -o %t.ll
// RUN: FileCheck %s < %t.ll
// RUN: %scalana_cc -O2 %s -o %t
// RUN: %mpirun -np 2 %t | FileCheck %s --check-prefix=OUT
#include <mpi.h>
#include <stdio.h>

double square(double x) { return x * x; }

static double half(double x) {
  if (x > 1e300)
    return 0;
  return x / 2;
}

static double twice(double x) { return 2 * x; }

__attribute__((weak)) double weak_leaf(double x) { return x + 1; }

double loop_sum(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += a[i];
  return s;
}

void step(double *x) {
  for (int i = 0; i < 3; ++i)
    *x = square(*x);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double (*fp)(double) = twice;
  double a[4] = {1, 2, 3, 4};
  double v = square(3) + half(4) + weak_leaf(0) + fp(1) + loop_sum(a, 4);
  step(&v);
  MPI_Finalize();
  printf("v %.0f\n", v);
  return 0;
}

// No stores in the leaves.
// CHECK-LABEL: define {{.*}}double @square(
// CHECK-NOT: store volatile
// CHECK: ret double
// The weak leaf's definition is not used by this module's call sites, and
// another module pushes its call site: no stores either.
// CHECK-LABEL: define {{.*}}double @weak_leaf(
// CHECK-NOT: store volatile
// CHECK: ret double
// A loop: not a leaf. Its call to square() inside the loop sets the vertex
// only.
// CHECK-LABEL: define {{.*}}void @step(
// CHECK-NOT: ptr %scalana.depth
// CHECK: = load double, ptr
// CHECK-NEXT: store volatile i64 {{-?[0-9]+}}, ptr %scalana.vertex
// CHECK-NEXT: call double @square(
// CHECK-NEXT: store volatile i64 {{-?[0-9]+}}, ptr %scalana.vertex
// CHECK-NOT: ptr %scalana.depth
// CHECK: ret void
// CHECK-LABEL: define {{.*}}i32 @main(
// CHECK: store volatile i64 [[MAIN:-?[0-9]+]], ptr %scalana.vertex
// CHECK: call void @llvm.memcpy
// CHECK-NEXT: store volatile i64 {{-?[0-9]+}}, ptr %scalana.vertex
// CHECK-NEXT: call double @square(
// The restore of main's vertex is overwritten at once by the next call's
// store: dropped.
// CHECK-NEXT: store volatile i64 {{-?[0-9]+}}, ptr %scalana.vertex
// CHECK-NEXT: call double @half(
// CHECK-NEXT: store volatile i64 [[MAIN]], ptr %scalana.vertex
// Weak: another module's non-leaf variant may be the one linked: push.
// CHECK: store volatile i64 [[C3:-?[0-9]+]], ptr %scalana.slot
// CHECK-NEXT: store volatile i32 {{%.*}}, ptr %scalana.depth
// CHECK-NEXT: store volatile i64 [[C3]], ptr %scalana.vertex
// CHECK-NEXT: call double @weak_leaf(
// CHECK-NEXT: store volatile i32 %scalana.d, ptr %scalana.depth
// Indirect: push.
// CHECK: store volatile i64 {{-?[0-9]+}}, ptr %scalana.slot
// CHECK: call double %
// CHECK-NEXT: store volatile i32 %scalana.d, ptr %scalana.depth
// Non-leaf: push.
// CHECK: store volatile i64 {{-?[0-9]+}}, ptr %scalana.slot
// CHECK: call double @loop_sum(
// CHECK-NEXT: store volatile i32 %scalana.d, ptr %scalana.depth
// CHECK: ret i32
// A leaf whose address is taken may be entered with no call site on the
// stack (a callback, a function pointer): it keeps its entry store.
// CHECK-LABEL: define internal double @twice(
// CHECK: store volatile i64 {{-?[0-9]+}}, ptr %scalana.vertex
// CHECK: ret double
// CHECK-LABEL: define internal double @half(
// CHECK-NOT: store volatile
// CHECK: ret double
// OUT: v 110075314176
