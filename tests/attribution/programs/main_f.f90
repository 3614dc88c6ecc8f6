! Links libfsolver.so. usage: main_f [--inject]
program main_f
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 80000
  double precision :: u(n), residual
  integer :: ierr, i, inject, rank
  character(len=32) :: arg
  call MPI_Init(ierr)
  inject = 0
  do i = 1, command_argument_count()
    call get_command_argument(i, arg)
    if (arg == '--inject') inject = 1
  end do
  do i = 1, n
    u(i) = mod(i, 17) * 0.1d0
  end do
  call fsolver_relax(u, n, 400, inject, residual)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) print *, 'residual', residual
  call MPI_Finalize(ierr)
end program main_f
