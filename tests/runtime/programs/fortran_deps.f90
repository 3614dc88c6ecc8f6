! Fortran bindings (mpif.h): the wrappers must see these calls although
! Open MPI's Fortran layer calls PMPI_* directly. Needs at least 2 ranks.
program fortran_deps
  implicit none
  include 'mpif.h'
  integer :: ierr, r, n, nxt, prv, i, idx, sub
  integer :: sbuf(8), rbuf(8 * 64), reqs(64), st(MPI_STATUS_SIZE)
  integer :: halo(4), sts(MPI_STATUS_SIZE, 4)
  integer :: hs(2), hr(2)
  double precision :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  nxt = mod(r + 1, n)
  prv = mod(r - 1 + n, n)
  sbuf = r
  call MPI_Send(sbuf, 8, MPI_INTEGER, nxt, 11, MPI_COMM_WORLD, ierr)
  call MPI_Recv(rbuf, 8, MPI_INTEGER, prv, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (r == 0) then
    do i = 1, n - 1
      call MPI_Irecv(rbuf(8 * i - 7), 8, MPI_INTEGER, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &
                     reqs(i), ierr)
    end do
    do i = 1, n - 1
      call MPI_Waitany(n - 1, reqs, idx, st, ierr)
    end do
  else
    call MPI_Isend(sbuf, 8, MPI_INTEGER, 0, 22, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  end if
  ! Two small Isends in a row: Open MPI completes both eagerly and gives them
  ! the same Fortran handle; both must still be recorded with their tags.
  hs = r
  call MPI_Irecv(hr(1), 1, MPI_INTEGER, prv, 31, MPI_COMM_WORLD, halo(1), ierr)
  call MPI_Irecv(hr(2), 1, MPI_INTEGER, nxt, 32, MPI_COMM_WORLD, halo(2), ierr)
  call MPI_Isend(hs(1), 1, MPI_INTEGER, nxt, 31, MPI_COMM_WORLD, halo(3), ierr)
  call MPI_Isend(hs(2), 1, MPI_INTEGER, prv, 32, MPI_COMM_WORLD, halo(4), ierr)
  call MPI_Waitall(4, halo, sts, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(r, 2), r, sub, ierr)
  x = r
  call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, sub, ierr)
  call MPI_Comm_free(sub, ierr)
  call MPI_Finalize(ierr)
end program
