! The mpi_f08 bindings: their symbols (mpi_send_f08_, ...) are separate.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: r, n
  integer :: sbuf(4), rbuf(4)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  sbuf = r
  call MPI_Send(sbuf, 4, MPI_INTEGER, mod(r + 1, n), 12, MPI_COMM_WORLD)
  call MPI_Recv(rbuf, 4, MPI_INTEGER, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
end program
