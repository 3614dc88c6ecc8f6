! The Fortran library of the shared-library tests (libfsolver.so, built with
! scalana-fc -fPIC -shared): as solver.c, a sweep over each rank's block and
! an MPI_Allreduce, with extra sweeps on the last rank marked as the cause.
subroutine fsolver_relax(u, n, steps, inject, residual)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: n, steps, inject
  double precision, intent(inout) :: u(n)
  double precision, intent(out) :: residual
  integer :: rank, nranks, ierr, s, extra
  double precision :: local
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  residual = 0d0
  do s = 1, steps
    call fsweep(u, n, local)
    if (inject /= 0 .and. rank == nranks - 1) then
      do extra = 1, nranks; call fsweep(u, n, local); end do ! ROOT CAUSE: extra sweeps
    end if
    call MPI_Allreduce(local, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
end subroutine fsolver_relax

subroutine fsweep(u, n, change)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: u(n)
  double precision, intent(out) :: change
  integer :: i
  double precision :: v
  change = 0d0
  do i = 2, n - 1
    v = 0.5d0 * (u(i - 1) + u(i + 1))
    change = change + (v - u(i)) * (v - u(i))
    u(i) = v
  end do
end subroutine fsweep
