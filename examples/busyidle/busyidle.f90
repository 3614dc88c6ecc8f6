! Busy/idle pattern, after the Zeus-MP study of the ScalAna paper.
!
! Every rank updates its own block of a 1-D field each time step (weak
! scaling: the block size does not change with the rank count), exchanges
! boundary values with its two ring neighbours through MPI_Isend/MPI_Irecv/
! MPI_Waitall, and joins an MPI_Allreduce of the field's norm. With --inject
! the busy ranks (every fourth rank: 0, 4, ...) run an extra compute loop per
! step while the others sit idle in MPI_Waitall and MPI_Allreduce; that loop
! is marked as the root cause in the code.
!
! usage: busyidle [--inject|-i] [--steps N] [--size N] [--factor F]
program busyidle
  implicit none
  include 'mpif.h'
  integer :: ierr, my_rank, num_ranks, left, right, nreq
  integer :: requests(4), statuses(MPI_STATUS_SIZE, 4)
  integer :: steps, n, factor, step, i, arg, nargs
  logical :: inject, busy, bad_usage
  character(len=64) :: word
  double precision, allocatable :: u(:), unew(:)
  double precision :: halo_send(2), halo_recv(2), local_norm, global_norm, acc
  double precision :: t0, t1, t_busy, t_max, t_min

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, my_rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, num_ranks, ierr)

  inject = .false.
  bad_usage = .false.
  steps = 60
  n = 300000
  factor = 5
  nargs = command_argument_count()
  arg = 1
  do while (arg <= nargs)
    call get_command_argument(arg, word)
    select case (trim(word))
    case ('--inject', '-i')
      inject = .true.
    case ('--steps')
      steps = int_arg(arg + 1)
      arg = arg + 1
    case ('--size')
      n = int_arg(arg + 1)
      arg = arg + 1
    case ('--factor')
      factor = int_arg(arg + 1)
      arg = arg + 1
    case default
      bad_usage = .true.
    end select
    arg = arg + 1
  end do
  if (bad_usage .or. steps < 1 .or. n < 1 .or. factor < 1) then
    if (my_rank == 0) print '(a)', 'usage: busyidle [--inject|-i] [--steps N] [--size N] [--factor F]'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if

  busy = inject .and. mod(my_rank, 4) == 0
  left = mod(my_rank - 1 + num_ranks, num_ranks)
  right = mod(my_rank + 1, num_ranks)
  allocate (u(0:n + 1), unew(n))
  do i = 0, n + 1
    u(i) = 1.0d0 + mod(i, 17) * 0.01d0
  end do
  acc = 0.0d0
  t_busy = 0.0d0

  do step = 1, steps
    ! Balanced work: one smoothing sweep over the own block.
    do i = 1, n
      unew(i) = 0.25d0 * (u(i - 1) + 2.0d0 * u(i) + u(i + 1))
    end do
    u(1:n) = unew
    if (busy) then
      call cpu_time(t0)
      ! Extra sweeps on the busy ranks only: (factor - 1) times the work above.
      do i = 1, (factor - 1) * n ! ROOT CAUSE: busy ranks' extra compute loop
        acc = acc * 0.999999d0 + u(mod(i, n) + 1)
      end do
      call cpu_time(t1)
      t_busy = t_busy + (t1 - t0)
    end if

    ! Non-blocking boundary exchange with both ring neighbours.
    halo_send(1) = u(1)
    halo_send(2) = u(n)
    nreq = 0
    if (num_ranks > 1) then
      call MPI_Irecv(halo_recv(1), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, requests(1), ierr)
      call MPI_Irecv(halo_recv(2), 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, requests(2), ierr)
      call MPI_Isend(halo_send(2), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, requests(3), ierr)
      call MPI_Isend(halo_send(1), 1, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, requests(4), ierr)
      nreq = 4
    else
      halo_recv(1) = u(n)
      halo_recv(2) = u(1)
    end if
    call MPI_Waitall(nreq, requests, statuses, ierr)
    u(0) = halo_recv(1)
    u(n + 1) = halo_recv(2)

    local_norm = sum(u(1:n) * u(1:n))
    call MPI_Allreduce(local_norm, global_norm, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do

  ! In-program check of the injected effect, in CPU time.
  call MPI_Reduce(t_busy, t_max, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(t_busy, t_min, 1, MPI_DOUBLE_PRECISION, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (my_rank == 0) print '(a,i0,a,l1,a,f6.3,a,f6.3,a,es12.5)', 'busyidle: np=', num_ranks, &
    ' inject=', inject, ' busy-loop cpu min ', t_min, ' s max ', t_max, ' s norm ', global_norm + acc * 0
  deallocate (u, unew)
  call MPI_Finalize(ierr)

contains

  ! The integer argument at POSITION, or -1 when it is not one (reported by
  ! the caller, after parsing).
  integer function int_arg(position)
    integer, intent(in) :: position
    character(len=64) :: text
    integer :: status
    call get_command_argument(position, text)
    read (text, *, iostat=status) int_arg
    if (status /= 0) int_arg = -1
  end function int_arg
end program busyidle
