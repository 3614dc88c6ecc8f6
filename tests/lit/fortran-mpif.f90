! Fortran with `include 'mpif.h'`: mpi_send_ etc. are MPI vertices under
! their C spelling; a subroutine call is a call vertex; then `use mpi`
! through the flang-built module. Both programs link and run under mpirun.
! REQUIRES: flang
! RUN: rm -f %t.json
! RUN: env SCALANA_PSG_DUMP=%t.json %scalana_fc -O0 %s -o %t
! RUN: FileCheck %s < %t.json
! RUN: %mpirun -np 2 %t | FileCheck %s --check-prefix=OUT
! RUN: %scalana_fc %inputs/use_mpi.f90 -o %t.use
! RUN: %mpirun -np 2 %t.use | FileCheck %s --check-prefix=USE
program ring
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, i, val, status(MPI_STATUS_SIZE)
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  val = rank
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call mpi_send(val, 1, MPI_INTEGER, mod(rank + 1, nprocs), 0, MPI_COMM_WORLD, ierr)
    else
      call mpi_recv(val, 1, MPI_INTEGER, rank - 1, 0, MPI_COMM_WORLD, status, ierr)
    end if
    call work(val)
  end do
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  if (rank == 1) print *, 'value', val
  call mpi_finalize(ierr)
end program ring

subroutine work(v)
  integer :: v
  v = v + 1
end subroutine work

! CHECK: "language":"fortran"
! CHECK: {"key":"_QQmain",
! CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2,3,4,9,10]}
! CHECK-NEXT: {"id":1,"kind":"mpi","parent":0,"line":15,"col":{{[0-9]+}},"op":"MPI_Init","class":"other"}
! CHECK-NEXT: {"id":2,"kind":"mpi","parent":0,"line":16,{{.*}}"op":"MPI_Comm_rank","class":"other"}
! CHECK-NEXT: {"id":3,"kind":"mpi","parent":0,"line":17,{{.*}}"op":"MPI_Comm_size","class":"other"}
! CHECK-NEXT: {"id":4,"kind":"loop","parent":0,"line":19,"end_line":{{2[4-6]}},"depth":1,"children":[5,8]}
! CHECK-NEXT: {"id":5,"kind":"branch","parent":4,"line":20,"end_line":23,"children":[6,7]}
! CHECK-NEXT: {"id":6,"kind":"mpi","parent":5,"arm":0,"line":21,{{.*}}"op":"MPI_Send","class":"p2p_blocking"}
! CHECK-NEXT: {"id":7,"kind":"mpi","parent":5,"arm":1,"line":23,{{.*}}"op":"MPI_Recv","class":"p2p_blocking"}
! CHECK-NEXT: {"id":8,"kind":"call","parent":4,"line":25,{{.*}}"callee":"work_"}
! CHECK-NEXT: {"id":9,"kind":"mpi","parent":0,"line":27,{{.*}}"op":"MPI_Barrier","class":"collective"}
! CHECK-NEXT: {"id":10,"kind":"mpi","parent":0,"line":29,{{.*}}"op":"MPI_Finalize","class":"other"}]}
! CHECK: {"key":"work_","name":"work",
! OUT: value 3
! USE: sum 1
