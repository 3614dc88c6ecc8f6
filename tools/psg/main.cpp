// `scalana psg BINARY [LIBRARY...]`: prints the whole-program Program Structure Graph of a
// program built with scalana-cc/-cxx/-fc (docs/psg.md).
#include "../cli_options.h"
#include "binary_structure.h"
#include "psg.h"
#include "scalana/out_of_memory.h"
#include "scalana/text_escape.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <new>

int main(int argc, char **argv) {
  scalana::ExitCleanlyOnUncaughtExceptions("scalana psg");
  CLI::App app{"Print the whole-program Program Structure Graph (PSG) of a binary built with "
               "scalana-cc, scalana-cxx or scalana-fc; of one built without them (with -g), the "
               "structure recovered from its line tables and machine code (no branch vertices "
               "or OpenMP constructs), said on stderr.",
               "scalana psg"};
  std::string binary, format = "text", output;
  std::vector<std::string> libraries;
  scalana::PsgOptions opts;
  bool no_contract = false;
  app.add_option("BINARY", binary, "the program")->required();
  app.add_option("LIBRARY", libraries,
                 "shared objects built with the wrappers that the program links or loads "
                 "with dlopen: their functions join the graph");
  app.add_option("--max-loop-depth", opts.max_loop_depth,
                 "loops nested deeper than this fold into their parent")
      ->capture_default_str()
      ->check(scalana::cli::Range(0, 1000, true));
  app.add_flag("--no-contract", no_contract, "show the fully expanded graph, uncontracted");
  app.add_option("--format", format, "output format")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  app.add_option("-o,--output", output, "write to FILE instead of standard output");
  app.add_option("--max-vertices", opts.max_vertices, "refuse to expand graphs larger than this")
      ->capture_default_str()
      ->check(scalana::cli::Range(1, 1e12, true));
  if (int status = scalana::cli::Parse(app, argc, argv, "scalana psg"); status >= 0)
    return status;
  opts.contract = !no_contract;
  try {
    scalana::Psg psg = scalana::LoadProgramStructure(binary, libraries, opts);
    if (!psg.structure_source().empty())
      std::fprintf(stderr, "scalana psg: structure %s\n",
                   scalana::cli::Echoed(psg.structure_source()).c_str());
    for (const std::string &w : psg.warnings())
      std::fprintf(stderr, "scalana psg: warning: %s\n", scalana::cli::Echoed(w).c_str());
    psg.ExpandAll();
    scalana::PsgFormat f = format == "json"  ? scalana::PsgFormat::Json
                           : format == "dot" ? scalana::PsgFormat::Dot
                                             : scalana::PsgFormat::Text;
    // Names and files come from the binary's records: nothing in them may
    // drive a terminal. The writers' own lines and indentation stay.
    std::string text = f == scalana::PsgFormat::Json
                           ? scalana::AsciiJson(psg.Write(f))
                           : scalana::EscapeControls(psg.Write(f), "\n\t");
    if (output.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream out(output, std::ios::binary);
      out << text;
      if (!out.flush())
        throw scalana::Error(output + ": cannot write: check the directory exists and is writable");
    }
  } catch (const scalana::Error &e) {
    std::fprintf(stderr, "scalana psg: %s\n", scalana::cli::Echoed(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "scalana psg: out of memory; try --max-vertices or a contracted graph\n");
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "scalana psg: internal error: %s\n",
                 scalana::cli::Echoed(e.what()).c_str());
    return 1;
  }
  return 0;
}
