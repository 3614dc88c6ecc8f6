// The runtime's name for the shared whole-buffer write
// (include/scalana/write_whole.h): async-signal-safe.
#pragma once

#include "scalana/write_whole.h"

namespace scalana::rt {
using scalana::WriteWhole;
} // namespace scalana::rt
