! OpenMP in Fortran: flang lowers the constructs through LLVM's
! OpenMPIRBuilder to the calls clang makes (__kmpc_fork_call, task_alloc,
! for_static_init, dispatch_init), with the outlined bodies `..omp_par`.
subroutine relax(a, n)
  use mpi
  implicit none
  integer :: n, i, ierr
  double precision :: a(n)
  !$omp parallel
  !$omp do
  do i = 1, n
    a(i) = a(i) + 1
  end do
  !$omp end do
  !$omp do schedule(dynamic, 4)
  do i = 1, n
    call scale(a, i)
  end do
  !$omp end do
  !$omp single
  !$omp task
  call scale(a, n)
  !$omp end task
  !$omp end single
  !$omp end parallel
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
end subroutine

subroutine scale(a, n)
  integer :: n, i
  double precision :: a(*)
  do i = 1, n
    a(i) = a(i) * 0.5
  end do
end subroutine

program hybrid
  use mpi
  implicit none
  integer :: ierr, it, i
  double precision :: a(64)
  a = 0
  call MPI_Init(ierr)
  do it = 1, 3
    call relax(a, 64)
  end do
  !$omp parallel do
  do i = 1, 64
    a(i) = a(i) - 1
  end do
  !$omp end parallel do
  call MPI_Finalize(ierr)
end program
