#include "ppg/profile_parts.h"

#include "scalana/profile_v3.h"

namespace scalana {

// Format 3 comes one group at a time; older profiles (format 2, per-rank
// files) as one part.
void ForEachProfilePart(const std::string &run_dir,
                        const std::function<void(Profile &&part)> &each) {
  ReadProfileGroups(run_dir, each);
}

} // namespace scalana
