// The profile of a run directory handed over one part at a time (a group of
// ranks with its own contexts, communicators and modules), so the PPG is
// built without holding the whole run. Its own file: the reader of profile
// format 3 streams its groups; older profiles come as one part.
#pragma once

#include "scalana/profile.h"

#include <functional>
#include <string>

namespace scalana {

void ForEachProfilePart(const std::string &run_dir,
                        const std::function<void(Profile &&part)> &each);

} // namespace scalana
