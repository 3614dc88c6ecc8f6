// The compiler's standard error, read by the wrapper: flang's implicit-
// interface warnings for MPI routines are dropped, everything else passes
// through unchanged and in order; errors are noted for a one-line hint.
#pragma once

#include <string>
#include <vector>

namespace scalana {

// Line by line over the compiler's standard error (docs/static.md section 2).
class DiagnosticFilter {
public:
  explicit DiagnosticFilter(bool drop_mpi_interface_warnings)
      : drop_mpi_(drop_mpi_interface_warnings) {}

  // One line without its newline; true if it is to be printed.
  bool Keep(const std::string &line);

  // flang warnings about MPI routines dropped (each with its excerpt and notes).
  size_t dropped() const { return dropped_; }
  // A diagnostic "file:line:col: error: ..." (the code, not the command line).
  bool code_error() const { return code_error_; }
  // Options the compiler called unknown ("unknown argument: '-fxyz'").
  const std::vector<std::string> &unknown_options() const { return unknown_; }

private:
  bool drop_mpi_;
  bool dropping_ = false; // inside a dropped warning's excerpt and notes
  std::string procedure_; // the MPI routine of that warning
  size_t dropped_ = 0;
  bool code_error_ = false;
  std::vector<std::string> unknown_;
};

// The text of a diagnostic line without terminal colour sequences.
std::string StripColour(const std::string &line);

// Runs argv[0] with argv, its standard error through `filter` to ours.
// Returns its exit status (a signal that ended it is raised again).
int RunFiltered(const std::vector<std::string> &argv, DiagnosticFilter &filter);

} // namespace scalana
