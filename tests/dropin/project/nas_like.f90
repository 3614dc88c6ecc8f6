! A NAS-style Fortran program: mpif.h, no explicit MPI interfaces, and MPI
! routines called with buffers of several types and ranks. flang warns about
! every such call but the first; the wrapper keeps only the last warning,
! about accumulate(), which is not an MPI routine.
program nas_like
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, ibuf(4), status(MPI_STATUS_SIZE)
  double precision :: a(16), b(16), s, t
  logical :: flag
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  a = rank
  s = 1.0d0
  ibuf = rank
  flag = .true.
  call mpi_bcast(a, 16, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call mpi_bcast(s, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call mpi_bcast(ibuf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call mpi_bcast(flag, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  call mpi_reduce(a, b, 16, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call mpi_reduce(s, t, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call mpi_reduce(ibuf, ibuf, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(a, b, 16, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(s, t, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(ibuf, ibuf, 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (nprocs > 1) then
    if (rank == 0) then
      call mpi_send(a, 16, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, ierr)
      call mpi_send(ibuf, 4, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
      call mpi_send(s, 1, MPI_DOUBLE_PRECISION, 1, 2, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call mpi_recv(a, 16, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, status, ierr)
      call mpi_recv(ibuf, 4, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, status, ierr)
      call mpi_recv(s, 1, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, status, ierr)
    end if
  end if
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  call pmpi_barrier(MPI_COMM_WORLD, ierr)
  call accumulate(a, 16)
  call accumulate(ibuf, 4)
  if (rank == 0) print *, 'sum', b(1), t
  call mpi_finalize(ierr)
end program nas_like

subroutine accumulate(x, n)
  integer :: n
  double precision :: x(n)
  x = x + 1
end subroutine accumulate
