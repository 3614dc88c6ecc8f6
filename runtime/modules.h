// The modules whose frames the profiler keeps: the executable and every
// shared object built with the wrappers (it carries a `scalana_psg`
// section), linked or loaded with dlopen. docs/contexts.md, "Modules".
#pragma once

#include "scalana/profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace scalana::rt {

// Finds the loaded objects and publishes the code ranges of those with a
// PSG to the handler's table (signal_safe/thread_samples.h). At load, and
// again after every dlopen and dlclose (their interposers, modules.cpp).
// Not async-signal-safe; serialised internally.
void ScanModules() noexcept;

// The shared objects with a PSG seen so far, in frame order: frames of
// module K (K >= 1) name element K-1. Unloaded ones are kept.
std::vector<ModuleInfo> LoadedModules();

// The PSG identity of a `scalana_psg` section's bytes, as meta.psg_id and
// meta.modules spell it: "0x" and 16 hex digits of FNV-1a 64.
std::string PsgId(const std::vector<uint8_t> &section);

} // namespace scalana::rt
