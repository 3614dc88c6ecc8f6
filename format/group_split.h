// One group of a profile as a self-contained part: what format 3's blocks
// hold (docs/formats.md section 4).
#pragma once

#include "scalana/profile.h"

#include <cstddef>

namespace scalana::detail {

// The ranks P.ranks[BEGIN, END) with only the contexts, communicators and
// modules they use, renumbered in order of first use (modules in P's
// order), and P's meta with those modules.
Profile GroupOf(const Profile &p, size_t begin, size_t end);

} // namespace scalana::detail
