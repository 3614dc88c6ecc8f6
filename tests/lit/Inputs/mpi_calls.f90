! MPI routines called through mpif.h with buffers of several types, as NAS
! codes do, and one user procedure called so too.
program mpi_calls
  implicit none
  include 'mpif.h'
  integer :: ierr, ibuf(4)
  double precision :: a(8), s
  call mpi_init(ierr)
  call mpi_bcast(a, 8, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call mpi_bcast(ibuf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call mpi_bcast(s, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(a, a, 8, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(ibuf, ibuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call pmpi_barrier(MPI_COMM_WORLD, ierr)
  call pmpi_barrier(ibuf, ierr)
  call helper(a)
  call helper(ibuf)
  call mpi_finalize(ierr)
end program mpi_calls
