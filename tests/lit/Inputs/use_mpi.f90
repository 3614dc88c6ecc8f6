program use_mpi_module
  use mpi
  implicit none
  integer :: ierr, rank, s
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Allreduce(rank, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print *, 'sum', s
  call MPI_Finalize(ierr)
end program use_mpi_module
