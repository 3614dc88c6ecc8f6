// `scalana SUBCOMMAND ...`: git-style front end. Each subcommand is its own
// executable `scalana-SUBCOMMAND` beside this one, so the stages stay separate
// programs with separate dependencies (the profiler launcher must start fast
// and link nothing of the analyzer).
#include "../self_path.h"
#include "scalana/echo.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

struct Subcommand {
  const char *name;
  const char *help;
};

constexpr Subcommand kSubcommands[] = {
    {"psg", "print the Program Structure Graph of a binary built with scalana-cc/-cxx/-fc"},
    {"prof", "run a program under the profiler: mpirun -np N scalana prof -o DIR -- ./app"},
    {"show", "print the per-vertex, per-rank data of a run directory"},
    {"detect", "find the root causes of scaling loss from runs at several scales"},
    {"export", "write runs for Extra-P, Hatchet/Thicket or CUBE (and the PPG as DOT)"},
};

void PrintUsage(FILE *out) {
  std::fprintf(out, "usage: scalana <command> [options]\n\ncommands:\n");
  for (const auto &s : kSubcommands)
    std::fprintf(out, "  %-8s %s\n", s.name, s.help);
  std::fprintf(out, "\n'scalana <command> --help' describes each command.\n"
                    "Compile with scalana-cc, scalana-cxx or scalana-fc first.\n");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("scalana %s\n", SCALANA_VERSION);
    return 0;
  }
  for (const auto &s : kSubcommands) {
    if (std::strcmp(argv[1], s.name) != 0)
      continue;
    std::string exe = scalana::ExecutableDir() + "/scalana-" + s.name;
    argv[1] = const_cast<char *>(exe.c_str());
    execv(exe.c_str(), argv + 1);
    std::fprintf(stderr, "scalana: cannot run %s: %s\n", scalana::EchoValue(exe).c_str(),
                 std::strerror(errno));
    return 127;
  }
  std::fprintf(stderr, "scalana: unknown command '%s'\n\n", scalana::EchoValue(argv[1]).c_str());
  PrintUsage(stderr);
  return 2;
}
