! Fortran attribution through the PSG (scalana-fc): a subroutine's loop
! reached from two call sites (3:1 work), and a ring exchange.
subroutine heavy(n)
  implicit none
  integer(8), intent(in) :: n
  integer(8) :: i
  double precision :: s
  common /sinkblk/ s
  ! Accumulates across calls (no reset), so neither call is dead code.
  do i = 1, n
    s = s + sqrt(dble(mod(i, 7_8)) + s * 1.0d-12)
  end do
end subroutine

program callsites
  implicit none
  include 'mpif.h'
  integer :: ierr, r, n, token, got, round
  integer(8) :: work
  double precision :: s
  common /sinkblk/ s
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  s = 0
  work = 60000000_8
  ! Interleaved rounds: interference from other jobs hits both sites alike.
  do round = 1, 10
    call heavy(3 * work / 10)
    call heavy(work / 10)
  end do
  token = r
  call MPI_Sendrecv(token, 1, MPI_INTEGER, mod(r + 1, n), 7, got, 1, MPI_INTEGER, &
                    MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (s < 0) print *, s
  call MPI_Finalize(ierr)
end program
