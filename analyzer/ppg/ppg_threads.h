// The thread dimension of the PPG (ppg_threads.cpp; docs/detect.md, "Threads").
#pragma once

#include "ppg/ppg.h"

#include <functional>

namespace scalana {
// The OpenMP construct V runs in: the nearest ancestor (or V itself) that
// starts one; kNoVertex outside every construct.
VertexId RegionOf(const Psg &psg, VertexId v);

// Adds the OpenMP threads' times of rank RD, at SLOT, to the series of their
// vertices (VERTEX_OF maps a context, SERIES_OF a vertex to its series).
// Called once per slot, after the slot's vertex rows are in.
void AddThreadTimes(const Psg &psg, Run &run, const RankData &rd, int slot,
                    const std::function<VertexId(uint32_t)> &vertex_of,
                    const std::function<VertexSeries &(VertexId)> &series_of);
} // namespace scalana
