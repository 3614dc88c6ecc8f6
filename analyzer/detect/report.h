// Report sinks for detection results: text for people, JSON for machines,
// one self-contained HTML page for browsing.
#pragma once

#include "detect/detect.h"

#include <ostream>
#include <string>
#include <vector>

namespace scalana {

struct ReportInput {
  const Psg &psg;
  const std::vector<Run> &runs;
  const DetectResult &result;
  const DetectOptions &options;
  std::string binary;
  // Where relative source paths are looked up, in order, after the
  // compilation directory of the function's PSG record (`scalana detect`
  // gives the binary's directory, then the working directory).
  std::vector<std::string> source_dirs;
};

void WriteTextReport(const ReportInput &in, std::ostream &out);
void WriteJsonReport(const ReportInput &in, std::ostream &out);
void WriteHtmlReport(const ReportInput &in, std::ostream &out);

// Lines [line - context, line + context] of FILE, each "NNN| text", or an
// empty vector when the file cannot be read (*found set to false). A relative
// FILE is looked up in DIRS, in order, and nowhere else.
std::vector<std::string> SourceSnippet(const std::string &file, uint32_t line, int context,
                                       const std::vector<std::string> &dirs, bool *found,
                                       std::string *resolved = nullptr);

} // namespace scalana
