! The `mpi` module for flang programs (`use mpi`). flang-new cannot read the
! gfortran-built mpi.mod that Open MPI ships, so scalana-fc puts this one,
! built with flang, first on the module search path. It declares exactly what
! mpif.h declares.
module mpi
  include 'mpif.h'
end module mpi
