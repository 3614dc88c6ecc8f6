#include "reader_child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

// Set by sanitizer runtimes (the fuzz target): their death callback must not
// run in the child, which would report the parent's input as the crash.
extern "C" void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

namespace scalana {

pid_t ForkReaderChild() {
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGPIPE, SIGALRM})
      ::signal(sig, SIG_DFL);
    if (__sanitizer_set_death_callback)
      __sanitizer_set_death_callback(nullptr);
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return pid;
}

std::string DescribeChildStatus(int status) {
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

llvm::symbolize::LLVMSymbolizer::Options ReaderSymbolizerOptions() {
  llvm::symbolize::LLVMSymbolizer::Options o;
  o.PrintFunctions = llvm::symbolize::FunctionNameKind::LinkageName;
  o.UseSymbolTable = true;
  o.Demangle = false;
  o.RelativeAddresses = false;
  return o;
}

} // namespace scalana
