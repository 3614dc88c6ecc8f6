// OpenMP constructs in the whole-program PSG. The pass records a construct as
// a call of its outlined body (docs/formats.md section 2, `region`), so the
// body is expanded under the construct like any callee; what is particular
// is how threads enter it and how readers name it.
#include "omp.h"

namespace scalana::omp {

std::vector<uint8_t> EnteredByRuntime(const std::vector<LocalPsg> &fns, const Callers &callers) {
  std::vector<uint8_t> out(fns.size(), 0);
  for (size_t f = 0; f < fns.size(); ++f) {
    bool all = !callers[f].empty();
    for (auto [caller, local] : callers[f])
      all = all && fns[size_t(caller)].vertices[local].region != OmpRegion::None;
    out[f] = all;
  }
  return out;
}

std::vector<int32_t> SourceFunctions(const std::vector<LocalPsg> &fns, const Callers &callers) {
  std::vector<int32_t> out(fns.size());
  for (size_t f = 0; f < fns.size(); ++f) {
    // Bounded: a malformed record could make the bodies call each other.
    int32_t g = int32_t(f);
    for (size_t steps = 0; steps < fns.size() && fns[size_t(g)].outlined != OmpRegion::None &&
                           !callers[size_t(g)].empty();
         ++steps)
      g = callers[size_t(g)][0].first;
    out[f] = fns[size_t(g)].outlined == OmpRegion::None ? g : int32_t(f);
  }
  return out;
}

const std::string &StepName(OmpRegion region) {
  static const std::string kNone, kParallel = "parallel region", kTeams = "teams region",
                                  kTask = "task";
  switch (region) {
  case OmpRegion::Parallel:
    return kParallel;
  case OmpRegion::Teams:
    return kTeams;
  case OmpRegion::Task:
    return kTask;
  case OmpRegion::None:
    break;
  }
  return kNone;
}

const char *Label(OmpRegion region) {
  switch (region) {
  case OmpRegion::Parallel:
    return "Parallel";
  case OmpRegion::Teams:
    return "Teams";
  case OmpRegion::Task:
    return "Task";
  case OmpRegion::None:
    break;
  }
  return "Call";
}

std::string LoopNote(Worksharing worksharing, const std::string &language) {
  switch (worksharing) {
  case Worksharing::Static:
  case Worksharing::Dynamic:
    return std::string(language == "fortran" ? " (omp do " : " (omp for ") +
           std::string(ToString(worksharing)) + ")";
  case Worksharing::Distribute:
    return " (omp distribute)";
  case Worksharing::None:
    break;
  }
  return "";
}

} // namespace scalana::omp
