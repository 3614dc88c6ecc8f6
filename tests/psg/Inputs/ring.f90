! `scalana psg` on a Fortran program: flang's main calls the program unit
! _QQmain, whose vertices are shown as main's; `work` is a contained procedure.
program ring
  use mpi
  integer :: ierr, rank, i, s
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  s = 0
  do i = 1, 10
    call work(i, s)
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Finalize(ierr)
contains
  subroutine work(n, acc)
    integer :: n, acc, j
    do j = 1, n
      acc = acc + j
    end do
  end subroutine
end program
