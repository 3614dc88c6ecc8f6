// The hash of a calling context (scalana/profile.h, Context) for unordered
// containers: FNV-1a over its 64-bit words. The runtime keys its MPI rows by
// recorded context with it, the analyzer its resolved contexts.
#pragma once

#include "scalana/profile.h"

#include <cstddef>
#include <cstdint>

namespace scalana {

struct ContextHash {
  size_t operator()(const Context &c) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t word : c)
      h = (h ^ word) * 0x100000001b3ull;
    return size_t(h);
  }
};

} // namespace scalana
