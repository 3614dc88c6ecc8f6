; The clean-up at the end of the optimisation pipeline (`scalana-cleanup`)
; drops `vertex` stores nothing can observe after optimisation merged the
; code between them, keeps every store that precedes real code, and narrows
; stores whose high half is already in place to 32 bits.
; RUN: %opt -load-pass-plugin=%plugin -passes=scalana-cleanup -S %s -o - | FileCheck %s

%struct.ScalanaThreadContext = type { i64, i32, i32, [128 x i64] }
@__scalana_ctx = linkonce_odr thread_local global %struct.ScalanaThreadContext zeroinitializer, align 8

declare i32 @MPI_Barrier(i32)
declare void @work(ptr)

; Function entry straight into an MPI call, and back-to-back MPI calls (a
; lifetime marker emits no code): the earlier store is overwritten at once.
; CHECK-LABEL: define void @adjacent(
; CHECK-NEXT: %ctx = call
; CHECK-NEXT: store volatile i64 101, ptr %ctx
; CHECK-NEXT: call i32 @MPI_Barrier
; CHECK-NEXT: call void @llvm.lifetime.start
; CHECK-NEXT: store volatile i64 102, ptr %ctx
; CHECK-NEXT: call i32 @MPI_Barrier
; CHECK-NEXT: store volatile i64 100, ptr %ctx
; CHECK-NEXT: ret void
define void @adjacent() {
  %ctx = call ptr @llvm.threadlocal.address.p0(ptr @__scalana_ctx)
  store volatile i64 100, ptr %ctx
  store volatile i64 101, ptr %ctx
  %1 = call i32 @MPI_Barrier(i32 0)
  store volatile i64 100, ptr %ctx
  call void @llvm.lifetime.start.p0(i64 8, ptr null)
  store volatile i64 102, ptr %ctx
  %2 = call i32 @MPI_Barrier(i32 0)
  store volatile i64 100, ptr %ctx
  ret void
}

; Across an unconditional branch into a block that starts with a store; a
; store before real code stays; a store of the value already held goes, one
; after a call stays (the callee changed the vertex). The store in `next`
; finds the high half already written by entry's store: low half only.
; CHECK-LABEL: define void @edges(
; CHECK: entry:
; CHECK-NEXT: %ctx = call
; CHECK-NEXT: store volatile i64 200, ptr %ctx
; CHECK-NEXT: store i32 1, ptr %p
; CHECK-NEXT: br label %next
; CHECK: next:
; CHECK-NEXT: store volatile i32 201, ptr %ctx
; CHECK-NEXT: store i32 2, ptr %p
; CHECK-NEXT: br label %again
; CHECK: again:
; CHECK-NEXT: store i32 3, ptr %p
; CHECK-NEXT: call void @work(
; CHECK-NEXT: store volatile i64 201, ptr %ctx
; CHECK-NEXT: ret void
define void @edges(ptr %p) {
entry:
  %ctx = call ptr @llvm.threadlocal.address.p0(ptr @__scalana_ctx)
  store volatile i64 200, ptr %ctx
  store i32 1, ptr %p
  store volatile i64 299, ptr %ctx
  br label %next
next:
  store volatile i64 201, ptr %ctx
  store i32 2, ptr %p
  br label %again
again:
  store volatile i64 201, ptr %ctx
  store i32 3, ptr %p
  call void @work(ptr %p)
  store volatile i64 201, ptr %ctx
  ret void
}

; A store before a conditional branch stays: one successor may not store.
; CHECK-LABEL: define void @cond(
; CHECK: store volatile i64 300, ptr %ctx
; CHECK-NEXT: br i1
define void @cond(i1 %c) {
  %ctx = call ptr @llvm.threadlocal.address.p0(ptr @__scalana_ctx)
  store volatile i64 300, ptr %ctx
  br i1 %c, label %a, label %b
a:
  store volatile i64 301, ptr %ctx
  ret void
b:
  ret void
}

; Narrowing: a store whose high 32 bits (the function hash) are known to be
; in place writes the low half only; at entry, after a call, where paths with
; different high halves join, and for another function's id (inlined code)
; the store stays 64-bit.
; CHECK-LABEL: define void @narrow(
; CHECK: store volatile i64 -9223372032559808512, ptr %ctx
; CHECK: a:
; CHECK-NEXT: store volatile i32 1, ptr %ctx, align 8
; CHECK: b:
; CHECK-NEXT: call void @work(
; CHECK-NEXT: store volatile i64 -9223372032559808510, ptr %ctx
; CHECK: join:
; CHECK-NEXT: store volatile i32 3, ptr %ctx, align 8
; CHECK-NEXT: store i32 3, ptr %p
; CHECK-NEXT: store volatile i64 -9223372028264841211, ptr %ctx
; CHECK-NEXT: store i32 4, ptr %p
; CHECK-NEXT: store volatile i64 -9223372032559808509, ptr %ctx
; CHECK: mixed:
; CHECK-NEXT: store volatile i64 -9223372032559808509, ptr %ctx
define void @narrow(i1 %c, ptr %p) {
entry:
  %ctx = call ptr @llvm.threadlocal.address.p0(ptr @__scalana_ctx)
  store volatile i64 -9223372032559808512, ptr %ctx
  store i32 0, ptr %p
  br i1 %c, label %a, label %b
a:
  store volatile i64 -9223372032559808511, ptr %ctx
  store i32 1, ptr %p
  br label %join
b:
  call void @work(ptr %p)
  store volatile i64 -9223372032559808510, ptr %ctx
  store i32 2, ptr %p
  br label %join
join:
  store volatile i64 -9223372032559808509, ptr %ctx
  store i32 3, ptr %p
  store volatile i64 -9223372028264841211, ptr %ctx
  store i32 4, ptr %p
  store volatile i64 -9223372032559808509, ptr %ctx
  store i32 5, ptr %p
  br i1 %c, label %mixed, label %other
other:
  store volatile i64 -9223372028264841211, ptr %ctx
  store i32 6, ptr %p
  br label %mixed
mixed:
  store volatile i64 -9223372032559808509, ptr %ctx
  store i32 7, ptr %p
  ret void
}

declare ptr @llvm.threadlocal.address.p0(ptr)
declare void @llvm.lifetime.start.p0(i64, ptr)
