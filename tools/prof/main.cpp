// `scalana prof [options] -- PROGRAM ARGS`: runs PROGRAM under the profiler.
// Placed after the MPI launcher (mpirun -np 8 scalana prof -o run8 -- ./app),
// so every rank runs this first: it validates the SCALANA_* options (from the
// command line and the environment) before anything starts, prepares the run
// directory, preloads libscalana-rt.so and execs the program.
#include "../self_path.h"
#include "structure_note.h"

#include "config.h"
#include "run_dir_claim.h"
#include "run_dir_files.h"
#include "scalana/echo.h"
#include "scalana/find_program.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using scalana::config::Option;
using scalana::config::Type;
namespace rundir = scalana::rundir;

std::string Echo(const std::string &v) { return scalana::EchoValue(v); }

// MSG has its values echoed already (Echo): what is left is escaped too, so
// nothing in it can forge a line.
[[noreturn]] void Fail(const std::string &msg, int code = 2) {
  std::fprintf(stderr, "scalana prof: %s\n", scalana::EscapeControls(msg).c_str());
  std::exit(code);
}

bool IsFile(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The runtime library next to this executable: build tree (build*/bin and
// build*/lib) or an installation (bin and lib, or a multiarch lib dir).
std::string FindRuntime() {
  std::string dir = scalana::ExecutableDir();
  for (const char *rel : {"/../lib/", "/../lib64/", "/../lib/x86_64-linux-gnu/"}) {
    std::string candidate = dir + rel + "libscalana-rt.so";
    if (IsFile(candidate)) {
      char real[PATH_MAX];
      return realpath(candidate.c_str(), real) ? real : candidate;
    }
  }
  Fail("cannot find libscalana-rt.so in " + Echo(dir) +
           "/../lib: the installation is incomplete; "
           "rebuild or reinstall ScalAna",
       127);
}

std::string Absolute(const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd))
    return path;
  return std::string(cwd) + "/" + path;
}

// Every rank of the job runs this at nearly the same time. One launcher of
// the job prepares the directory: the one that creates
// `.scalana-job.claim.<job>` (O_EXCL decides). It claims the directory for
// the job (run_dir_claim.h): creates `.scalana-job` exclusively, or takes
// over that of a job that has ended, or is refused (a job that still runs,
// FORCE or not; the profile of an ended job, unless FORCE). The others wait
// until the job file names their job and says it is ready, so no rank
// starts (and writes a snapshot) before the old files are gone; or, when
// the preparer failed and dropped its claim, find the same answer
// themselves. The refusal comes here, before the program starts: the
// runtime never stops a program.
void PrepareRunDir(const std::string &dir, bool force) {
  for (size_t pos = 1; pos != std::string::npos; pos = dir.find('/', pos + 1))
    mkdir(dir.substr(0, pos).c_str(), 0777);
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    Fail("cannot create the run directory " + Echo(dir) + ": " + std::strerror(errno));
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    Fail(Echo(dir) + " exists and is not a directory: choose another --output");
  // Found now, not when the program ends and its profile cannot be written.
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    Fail("cannot write to the run directory " + Echo(dir) + ": " + std::strerror(errno) +
         ": choose another --output");
  std::string job = scalana::config::JobIdFromEnv();
  std::string safe_job = job;
  for (char &c : safe_job)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';
  std::string claim_name = rundir::kPrepareClaimPrefix + safe_job, claim = dir + "/" + claim_name;
  for (int waited_ms = 0;; waited_ms += 10) {
    rundir::JobRecord r = rundir::ReadJobRecord(dir);
    if (r.job == rundir::JobToken(job) && r.ready)
      return; // prepared by a launcher of this job
    int fd = open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      rundir::Claim c = rundir::ClaimJobFile(dir, job, force, claim_name, 60);
      unlink(claim.c_str());
      if (c.kind == rundir::Claim::kRefused)
        Fail(c.message);
      // The job file's lock goes with this process into the program (kept
      // across exec, out of its way): the job holds the directory as long
      // as this rank runs.
      if (c.kind == rundir::Claim::kOwned)
        rundir::MoveHigh(c.fd, false);
      return;
    }
    if (errno != EEXIST)
      Fail("cannot write to the run directory " + Echo(dir) + ": " + std::strerror(errno) +
           ": choose another --output");
    if (waited_ms >= 60000)
      Fail("another rank of this job did not finish preparing " + Echo(dir) + " within 60 s; " +
           "if no run is using it, remove " + Echo(claim) + " and try again");
    usleep(10000);
  }
}

std::string HelpFor(const Option &o) {
  std::string def = *o.default_value ? o.default_value : "scalana-<program>-np<ranks>";
  return std::string(o.help) + " [env " + o.env + ", default " + def +
         (o.type == Type::Choice || o.type == Type::Uint || o.type == Type::Bool
              ? std::string(", accepted ") + scalana::config::Describe(o)
              : std::string()) +
         "]";
}

} // namespace

int main(int argc, char **argv) {
  // Split at "--": options before, the program and its arguments after.
  int split = argc;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      split = i;
      break;
    }
  std::vector<std::string> program;
  for (int i = split + 1; i < argc; ++i)
    program.push_back(argv[i]);

  CLI::App app{"Run a program under the ScalAna profiler:\n  mpirun -np N scalana prof [options] "
               "-- PROGRAM [ARGS...]\nEvery option is also a SCALANA_* "
               "environment variable; the command line wins.",
               "scalana prof"};
  std::map<std::string, std::string> given; // env name -> value from the command line
  // Bool options: CLI11 only says whether one was given (its own reading
  // would take "2", "1e23" or "yes" for true); the value is read from the
  // command line below and validated like the environment form.
  std::map<std::string, std::string> flag_text;
  std::map<std::string, CLI::Option *> flag_options;
  for (const Option &o : scalana::config::Options()) {
    std::string names = std::string("--") + o.long_option;
    if (*o.short_option)
      names = std::string("-") + o.short_option + "," + names;
    if (o.type == Type::Bool) {
      flag_options[o.env] = app.add_flag(names, flag_text[o.env], HelpFor(o));
    } else {
      app.add_option_function<std::string>(
             names, [&given, env = o.env](const std::string &v) { given[env] = v; }, HelpFor(o))
          ->type_name(o.type == Type::Uint     ? "N"
                      : o.type == Type::Choice ? "MODE"
                      : o.type == Type::List   ? "LIST"
                                               : "DIR");
    }
  }
  if (split == argc)
    app.prefix_command(true); // no "--": the first non-option starts the program
  try {
    app.parse(split, argv);
  } catch (const CLI::CallForHelp &) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError &e) {
    // CLI11 quotes the arguments it refuses: echoed escaped and cut.
    Fail(scalana::EchoInMessage(e.what(), scalana::ArgValues(split, argv)) +
         " (see `scalana prof --help`)");
  }
  // What CLI11 read as options: up to "--", or up to the program. A Bool
  // option's value is the text after "=" as given (CLI11 reads "--force="
  // and "--force={}" as the bare flag), else "1" for the bare flag.
  int options_end = split == argc ? argc - int(app.remaining().size()) : split;
  for (const Option &o : scalana::config::Options()) {
    auto flag = flag_options.find(o.env);
    if (flag == flag_options.end() || flag->second->count() == 0)
      continue;
    given[o.env] = "1";
    for (int i = 1; i < options_end; ++i)
      for (std::string name :
           {std::string("--") + o.long_option, std::string("-") + o.short_option})
        if (name.size() > 1 && argv[i] == name)
          given[o.env] = "1"; // the last occurrence counts, as for CLI11
        else if (name.size() > 1 &&
                 std::strncmp(argv[i], (name + "=").c_str(), name.size() + 1) == 0)
          given[o.env] = argv[i] + name.size() + 1;
  }
  if (split == argc)
    for (const std::string &r : app.remaining())
      program.push_back(r);
  if (program.empty())
    Fail("no program to run: usage: mpirun -np N scalana prof [options] -- PROGRAM [ARGS...]");

  // Validate everything before the program starts: values already in the
  // environment too, since the runtime would read them.
  std::vector<std::string> errors;
  for (const Option &o : scalana::config::Options()) {
    auto it = given.find(o.env);
    const char *env = std::getenv(o.env);
    std::string value = it != given.end() ? it->second : env ? env : "";
    if (it == given.end() && !env)
      continue;
    std::string err = scalana::config::Validate(o, value);
    if (!err.empty())
      errors.push_back(err + (it == given.end() ? " (from the environment)" : ""));
    else
      setenv(o.env, value.c_str(), 1);
  }
  if (!errors.empty()) {
    for (const std::string &e : errors)
      std::fprintf(stderr, "scalana prof: %s\n", scalana::EscapeControls(e).c_str());
    std::fprintf(stderr, "scalana prof: the program was not started\n");
    return 2;
  }

  std::string out = scalana::config::Value(scalana::config::Id::Output);
  if (out.empty())
    out = scalana::config::DefaultOutput(program[0]);
  out = Absolute(out);
  setenv("SCALANA_OUTPUT", out.c_str(), 1);
  PrepareRunDir(out, scalana::config::BoolValue(scalana::config::Id::Force));

  // Said once for the job (by the first rank, or the only process), never
  // stopping it: a run detect will refuse is better known now than after.
  if (scalana::config::WorldRankFromEnv() <= 0) {
    int missing = 0; // execvp says why, below
    std::string note = scalana::StructureNote(scalana::FindProgram(program[0], &missing));
    if (!note.empty())
      std::fprintf(stderr, "scalana prof: warning: %s\n", scalana::EscapeControls(note).c_str());
  }

  std::string lib = FindRuntime();
  const char *preload = std::getenv("LD_PRELOAD");
  std::string value = preload && *preload ? lib + ":" + preload : lib;
  setenv("LD_PRELOAD", value.c_str(), 1);

  std::vector<char *> args;
  for (std::string &a : program)
    args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  Fail("cannot run " + Echo(program[0]) + ": " + std::strerror(errno), 127);
}
