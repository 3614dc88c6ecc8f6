// `scalana detect RUN_DIR...`: builds the PPG of each run, finds non-scalable
// and abnormal vertices, backtracks to root causes and writes a report.
#include "../cli_options.h"
#include "detect/detect.h"
#include "ppg/load.h"
#include "report/report.h"
#include "report/report_common.h"
#include "scalana/out_of_memory.h"
#include "scalana/text_escape.h"
#include "shard_mpi.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <unistd.h>

using namespace scalana;

int main(int argc, char **argv) {
  scalana::ExitCleanlyOnUncaughtExceptions("scalana detect");
  CLI::App app{"Find the root causes of scaling loss from runs of one program at several "
               "scales (directories written by 'scalana prof -o DIR')."};
  app.name("scalana detect");
  std::vector<std::string> run_dirs;
  DetectOptions opts;
  LoadOptions load;
  std::string format = "text", output;
  app.add_option("RUN_DIR", run_dirs,
                 "run directories (two or more rank counts; each run once: a directory or run "
                 "id given twice is an error)")
      ->required();
  app.add_option("--abnorm-thd", opts.abnorm_thd,
                 "a vertex is abnormal on a rank whose time exceeds this x the median over ranks")
      ->capture_default_str()
      ->check(cli::Range(1, 1000));
  std::map<std::string, MergeStrategy> merges{{"max", MergeStrategy::Max},
                                              {"mean", MergeStrategy::Mean},
                                              {"median", MergeStrategy::Median},
                                              {"cluster", MergeStrategy::Cluster}};
  app.add_option("--merge", opts.merge, "merging of per-rank values before the scaling fit")
      ->transform(CLI::CheckedTransformer(merges, CLI::ignore_case))
      ->option_text("max|mean|median|cluster (mean)");
  std::map<std::string, ScalingMode> scalings{
      {"strong", ScalingMode::Strong}, {"weak", ScalingMode::Weak}, {"auto", ScalingMode::Auto}};
  app.add_option("--scaling", opts.scaling,
                 "expected slope: strong = -1, weak = 0, auto = whichever of the two the "
                 "computation time per rank is nearer to")
      ->transform(CLI::CheckedTransformer(scalings, CLI::ignore_case))
      ->option_text("strong|weak|auto (auto)");
  app.add_option("--top", opts.top, "how many root causes and non-scalable vertices to report")
      ->capture_default_str()
      ->check(cli::Range(1, 1e6, true));
  app.add_option("--predict", opts.predict,
                 "model every vertex's time (Extra-P's normal form) and rank vertices and root "
                 "causes at this many ranks")
      ->check(cli::Range(1, kMaxWorldSize, true));
  app.add_option("--min-share", opts.min_share,
                 "non-scalable vertices below this share of the total time are ignored")
      ->capture_default_str()
      ->check(cli::Range(0, 1));
  app.add_option("--minor-share", opts.minor_share,
                 "root causes whose fix saves less than this share of the wall time (and "
                 "cost less than it of their rank's CPU time) are listed apart as minor")
      ->capture_default_str()
      ->check(cli::Range(0, 1));
  app.add_option("--min-time", opts.min_time,
                 "seconds below which a vertex's time is noise (default: 2 samples' worth)")
      ->check(cli::Range(0, kMaxSeconds));
  app.add_option("--min-wait", opts.min_wait,
                 "seconds of waiting that make a dependence edge worth following")
      ->capture_default_str()
      ->check(cli::Range(0, kMaxSeconds));
  app.add_option("--comm-layer", opts.comm_layers,
                 "code the program communicates through (a function, source file or path, or "
                 "shared object; glob patterns, repeatable), such as a library that polls "
                 "shared memory: its time is waiting, as an MPI call's, never a computation "
                 "cause")
      ->option_text("PATTERN ...")
      ->allow_extra_args(false);
  app.add_option("--format", format,
                 "report format (dot: the PPG's backtracking paths as Graphviz DOT)")
      ->check(CLI::IsMember({"text", "json", "html", "dot"}))
      ->capture_default_str();
  app.add_option("-o,--output", output, "write the report here instead of stdout");
  app.add_option("--binary", load.binary, "the profiled binary, when it has moved since profiling");
  app.add_option("--max-loop-depth", load.max_loop_depth,
                 "PSG contraction: loops nested deeper fold into their parent")
      ->capture_default_str()
      ->check(cli::Range(0, 1000, true));
  double dot_timeout = kDefaultDotTimeout;
  app.add_option("--dot-timeout", dot_timeout,
                 "seconds the dot program (Graphviz, $SCALANA_DOT) may take to lay out the HTML "
                 "report's PPG picture; then it is killed and the page shows the paths as a table")
      ->capture_default_str()
      ->check(cli::Range(0.1, 86400));
  if (int status = cli::Parse(app, argc, argv, "scalana detect"); status >= 0)
    return status;

  // Under mpirun with several processes, each reads a share of every run
  // and process 0 reports (docs/detect.md section 9).
  std::unique_ptr<MpiShards> shards = MpiShards::Start(&argc, &argv);
  const int me = shards ? shards->rank() : 0;
  try {
    CheckRunDirs(run_dirs); // every process alike: all end here, process 0 says why
  } catch (const Error &e) {
    if (me == 0)
      std::fprintf(stderr, "scalana detect: error: %s\n", cli::Echoed(e.what()).c_str());
    return 1;
  }
  load.shards = shards.get();
  // A failure on one process ends them all; it prints why.
  auto fail = [&](int status) {
    if (shards) {
      std::fflush(stderr);
      shards->Abort(status);
    }
    return status;
  };
  const bool tty = me == 0 && isatty(STDERR_FILENO);
  ProgressFn progress;
  if (tty)
    progress = [](const std::string &msg) {
      std::fprintf(stderr, "\r\033[K%s", EscapeControls(msg).c_str());
    };
  try {
    LoadedRuns loaded = LoadRuns(run_dirs, load, progress);
    if (!loaded.reporter)
      return 0; // process 0 has what this one read
    if (tty)
      std::fprintf(stderr, "\r\033[Kdetecting...");
    DetectResult result = Detect(loaded.psg, loaded.runs, opts);
    if (tty)
      std::fprintf(stderr, "\r\033[K");
    for (const std::string &w : loaded.warnings)
      result.warnings.push_back(w);
    for (const std::string &w : result.warnings)
      std::fprintf(stderr, "scalana detect: warning: %s\n", cli::Echoed(w).c_str());
    std::vector<std::string> report_warnings;
    ReportInput in{loaded.psg, loaded.runs, result, opts, loaded.binary, {}};
    in.dot_timeout = dot_timeout;
    in.warnings = &report_warnings;
    // Relative source paths start at the compilation directory recorded in
    // the PSG (the report tries it first); then beside the binary, then here.
    std::error_code ec;
    std::filesystem::path bin_dir = std::filesystem::absolute(loaded.binary, ec).parent_path();
    if (!bin_dir.empty())
      in.source_dirs.push_back(bin_dir.string());
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (!ec)
      in.source_dirs.push_back(cwd.string());
    std::ofstream file;
    if (!output.empty()) {
      file.open(output);
      if (!file)
        throw Error(output + ": cannot write the report here; check -o");
    }
    std::ostream &out = output.empty() ? std::cout : file;
    if (format == "json")
      WriteJsonReport(in, out);
    else if (format == "html")
      WriteHtmlReport(in, out);
    else if (format == "dot")
      report_common::WritePpgDot(in, out);
    else
      WriteTextReport(in, out);
    out.flush();
    if (!out)
      throw Error((output.empty() ? "stdout" : output) + ": write failed");
    for (const std::string &w : report_warnings)
      std::fprintf(stderr, "scalana detect: warning: %s\n", cli::Echoed(w).c_str());
  } catch (const Error &e) {
    // Messages quote file content (ids, names, JSON parser excerpts).
    if (tty)
      std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "scalana detect: error: %s\n", cli::Echoed(e.what()).c_str());
    return fail(1);
  } catch (const std::bad_alloc &) {
    if (tty)
      std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "scalana detect: error: out of memory; the runs are too large for this "
                         "machine's memory (or its ulimit -v)\n");
    return fail(1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "scalana detect: internal error: %s\n", cli::Echoed(e.what()).c_str());
    return fail(2);
  } catch (...) {
    std::fprintf(stderr, "scalana detect: internal error: unknown exception\n");
    return fail(2);
  }
  return 0;
}
