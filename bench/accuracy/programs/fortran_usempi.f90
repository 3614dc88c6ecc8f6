! Fortran with `use mpi`: short-range particle interactions on a ring of
! ranks, a fixed number of particles per rank (weak scaling). Every step a
! rank receives its neighbours' edge particles (MPI_Irecv/MPI_Isend/
! MPI_Waitall), sums for each particle the forces of the particles within a
! window of neighbours, moves them, gathers every rank's energy with
! MPI_Allgather and agrees on the largest speed with MPI_Allreduce.
!
! --inject: on the last rank the particles are denser, so each sees a wider
! window of neighbours and the force loop runs longer; its ring neighbours
! wait in MPI_Waitall, everyone in MPI_Allgather.
!
! usage: fortran_usempi [--inject|-i] [--iters N]
module particles
  use mpi
  implicit none
  integer, parameter :: nparts = 1024, maxwidth = 16, substeps = 210
contains
  ! Ghost particles: positions (1-maxwidth:0) from the left neighbour and
  ! (nparts+1:nparts+maxwidth) from the right one.
  subroutine exchange_edges(x, left, right)
    double precision, intent(inout) :: x(1 - maxwidth:nparts + maxwidth)
    integer, intent(in) :: left, right
    integer :: requests(4), ierr
    call MPI_Irecv(x(1 - maxwidth), maxwidth, MPI_DOUBLE_PRECISION, left, 71, &
                   MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Irecv(x(nparts + 1), maxwidth, MPI_DOUBLE_PRECISION, right, 72, &
                   MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Isend(x(nparts - maxwidth + 1), maxwidth, MPI_DOUBLE_PRECISION, right, 71, &
                   MPI_COMM_WORLD, requests(3), ierr)
    call MPI_Isend(x(1), maxwidth, MPI_DOUBLE_PRECISION, left, 72, &
                   MPI_COMM_WORLD, requests(4), ierr)
    call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE, ierr)
  end subroutine exchange_edges

  ! Soft pair forces from the WIDTH particles on each side.
  subroutine compute_forces(x, f, width)
    double precision, intent(in) :: x(1 - maxwidth:nparts + maxwidth)
    double precision, intent(out) :: f(nparts)
    integer, intent(in) :: width
    integer :: i, j
    double precision :: r, s
    do i = 1, nparts
      s = 0d0
      do j = i - width, i + width ! ROOT CAUSE: a wider neighbour window on the last rank
        r = x(j) - x(i)
        s = s + r / (1d-2 + r * r)
      end do
      f(i) = s
    end do
  end subroutine compute_forces

  subroutine move(x, v, f, energy, vmax)
    double precision, intent(inout) :: x(1 - maxwidth:nparts + maxwidth), v(nparts)
    double precision, intent(in) :: f(nparts)
    double precision, intent(out) :: energy, vmax
    integer :: i
    do i = 1, nparts
      v(i) = 0.99d0 * v(i) + 1d-5 * f(i) - 1d-4 * (x(i) - dble(i))
      x(i) = x(i) + 1d-2 * v(i)
    end do
    energy = 0.5d0 * sum(v * v)
    vmax = maxval(abs(v))
  end subroutine move
end module particles

program fortran_usempi
  use mpi
  use particles
  implicit none
  integer :: ierr, my_rank, num_ranks, left, right, iters, it, s, width, culprit, i
  logical :: inject
  double precision, allocatable :: x(:), v(:), f(:), energies(:)
  double precision :: energy, vmax, vmax_all, t0, t1, t_work, t_extra, in(2), hi(2), lo(2), check

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, my_rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, num_ranks, ierr)
  call parse_options('fortran_usempi', 50, inject, iters)
  culprit = num_ranks - 1
  left = mod(my_rank - 1 + num_ranks, num_ranks)
  right = mod(my_rank + 1, num_ranks)
  allocate (x(1 - maxwidth:nparts + maxwidth), v(nparts), f(nparts), energies(num_ranks))
  do i = 1 - maxwidth, nparts + maxwidth
    x(i) = dble(i) + 0.1d0 * mod(i * 7 + my_rank, 5)
  end do
  v = 0d0
  ! 14 neighbours on each side instead of 8: the force loop is most of the
  ! work, so the last rank does about two thirds more.
  width = 8
  if (inject .and. my_rank == culprit) width = 14
  t_work = 0d0
  t_extra = 0d0
  check = 0d0

  do it = 1, iters
    call exchange_edges(x, left, right)
    do s = 1, substeps
      call cpu_time(t0)
      call compute_forces(x, f, width)
      call move(x, v, f, energy, vmax)
      call cpu_time(t1)
      ! The regular window's share of the force loop counts as work.
      t_work = t_work + (t1 - t0) * (2 * 8 + 1) / dble(2 * width + 1)
      t_extra = t_extra + (t1 - t0) * (1d0 - (2 * 8 + 1) / dble(2 * width + 1))
    end do
    call MPI_Allgather(energy, 1, MPI_DOUBLE_PRECISION, energies, 1, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(vmax, vmax_all, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    check = check + sum(energies) + vmax_all
  end do

  in = [t_work, t_extra]
  call MPI_Reduce(in, hi, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(in, lo, 2, MPI_DOUBLE_PRECISION, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (my_rank == 0) write (*, '(a,i0,a,i0,a,i0,a,f6.3,a,f6.3,a,f6.3,a,es13.6)') &
    'accuracy fortran_usempi np=', num_ranks, ' inject=', merge(1, 0, inject), &
    ' culprit=', culprit, ' work_cpu_min=', lo(1), ' work_cpu_max=', hi(1), &
    ' extra_cpu_max=', hi(2), ' check=', check
  deallocate (x, v, f, energies)
  call MPI_Finalize(ierr)

contains

  include 'options.inc'
end program fortran_usempi
