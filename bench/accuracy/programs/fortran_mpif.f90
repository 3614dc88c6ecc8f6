! Fortran with include 'mpif.h': explicit advection-diffusion on a ring of
! ranks, one segment per rank (weak scaling: the segment is fixed), split
! into subroutines as such codes are. Every step trades ghost values with
! MPI_Sendrecv, advances the segment, and sums a norm with MPI_Allreduce.
!
! --inject: rank 0 runs an extra limiter pass every step; its ring
! neighbours wait in MPI_Sendrecv, everyone in MPI_Allreduce.
!
! usage: fortran_mpif [--inject|-i] [--iters N]
module transport
  implicit none
  integer, parameter :: npts = 4096, passes = 1300
contains
  subroutine exchange(u, left, right)
    include 'mpif.h'
    integer, intent(in) :: left, right
    double precision, intent(inout) :: u(0:npts + 1)
    integer :: ierr, status(MPI_STATUS_SIZE)
    call MPI_Sendrecv(u(npts), 1, MPI_DOUBLE_PRECISION, right, 61, &
                      u(0), 1, MPI_DOUBLE_PRECISION, left, 61, MPI_COMM_WORLD, status, ierr)
    call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, left, 62, &
                      u(npts + 1), 1, MPI_DOUBLE_PRECISION, right, 62, MPI_COMM_WORLD, status, ierr)
  end subroutine exchange

  ! Upwind advection plus diffusion, several passes per exchange (the
  ! ghosts stay as received, block-Jacobi style).
  subroutine advance(u, unew)
    double precision, intent(inout) :: u(0:npts + 1), unew(npts)
    integer :: p, i
    do p = 1, passes
      do i = 1, npts
        unew(i) = u(i) - 0.3d0 * (u(i) - u(i - 1)) + 0.1d0 * (u(i - 1) - 2d0 * u(i) + u(i + 1)) &
                  / (1d0 + u(i) * u(i))
      end do
      u(1:npts) = unew
    end do
  end subroutine advance

  ! A slope-limiter pass: a scalar recurrence over the segment, COUNT steps.
  subroutine limiter_fixup(u, count, acc)
    double precision, intent(in) :: u(0:npts + 1)
    integer, intent(in) :: count
    double precision, intent(inout) :: acc
    integer :: k
    do k = 1, count ! ROOT CAUSE: rank 0's extra limiter pass
      acc = acc * 0.999999d0 + u(iand(k, npts - 1) + 1)
    end do
  end subroutine limiter_fixup

  double precision function local_norm(u)
    double precision, intent(in) :: u(0:npts + 1)
    local_norm = sum(u(1:npts) * u(1:npts))
  end function local_norm
end module transport

program fortran_mpif
  use transport
  implicit none
  include 'mpif.h'
  integer :: ierr, my_rank, num_ranks, left, right, iters, it, extra, culprit
  logical :: inject
  double precision, allocatable :: u(:), unew(:)
  double precision :: norm, total, acc, t0, t1, t2, t_work, t_extra, in(2), hi(2), lo(2), check
  integer :: i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, my_rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, num_ranks, ierr)
  call parse_options('fortran_mpif', 60, inject, iters)
  culprit = 0
  left = mod(my_rank - 1 + num_ranks, num_ranks)
  right = mod(my_rank + 1, num_ranks)
  allocate (u(0:npts + 1), unew(npts))
  do i = 0, npts + 1
    u(i) = 0.01d0 * mod(3 * i + my_rank, 23)
  end do
  ! About two thirds of the regular work.
  extra = 0
  if (inject .and. my_rank == culprit) extra = passes * npts / 4
  acc = 0d0
  total = 0d0
  t_work = 0d0
  t_extra = 0d0

  do it = 1, iters
    call exchange(u, left, right)
    call cpu_time(t0)
    call advance(u, unew)
    call cpu_time(t1)
    if (extra > 0) call limiter_fixup(u, extra, acc)
    call cpu_time(t2)
    t_work = t_work + (t1 - t0)
    t_extra = t_extra + (t2 - t1)
    norm = local_norm(u)
    call MPI_Allreduce(norm, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do

  in = [t_work, t_extra]
  call MPI_Reduce(in, hi, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(in, lo, 2, MPI_DOUBLE_PRECISION, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  check = total + acc * 1d-9
  if (my_rank == 0) write (*, '(a,i0,a,i0,a,i0,a,f6.3,a,f6.3,a,f6.3,a,es13.6)') &
    'accuracy fortran_mpif np=', num_ranks, ' inject=', merge(1, 0, inject), ' culprit=', culprit, &
    ' work_cpu_min=', lo(1), ' work_cpu_max=', hi(1), ' extra_cpu_max=', hi(2), ' check=', check
  deallocate (u, unew)
  call MPI_Finalize(ierr)

contains

  include 'options.inc'
end program fortran_mpif
