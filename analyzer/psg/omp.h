// OpenMP constructs in the whole-program PSG (docs/psg.md, "OpenMP
// regions"): how the records' `region`, `outlined` and `worksharing` fields
// read, and where an outlined body's code belongs. Internal to scalana_psg.
#pragma once

#include "psg.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scalana::omp {

// Per function, its call sites: (caller function, local index of the call).
using Callers = std::vector<std::vector<std::pair<int32_t, uint32_t>>>;

// Per function: 1 when it has call sites and every one starts an OpenMP
// construct, so that only libomp calls it: a thread may run it with no frame
// of the construct's call on its stack (a worker, or a task run at a
// barrier), and its context then starts afresh at it.
std::vector<uint8_t> EnteredByRuntime(const std::vector<LocalPsg> &fns, const Callers &callers);

// Per function: the function whose source holds its code. An outlined body
// is the code of the function with the directive (through nested constructs);
// every other function is its own.
std::vector<int32_t> SourceFunctions(const std::vector<LocalPsg> &fns, const Callers &callers);

// A construct as a call path names it: "parallel region", "teams region",
// "task"; "" for none.
const std::string &StepName(OmpRegion region);
// The text writer's vertex label: "Parallel", "Teams", "Task".
const char *Label(OmpRegion region);
// The writers' note on a loop: " (omp for static)", " (omp for dynamic)",
// " (omp distribute)", with Fortran's "omp do" in LANGUAGE "fortran"; ""
// for other loops.
std::string LoopNote(Worksharing worksharing, const std::string &language);

// The record fields, parsed; throws (through FAIL) on an unknown spelling.
template <typename Fail> OmpRegion ParseRegion(const std::string &s, Fail fail) {
  auto r = ParseOmpRegion(s);
  if (!r)
    fail("unknown OpenMP construct '" + s + "'");
  return *r;
}
template <typename Fail> Worksharing ParseLoop(const std::string &s, Fail fail) {
  auto w = ParseWorksharing(s);
  if (!w)
    fail("unknown worksharing '" + s + "'");
  return *w;
}

} // namespace scalana::omp
