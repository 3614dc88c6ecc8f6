// A program that uses the sampling signal's number itself: a handler on
// SIGRTMIN+4 (the timer source's) or, with the argument `trap`, on SIGTRAP
// (the perf source's), installed after the profiler chose it, a POSIX timer
// of its own delivering it every 5 ms of wall time, and signals it sends
// itself: queued (SIGRTMIN+4), or raised and a breakpoint instruction
// (SIGTRAP, which does not queue). Its handler must see exactly its own
// signals, and the profiler must keep sampling. Prints what the handler saw.
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long own_timer, own_queued, foreign;
static timer_t timer;

static void Handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  if (si->si_code == SI_TIMER && si->si_value.sival_int == 42)
    own_timer += 1 + timer_getoverrun(timer); // expiries, delivered or merged
  else if (si->si_code == SI_QUEUE && si->si_value.sival_int == 7)
    ++own_queued;
  else if (sig == SIGTRAP && (si->si_code == SI_TKILL || si->si_code == SI_KERNEL))
    ++own_queued; // raise(), and the breakpoint instruction
  else
    ++foreign;
}

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int trap = argc > 1 && strcmp(argv[1], "trap") == 0;
  int sig = trap ? SIGTRAP : SIGRTMIN + 4;
  struct sigaction sa, back;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = Handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
  sigaction(sig, NULL, &back); // reads back what it set
  int same = (back.sa_flags & SA_SIGINFO) && back.sa_sigaction == Handler;

  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = sig;
  sev.sigev_value.sival_int = 42;
  timer_create(CLOCK_MONOTONIC, &sev, &timer);
  struct itimerspec every = {{0, 5000000}, {0, 5000000}};
  double t0 = Now();
  timer_settime(timer, 0, &every, NULL);
  union sigval v = {.sival_int = 7};
  double x = 0;
  int queued = 0;
  while (Now() - t0 < 1.0) {
    for (int i = 0; i < 200000; ++i) // @spin
      x += i * 1e-9;
    if (queued < 50 && trap) {
      if (queued % 2)
        __builtin_debugtrap(); // int3 on x86-64: SIGTRAP from the kernel
      else
        raise(SIGTRAP);
      ++queued;
    } else if (queued < 50 && sigqueue(getpid(), sig, v) == 0) {
      ++queued;
    }
  }
  struct itimerspec off = {{0, 0}, {0, 0}};
  timer_settime(timer, 0, &off, NULL);
  double wall = Now() - t0;
  timer_delete(timer);
  printf("own_timer %ld queued %ld/%d foreign %ld wall %.3f readback %d (%g)\n", own_timer,
         own_queued, queued, foreign, wall, same, x > 0 ? 0.0 : 1.0);
  MPI_Finalize();
  return 0;
}
