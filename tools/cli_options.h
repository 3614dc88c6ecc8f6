// The numeric options of every offline tool: each value must be a finite
// number in its range, or the tool stops at once with a plain message and
// exit status 2 (docs/detect.md, section 7). One place, so no tool accepts
// `nan`, a negative count or a 300-digit number that another refuses.
#pragma once

#include "scalana/echo.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace scalana::cli {

inline std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// A CLI11 check of the option's text: a finite number from LO to HI
// (INTEGER: a whole one, digits only). The message names the range; CLI11
// puts the option's name before it.
inline CLI::Validator Range(double lo, double hi, bool integer = false) {
  std::string range =
      std::string(integer ? "a whole number" : "a number") + " from " + Num(lo) + " to " + Num(hi);
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        const char *s = text.c_str();
        char *end = nullptr;
        errno = 0;
        double v = std::strtod(s, &end);
        bool whole = !integer || text.find_first_not_of("+-0123456789") == std::string::npos;
        std::string shown = "'" + EchoValue(text) + "'"; // escaped and cut
        if (text.empty() || *end != '\0' || !whole)
          return shown + " is not " + range;
        if (!std::isfinite(v) || errno == ERANGE)
          return shown + " is not a finite number: expected " + range;
        if (v < lo || v > hi)
          return shown + " is out of range: expected " + range;
        return "";
      },
      range);
}

// The command line's values, as Parse saw them: what messages may quote.
inline std::vector<std::string> &ArgsSeen() {
  static std::vector<std::string> args;
  return args;
}

// MESSAGE (an error of CLI11 or of the readers, quoting the command line's
// values: a path, an option's text) escaped, each value echoed cut.
inline std::string Echoed(std::string_view message) { return EchoInMessage(message, ArgsSeen()); }

// Parses ARGV for APP. Returns -1 to go on, else the exit status: 0 after
// --help, 2 after any bad command line (printed as "TOOL: error: ...", the
// values it quotes escaped and cut).
inline int Parse(CLI::App &app, int argc, char **argv, const char *tool) {
  ArgsSeen() = ArgValues(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::fprintf(stderr, "%s: error: %s (see `%s --help`)\n", tool, Echoed(e.what()).c_str(), tool);
    return 2;
  }
  return -1;
}

} // namespace scalana::cli
