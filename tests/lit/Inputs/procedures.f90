! Fortran procedures of every kind: a module procedure, an external
! subroutine with an internal procedure, the main program; small enough for
! flang to inline them at -O2.
module smooth
contains
  subroutine scale(x, n)
    integer :: n, i
    real(8) :: x(n)
    do i = 1, n
      x(i) = 0.5d0 * x(i)
    end do
  end subroutine scale
end module smooth

subroutine step(x, n)
  use smooth
  include 'mpif.h'
  integer :: n, ierr
  real(8) :: x(n), total
  call scale(x, n)
  call shift(x, n)
  total = sum(x)
  call mpi_allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  x(1) = total
contains
  subroutine shift(y, m)
    integer :: m
    real(8) :: y(m)
    y = y + 1.0d0
  end subroutine shift
end subroutine step

program driver
  include 'mpif.h'
  integer :: ierr, it
  real(8) :: x(100)
  call mpi_init(ierr)
  x = 1.0d0
  do it = 1, 5
    call step(x, 100)
  end do
  call mpi_finalize(ierr)
end program driver
