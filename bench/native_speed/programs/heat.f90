! Fortran with include 'mpif.h': explicit time stepping of a 2-D heat
! equation on a block of columns per rank (weak scaling), split into the
! subroutines a Fortran code usually has (halo exchange, stencil update,
! source term, norm) working on whole arrays, plus an MPI_Allreduce of the
! norm every step.
!
! usage: heat [steps]
! Prints on rank 0 one line "native_speed wall=<s> cpu=<s> check=<value>":
! wall is the main phase's MPI_Wtime span (max over ranks), cpu the process
! CPU time of that phase summed over ranks, check a checksum that must not
! depend on how the program was built.
module heat_kernels
  implicit none
contains
  ! Copies the boundary columns to the neighbours' halo columns.
  subroutine exchange(u, nx, ny, left, right)
    include 'mpif.h'
    integer, intent(in) :: nx, ny, left, right
    double precision, intent(inout) :: u(0:nx + 1, 0:ny + 1)
    integer :: ierr, status(MPI_STATUS_SIZE)
    call MPI_Sendrecv(u(0, ny), nx + 2, MPI_DOUBLE_PRECISION, right, 0, &
                      u(0, 0), nx + 2, MPI_DOUBLE_PRECISION, left, 0, &
                      MPI_COMM_WORLD, status, ierr)
    call MPI_Sendrecv(u(0, 1), nx + 2, MPI_DOUBLE_PRECISION, left, 1, &
                      u(0, ny + 1), nx + 2, MPI_DOUBLE_PRECISION, right, 1, &
                      MPI_COMM_WORLD, status, ierr)
  end subroutine exchange

  subroutine diffuse(u, unew, nx, ny, k)
    integer, intent(in) :: nx, ny
    double precision, intent(in) :: u(0:nx + 1, 0:ny + 1), k
    double precision, intent(out) :: unew(0:nx + 1, 0:ny + 1)
    integer :: i, j
    do j = 1, ny
      do i = 1, nx
        unew(i, j) = u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) &
                                    - 4d0 * u(i, j))
      end do
    end do
  end subroutine diffuse

  subroutine add_source(unew, src, nx, ny, dt)
    integer, intent(in) :: nx, ny
    double precision, intent(inout) :: unew(0:nx + 1, 0:ny + 1)
    double precision, intent(in) :: src(nx, ny), dt
    integer :: j
    do j = 1, ny
      unew(1:nx, j) = unew(1:nx, j) + dt * src(:, j)
    end do
  end subroutine add_source

  double precision function sum_squares(u, nx, ny)
    integer, intent(in) :: nx, ny
    double precision, intent(in) :: u(0:nx + 1, 0:ny + 1)
    integer :: i, j
    sum_squares = 0d0
    do j = 1, ny
      do i = 1, nx
        sum_squares = sum_squares + u(i, j) * u(i, j)
      end do
    end do
  end function sum_squares

  ! Process CPU time in seconds, from the same clock the C and C++ programs
  ! read (cpu_time's clock is the runtime's choice).
  double precision function cpu_now()
    use iso_c_binding, only: c_int, c_long
    interface
      integer(c_int) function clock_gettime(clock_id, ts) bind(c, name='clock_gettime')
        import :: c_int, c_long
        integer(c_int), value :: clock_id
        integer(c_long), intent(out) :: ts(2)
      end function clock_gettime
    end interface
    integer(c_int), parameter :: clock_process_cputime_id = 2  ! Linux <time.h>
    integer(c_long) :: ts(2)  ! struct timespec: tv_sec, tv_nsec
    if (clock_gettime(clock_process_cputime_id, ts) /= 0) ts = 0
    cpu_now = dble(ts(1)) + 1d-9 * dble(ts(2))
  end function cpu_now
end module heat_kernels

program heat
  use heat_kernels
  implicit none
  include 'mpif.h'
  integer, parameter :: nx = 400, ny = 400
  integer :: ierr, rank, nranks, left, right, steps, step, i, j
  character(len=32) :: word
  double precision, allocatable :: u(:, :), unew(:, :), src(:, :)
  double precision :: t0, c0, wall, cpu, wall_max, cpu_sum, local, total, check

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  steps = 6000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, word)
    read (word, *) steps
  end if
  ! Open boundaries at the ends of the rank line: MPI_PROC_NULL keeps the
  ! halo columns at zero there.
  left = rank - 1
  right = rank + 1
  if (rank == 0) left = MPI_PROC_NULL
  if (rank == nranks - 1) right = MPI_PROC_NULL

  allocate (u(0:nx + 1, 0:ny + 1), unew(0:nx + 1, 0:ny + 1), src(nx, ny))
  u = 0d0
  unew = 0d0
  do j = 1, ny
    do i = 1, nx
      src(i, j) = dble(mod(i * 13 + j * 7 + rank * 3, 19)) / 19d0
    end do
  end do

  check = 0d0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  c0 = cpu_now()
  do step = 1, steps
    call exchange(u, nx, ny, left, right)
    call diffuse(u, unew, nx, ny, 0.2d0)
    call add_source(unew, src, nx, ny, 1d-3)
    local = sum_squares(unew, nx, ny)
    call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    check = check + total
    u(1:nx, 1:ny) = unew(1:nx, 1:ny)
  end do
  wall = MPI_Wtime() - t0
  cpu = cpu_now() - c0
  call MPI_Reduce(wall, wall_max, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(cpu, cpu_sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a, f0.6, a, f0.6, a, es19.12)') 'native_speed wall=', wall_max, ' cpu=', cpu_sum, &
      ' check=', check
  end if
  deallocate (u, unew, src)
  call MPI_Finalize(ierr)
end program heat
