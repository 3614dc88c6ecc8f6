#include "detect/profile_parts.h"

namespace scalana {

// Profiles of format 2 and per-rank files are read whole (one part).
void ForEachProfilePart(const std::string &run_dir,
                        const std::function<void(Profile &&part)> &each) {
  each(ReadProfile(run_dir));
}

} // namespace scalana
