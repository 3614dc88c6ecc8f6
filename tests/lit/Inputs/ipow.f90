! Integer and real powers: flang lowers `i**k` to a call of its generated
! helper __mlir_math_ipowi_i32 (defined in this module, with a loop and
! branches but no source) and `x**k` to the runtime's _FortranAFPow8i.
program ipow
  use mpi
  implicit none
  integer :: ierr, rank, i, k, s
  real(8) :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  s = 0
  x = 1.5d0
  y = 0
  do i = 1, 100
    k = mod(i, 7)
    s = s + i**k
    y = y + x**k
    call work(s, k)
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) print *, 'sum', s, y
  call MPI_Finalize(ierr)
end program ipow

subroutine work(v, k)
  integer :: v, k, j
  do j = 1, 10
    v = mod(v + j**k, 1000003)
  end do
end subroutine work
