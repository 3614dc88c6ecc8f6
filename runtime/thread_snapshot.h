// The thread dimension of a rank's snapshot (thread_snapshot.cpp).
#pragma once

#include "scalana/profile.h"

#include <functional>

namespace scalana::rt {
// Adds R's thread_info, thread_vertices and omp rows, and the main thread's
// on_cpu and run_delay; INTERN gives a context's index in the snapshot's table.
void SnapshotThreads(RankData &r, const std::function<uint32_t(Context &&)> &intern);
} // namespace scalana::rt
