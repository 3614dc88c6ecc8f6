// A minimal reader of profile.scalana for the runtime's tests (codec 1 only).
#pragma once

#include "scalana/profile.h"

#include <string>

namespace scalana::test {

// The merged profile of the format-3 file PATH. Throws Error.
Profile ReadProfileV3Min(const std::string &path);

} // namespace scalana::test
