// `scalana prof [options] -- PROGRAM ARGS`: runs PROGRAM under the profiler.
// Placed after the MPI launcher (mpirun -np 8 scalana prof -o run8 -- ./app),
// so every rank runs this first: it validates the SCALANA_* options (from the
// command line and the environment) before anything starts, prepares the run
// directory, preloads libscalana-rt.so and execs the program.
#include "../self_path.h"

#include "config.h"

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
#include <dirent.h>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using scalana::config::Option;
using scalana::config::Type;

[[noreturn]] void Fail(const std::string &msg, int code = 2) {
  std::fprintf(stderr, "scalana prof: %s\n", msg.c_str());
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
  Fail("cannot find libscalana-rt.so in " + dir +
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

// The files a run leaves (docs/formats.md sections 3 to 5): profile.scalana,
// profile.json.gz, rank-<R>.json.gz, snapshots-<L>.scs, and the temporaries of either
// (NAME.tmp.PID, profile.scalana.partial) that a writer killed before its
// rename leaves behind.
bool IsProfileFile(const std::string &n) {
  if (n == "profile.json.gz" || n == "profile.scalana")
    return true;
  // A node's snapshot container, snapshots-<L>.scs.
  const std::string scs = "snapshots-", scs_suffix = ".scs";
  if (n.size() > scs.size() + scs_suffix.size() && n.compare(0, scs.size(), scs) == 0 &&
      n.compare(n.size() - scs_suffix.size(), scs_suffix.size(), scs_suffix) == 0)
    return n.find_first_not_of("0123456789", scs.size()) == n.size() - scs_suffix.size();
  const std::string prefix = "rank-", suffix = ".json.gz";
  if (n.size() <= prefix.size() + suffix.size() || n.compare(0, prefix.size(), prefix) != 0 ||
      n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  return n.find_first_not_of("0123456789", prefix.size()) == n.size() - suffix.size();
}

// Temporaries of killed writers, and the markers of ranks that could not
// write (rank-<R>.unwritten.<REASON>): left by an earlier run, never data.
bool IsTemporary(const std::string &n) {
  if (n == "profile.scalana.partial")
    return true;
  size_t at = n.find(".json.gz.tmp.");
  if (at != std::string::npos && IsProfileFile(n.substr(0, at + 8)))
    return true;
  at = n.find(".unwritten.");
  return at != std::string::npos && IsProfileFile(n.substr(0, at) + ".json.gz");
}

std::vector<std::string> Entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

bool HasProfileFiles(const std::string &dir) {
  for (const std::string &n : Entries(dir))
    if (IsProfileFile(n))
      return true;
  return false;
}

// The directory's job marker, and the prefix of a launcher's claim to
// prepare the directory (PrepareRunDir).
const std::string kMarkerName = ".scalana-job", kClaimPrefix = kMarkerName + ".claim.";

// Everything an earlier run left: its profile, its rank files, the
// temporaries of writers killed mid-write and the preparation claims of
// other jobs (OWN_CLAIM, a file name, is kept). PROFILES false: all but
// the profile and rank files. Why claims: a launcher that claims the
// directory and finds another run's profile drops its claim and fails, but
// mpirun may kill it in between, when another rank of its job failed first.
void RemoveProfileFiles(const std::string &dir, bool profiles, const std::string &own_claim) {
  for (const std::string &n : Entries(dir))
    if ((profiles && IsProfileFile(n)) || IsTemporary(n) ||
        (n.compare(0, kClaimPrefix.size(), kClaimPrefix) == 0 && n != own_claim))
      unlink((dir + "/" + n).c_str());
}

std::string ReadMarker(const std::string &marker) {
  std::string recorded;
  std::ifstream(marker) >> recorded;
  return recorded;
}

// Every rank of the job runs this at nearly the same time. The directory
// records its job in `.scalana-job` (written by rename, so readers never see
// half a file); once it names this job the directory is ready. Until then,
// exactly one launcher of the job prepares it: the one that creates
// `.scalana-job.claim.<job>` (O_EXCL decides). It refuses another run's
// profile unless forced, removes it when forced (with what killed runs and
// launchers left), writes the marker and drops the claim; the others wait
// for the marker, so no rank of the job starts (and writes a snapshot)
// before the old files are gone. Profile files of
// another job mean another run's results: refuse unless forced.
void PrepareRunDir(const std::string &dir, bool force) {
  for (size_t pos = 1; pos != std::string::npos; pos = dir.find('/', pos + 1))
    mkdir(dir.substr(0, pos).c_str(), 0777);
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    Fail("cannot create the run directory " + dir + ": " + std::strerror(errno));
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    Fail(dir + " exists and is not a directory: choose another --output");
  // Found now, not when the program ends and its profile cannot be written.
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    Fail("cannot write to the run directory " + dir + ": " + std::strerror(errno) +
         ": choose another --output");
  std::string job = scalana::config::JobIdFromEnv();
  std::string safe_job = job;
  for (char &c : safe_job)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';
  std::string marker = dir + "/" + kMarkerName;
  std::string claim_name = kClaimPrefix + safe_job, claim = dir + "/" + claim_name;
  const std::string other_run =
      dir + " holds the profile of another run: choose another --output, or pass --force "
            "(SCALANA_FORCE=1) to overwrite it";
  for (int waited_ms = 0;; waited_ms += 10) {
    if (ReadMarker(marker) == job)
      return; // prepared by a launcher of this job
    int fd = open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      if (!force && HasProfileFiles(dir)) {
        unlink(claim.c_str());
        Fail(other_run);
      }
      RemoveProfileFiles(dir, force, claim_name);
      std::string tmp = marker + ".tmp." + std::to_string(getpid());
      bool ok = bool(std::ofstream(tmp) << job << "\n");
      if (!ok || std::rename(tmp.c_str(), marker.c_str()) != 0) {
        std::string why = std::strerror(errno);
        unlink(tmp.c_str());
        unlink(claim.c_str());
        Fail("cannot write to the run directory " + dir + ": " + why + ": choose another --output");
      }
      unlink(claim.c_str());
      return;
    }
    if (errno != EEXIST)
      Fail("cannot write to the run directory " + dir + ": " + std::strerror(errno) +
           ": choose another --output");
    // Another launcher of this job is preparing. Its refusal would be ours:
    // say so now (the marker is read again first, since the files seen may
    // already be this job's).
    if (!force && HasProfileFiles(dir) && ReadMarker(marker) != job)
      Fail(other_run);
    if (waited_ms >= 60000)
      Fail("another rank of this job did not finish preparing " + dir + " within 60 s; if no " +
           "run is using it, remove " + claim + " and try again");
    usleep(10000);
  }
}

std::string HelpFor(const Option &o) {
  std::string def = *o.default_value ? o.default_value : "scalana-<program>-np<ranks>";
  return std::string(o.help) + " [env " + o.env + ", default " + def +
         (o.type == Type::Choice || o.type == Type::Uint
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
  std::map<std::string, bool> flags;
  for (const Option &o : scalana::config::Options()) {
    std::string names = std::string("--") + o.long_option;
    if (*o.short_option)
      names = std::string("-") + o.short_option + "," + names;
    if (o.type == Type::Bool) {
      app.add_flag_callback(
          names, [&given, env = o.env] { given[env] = "1"; }, HelpFor(o));
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
    Fail(std::string(e.what()) + " (see `scalana prof --help`)");
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
      std::fprintf(stderr, "scalana prof: %s\n", e.c_str());
    std::fprintf(stderr, "scalana prof: the program was not started\n");
    return 2;
  }

  std::string out = scalana::config::Value(scalana::config::Id::Output);
  if (out.empty())
    out = scalana::config::DefaultOutput(program[0]);
  out = Absolute(out);
  setenv("SCALANA_OUTPUT", out.c_str(), 1);
  PrepareRunDir(out, scalana::config::BoolValue(scalana::config::Id::Force));

  std::string lib = FindRuntime();
  const char *preload = std::getenv("LD_PRELOAD");
  std::string value = preload && *preload ? lib + ":" + preload : lib;
  setenv("LD_PRELOAD", value.c_str(), 1);

  std::vector<char *> args;
  for (std::string &a : program)
    args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  Fail("cannot run " + program[0] + ": " + std::strerror(errno), 127);
}
