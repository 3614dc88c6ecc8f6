/* A program that blocks every signal (as codes do around sections they
 * protect from their own handlers): the profiler cannot sample there, and
 * must say for how long. Each mode measures on its own clocks the CPU time
 * it spent blocked and prints it ("blocked_cpu S", all threads), so the
 * test compares the profile's figure with the truth, not with a guess:
 *   full     blocked from the start of main (before MPI_Init) to the end
 *            (also prints "process_cpu_at_block S": all CPU time after it
 *            is blocked, that of the threads MPI starts included)
 *   half     blocked for the first of two equal stretches of work
 *   thread   one of two threads blocks; both end before MPI_Finalize
 *   inherit  a thread created while main has the signals blocked: born
 *            with them blocked, it never unblocks (main computes unblocked)
 *   handler  no mask call: the program's SIGUSR1 handler, whose sa_mask
 *            holds every signal, computes (the kernel blocks them meanwhile)
 *   jump     blocked, then siglongjmp back to the unblocked mask sigsetjmp
 *            saved (no mask call unblocks), then unblocked work
 *   handler_jump  the handler of `handler`, leaving by siglongjmp to the
 *            unblocked mask of main, which then computes unblocked
 *   context  blocked, then setcontext back to a context getcontext saved
 *            unblocked, then unblocked work */
#include <mpi.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

enum { N = 150000000 }; /* about 0.15 s of CPU */

static volatile double sink;

static void Work(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) /* @work */
    x += i * 1e-9;
  sink += x;
}

static double Cpu(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double ThreadCpu(void) { return Cpu(CLOCK_THREAD_CPUTIME_ID); }

static double g_thread_blocked; /* written by the thread, read after the join */

static void *BlockingThread(void *arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  double t0 = ThreadCpu();
  Work(N);
  g_thread_blocked = ThreadCpu() - t0;
  return arg;
}

static void *PlainThread(void *arg) {
  Work(N);
  return arg;
}

static void *BornBlockedThread(void *arg) {
  Work(N);
  g_thread_blocked = ThreadCpu(); /* blocked since it was born */
  return arg;
}

static volatile double g_handler_blocked;
static volatile int g_handler_jumps;
static sigjmp_buf g_unblocked;

static void Handler(int sig) {
  (void)sig;
  double t0 = ThreadCpu();
  Work(N);
  g_handler_blocked = ThreadCpu() - t0;
  if (g_handler_jumps)
    siglongjmp(g_unblocked, 1);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "half";
  sigset_t all, old;
  sigfillset(&all);
  double blocked = 0;
  if (!strcmp(mode, "full")) {
    printf("process_cpu_at_block %.6f\n", Cpu(CLOCK_PROCESS_CPUTIME_ID));
    sigprocmask(SIG_BLOCK, &all, &old); /* never unblocked */
  }
  MPI_Init(&argc, &argv);
  if (!strcmp(mode, "full")) {
    Work(2 * N);
  } else if (!strcmp(mode, "half")) {
    pthread_sigmask(SIG_BLOCK, &all, &old);
    double t0 = ThreadCpu();
    Work(N); /* @blocked_work */
    blocked = ThreadCpu() - t0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    Work(N); /* @open_work */
  } else if (!strcmp(mode, "thread")) {
    pthread_t a, b;
    pthread_create(&a, NULL, BlockingThread, NULL);
    pthread_create(&b, NULL, PlainThread, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    blocked = g_thread_blocked;
  } else if (!strcmp(mode, "inherit")) {
    pthread_t a;
    pthread_sigmask(SIG_BLOCK, &all, &old);
    double t0 = ThreadCpu();
    pthread_create(&a, NULL, BornBlockedThread, NULL);
    blocked = ThreadCpu() - t0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    Work(N);
    pthread_join(a, NULL);
    blocked += g_thread_blocked;
  } else if (!strcmp(mode, "handler") || !strcmp(mode, "handler_jump")) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = Handler;
    sigfillset(&act.sa_mask);
    sigaction(SIGUSR1, &act, NULL);
    struct sigaction got;
    sigaction(SIGUSR1, NULL, &got); /* the program's own action, read back */
    printf("handler read back %s\n", got.sa_handler == Handler && !(got.sa_flags & SA_SIGINFO) &&
                                           sigismember(&got.sa_mask, SIGRTMIN + 4) == 1
                                       ? "as set"
                                       : "changed");
    g_handler_jumps = !strcmp(mode, "handler_jump");
    if (sigsetjmp(g_unblocked, 1) == 0)
      raise(SIGUSR1);
    blocked = g_handler_blocked;
    Work(N);
  } else if (!strcmp(mode, "context")) {
    static volatile int switched;
    static volatile double t0, in_context;
    static ucontext_t unblocked;
    getcontext(&unblocked); /* setcontext comes back here, with this mask */
    if (!switched) {
      switched = 1;
      pthread_sigmask(SIG_BLOCK, &all, &old);
      t0 = ThreadCpu();
      Work(N);
      in_context = ThreadCpu() - t0;
      setcontext(&unblocked);
    }
    blocked = in_context;
    Work(N);
  } else if (!strcmp(mode, "jump")) {
    static volatile double t0;
    if (sigsetjmp(g_unblocked, 1) == 0) {
      pthread_sigmask(SIG_BLOCK, &all, &old);
      t0 = ThreadCpu();
      Work(N);
      siglongjmp(g_unblocked, 1);
    }
    blocked = ThreadCpu() - t0;
    Work(N);
  }
  printf("blocked_cpu %.6f\n", blocked);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
