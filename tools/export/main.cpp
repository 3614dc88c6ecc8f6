// `scalana export --format extrap|hatchet|cube|ppg-dot -o OUT RUN_DIR...`:
// the runs in formats other tools read.
#include "../cli_options.h"
#include "detect/detect.h"
#include "ppg/load.h"
#include "report/report.h"
#include "report/report_common.h"
#include "export/export.h"
#include "scalana/out_of_memory.h"
#include "scalana/text_escape.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <new>

using namespace scalana;

int main(int argc, char **argv) {
  scalana::ExitCleanlyOnUncaughtExceptions("scalana export");
  CLI::App app{"Write profiled runs (directories written by 'scalana prof -o DIR') for other "
               "tools: Extra-P models, Hatchet/Thicket call trees, CUBE4 profiles, or the PPG's "
               "backtracking paths as Graphviz DOT."};
  app.name("scalana export");
  std::vector<std::string> run_dirs;
  std::string format, output;
  LoadOptions load;
  app.add_option("RUN_DIR", run_dirs,
                 "run directories (each run once: a directory or run id given twice is an error)")
      ->required();
  app.add_option("--format", format,
                 "extrap: one Extra-P JSON input file; hatchet: a directory with one literal "
                 "JSON call tree per run; cube: a directory with one .cubex per run "
                 "(Extra-P's cube directory layout); ppg-dot: DOT of `scalana detect`'s paths")
      ->required()
      ->check(CLI::IsMember({"extrap", "hatchet", "cube", "ppg-dot"}));
  app.add_option("-o,--output", output, "output file (extrap, ppg-dot) or directory")->required();
  app.add_option("--binary", load.binary, "the profiled binary, when it has moved since profiling");
  app.add_option("--max-loop-depth", load.max_loop_depth,
                 "PSG contraction: loops nested deeper fold into their parent")
      ->capture_default_str()
      ->check(cli::Range(0, 1000, true));
  if (int status = cli::Parse(app, argc, argv, "scalana export"); status >= 0)
    return status;
  try {
    LoadedRuns loaded = LoadRuns(run_dirs, load);
    for (const std::string &w : loaded.warnings)
      std::fprintf(stderr, "scalana export: warning: %s\n", cli::Echoed(w).c_str());
    if (format == "ppg-dot") {
      DetectOptions opts;
      DetectResult result = Detect(loaded.psg, loaded.runs, opts);
      ReportInput in{loaded.psg, loaded.runs, result, opts, loaded.binary, {}};
      std::ofstream f(output);
      if (!f)
        throw Error(output + ": cannot write here; check -o");
      report_common::WritePpgDot(in, f);
      f.flush();
      if (!f)
        throw Error(output + ": write failed");
      std::printf("%s\n", EscapeControls(output).c_str());
      return 0;
    }
    ExportInput in{loaded.psg, loaded.runs, loaded.binary};
    for (const std::string &path : Export(in, format, output))
      std::printf("%s\n", EscapeControls(path).c_str());
  } catch (const Error &e) {
    std::fprintf(stderr, "scalana export: error: %s\n", cli::Echoed(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "scalana export: error: out of memory\n");
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "scalana export: internal error: %s\n", cli::Echoed(e.what()).c_str());
    return 2;
  }
  return 0;
}
