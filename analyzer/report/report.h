// Report sinks for detection results: text for people, JSON for machines,
// one self-contained HTML page for browsing.
#pragma once

#include "detect/detect.h"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace scalana {

// The dot program the HTML report lays out its PPG picture with runs at most
// this long (--dot-timeout) and may print at most this much; beyond either
// the picture is left out (docs/report.md).
inline constexpr double kDefaultDotTimeout = 30;
inline constexpr size_t kMaxDotOutputBytes = size_t(8) << 20;

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
  // Seconds the HTML report's dot may take.
  double dot_timeout = kDefaultDotTimeout;
  // Where a writer puts what went wrong while writing (the picture left
  // out), for the command to print; null: nowhere.
  std::vector<std::string> *warnings = nullptr;
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
