// Typed access to the SCALANA_* table (config_table.h), shared by the
// launcher and the runtime. No exceptions: the runtime calls this from C
// entry points.
#pragma once

#include "config_table.h"

#include <string>
#include <vector>

namespace scalana::config {

enum class Type { String, Uint, Bool, Choice, List };

struct Option {
  const char *env;
  const char *long_option;
  const char *short_option;
  Type type;
  const char *default_value;
  const char *accepted;
  const char *help;
};

enum class Id {
#define SCALANA_CONFIG_ID(ID, ...) ID,
  SCALANA_CONFIG_TABLE(SCALANA_CONFIG_ID)
#undef SCALANA_CONFIG_ID
};

const std::vector<Option> &Options();
const Option &Get(Id id);

// Empty when VALUE is acceptable for OPT; otherwise a message naming the
// variable and the accepted values.
std::string Validate(const Option &opt, const std::string &value);
// Human form of the accepted values ("auto|papi|itimer|off", "1..10000").
std::string Describe(const Option &opt);

// The value in the environment, or the default. Never validated here.
std::string Value(Id id);
unsigned long UintValue(Id id); // default on a bad value
bool BoolValue(Id id);
std::vector<std::string> ListValue(Id id);

// Default run directory: scalana-<basename of program>-np<world size from the
// MPI launcher's environment, else 1>.
std::string DefaultOutput(const std::string &program);
int WorldSizeFromEnv();
int WorldRankFromEnv(); // -1 when not started by an MPI launcher
std::string JobIdFromEnv();

} // namespace scalana::config
