#include "config.h"

#include "scalana/echo.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace scalana::config {
namespace {

std::vector<std::string> Split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos)
      end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Decimal digits, no sign, no leading zero (which some read as octal), at
// most 19 of them (fits 64 bits).
bool ParseUint(const std::string &s, unsigned long long *out) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0'))
    return false;
  unsigned long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + unsigned(c - '0');
  }
  *out = v;
  return true;
}

const char *EnvOrNull(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

} // namespace

const std::vector<Option> &Options() {
  static const std::vector<Option> options = {
#define SCALANA_CONFIG_ROW(ID, ENV, LONG, SHORT, TYPE, DEF, ACC, HELP)                             \
  {ENV, LONG, SHORT, Type::TYPE, DEF, ACC, HELP},
      SCALANA_CONFIG_TABLE(SCALANA_CONFIG_ROW)
#undef SCALANA_CONFIG_ROW
  };
  return options;
}

const Option &Get(Id id) { return Options()[size_t(id)]; }

std::string Describe(const Option &opt) {
  switch (opt.type) {
  case Type::String:
    return "a path";
  case Type::Bool:
  case Type::Uint:
  case Type::Choice:
    return opt.accepted;
  case Type::List:
    return "comma-separated PAPI event names (presets PAPI_*, or native PMU::EVENT), at most 8";
  }
  return "";
}

std::string Validate(const Option &opt, const std::string &value) {
  // The value echoed escaped and cut: it may hold a newline or ESC, or be
  // 10 KB long (scalana/echo.h).
  std::string bad = std::string(opt.env) + "='" + EchoValue(value) + "' is not valid (--" +
                    opt.long_option + "): expected " + Describe(opt);
  switch (opt.type) {
  case Type::String:
    return value.empty() ? std::string(opt.env) + " is empty: give a directory path" : "";
  case Type::Bool: // exactly the table's spellings ("0|1"): not "2", "1e23" or "yes"
  case Type::Choice:
    for (const std::string &c : Split(opt.accepted, '|'))
      if (c == value)
        return "";
    return bad;
  case Type::Uint: {
    auto range = Split(opt.accepted, '.'); // "MIN..MAX" splits to MIN, "", MAX
    unsigned long long v, lo, hi;
    if (!ParseUint(value, &v) || range.size() != 3 || !ParseUint(range[0], &lo) ||
        !ParseUint(range[2], &hi) || v < lo || v > hi)
      return bad;
    return "";
  }
  case Type::List: {
    auto items = Split(value, ',');
    if (items.size() > 8)
      return bad;
    for (const std::string &item : items) {
      // A preset (PAPI_TOT_CYC), or a native event named by its component
      // (perf::TASK-CLOCK, perf_raw::r00c0): PAPI checks that it exists.
      bool preset = item.size() >= 6 && item.compare(0, 5, "PAPI_") == 0;
      bool native = !preset && item.find("::") != std::string::npos && item.front() != ':';
      if (!preset && !native)
        return bad;
      for (char c : item)
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (native && ((c >= 'a' && c <= 'z') || c == ':' || c == '-' || c == '.' || c == '='))))
          return bad;
    }
    return "";
  }
  }
  return bad;
}

std::string Value(Id id) {
  const Option &opt = Get(id);
  const char *v = EnvOrNull(opt.env);
  return v ? v : opt.default_value;
}

unsigned long UintValue(Id id) {
  std::string v = Value(id);
  if (!Validate(Get(id), v).empty())
    v = Get(id).default_value;
  return std::strtoul(v.c_str(), nullptr, 10);
}

bool BoolValue(Id id) {
  std::string v = Value(id);
  if (!Validate(Get(id), v).empty())
    v = Get(id).default_value;
  return v == "1";
}

std::vector<std::string> ListValue(Id id) {
  std::string v = Value(id);
  if (!Validate(Get(id), v).empty())
    v = Get(id).default_value;
  return Split(v, ',');
}

int WorldSizeFromEnv() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char *v = EnvOrNull(name))
      return std::atoi(v);
  return 1;
}

int WorldRankFromEnv() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char *v = EnvOrNull(name))
      return std::atoi(v);
  return -1;
}

std::string JobIdFromEnv() {
  for (const char *name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
    if (const char *v = EnvOrNull(name))
      return v;
  // One Slurm allocation runs many job steps (one per srun): the step too.
  if (const char *v = EnvOrNull("SLURM_JOB_ID")) {
    const char *step = EnvOrNull("SLURM_STEP_ID");
    return std::string(v) + (step ? std::string(".") + step : std::string());
  }
  // A singleton run: the launcher's own process is the whole job.
  return "pid-" + std::to_string(getpid());
}

std::string DefaultOutput(const std::string &program) {
  std::string base = program.substr(program.rfind('/') + 1);
  if (base.empty())
    base = "run";
  return "scalana-" + base + "-np" + std::to_string(WorldSizeFromEnv());
}

} // namespace scalana::config
