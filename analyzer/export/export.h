// Exports of runs (their PPGs) in formats other tools read: Extra-P's JSON
// input (a model per vertex over the rank count), Hatchet's literal call
// tree, CUBE4 (.cubex) with per-rank values.
#pragma once

#include "ppg/ppg.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace scalana {

struct ExportInput {
  const Psg &psg;
  const std::vector<Run> &runs;
  std::string binary;
};

// The vertex's name in exports: the function's for a function vertex,
// "MPI_Send at cg.c:34", "loop at cg.c:89", "solve at cg.c:12" (a call).
std::string ExportNodeName(const Psg &psg, VertexId v);

// The vertex's name in a tree: ExportNodeName, "#K" added for the K-th (K >
// 1) of its parent's children of that name (two calls of one line). From the
// PSG, not a run: a vertex has one name in every run, which Extra-P, Hatchet
// and Thicket need to match nodes across runs.
std::string ExportName(const Psg &psg, VertexId v);

// ExportName with "->" written "-_" ("Grid::operator-_()"): one element of an
// Extra-P callpath, which "->" separates (the JSON's callpaths and the cube
// region names, which Extra-P's cube reader joins with "->").
std::string ExtrapName(const Psg &psg, VertexId v);

// The vertices of RUN's call tree: those with data, from the root, parents
// before children (pre-order, children in execution order).
std::vector<VertexId> ExportTree(const Psg &psg, const Run &run);

// Extra-P JSON input ("parameters": ["p"], "measurements": {callpath:
// {metric: [{"point": [ranks], "values": [...]}]}}): every vertex of every
// run, metrics time (max over ranks, exclusive), time_mean and time_incl.
void WriteExtrapJson(const ExportInput &in, std::ostream &out);

// Hatchet's literal format for run RUN: [{"frame": {"name", "type", "file",
// "line"}, "metrics": {"time (inc)", "time", ...}, "children": [...]}].
void WriteHatchetLiteral(const ExportInput &in, size_t run, std::ostream &out);

// A CUBE4 archive (.cubex: tar of anchor.xml and <metric>.index/.data) of run
// RUN: the call tree of ExportTree, one location per rank, dense values.
std::string CubexArchive(const ExportInput &in, size_t run);

// A ustar archive of FILES (name, content), in order.
std::string TarArchive(const std::vector<std::pair<std::string, std::string>> &files);

// "scalana.p4.r1": the run's name in per-run exports (Extra-P's directory
// naming: p = ranks, r = repetition among runs with that rank count).
std::string ExportRunName(const std::vector<Run> &runs, size_t run);

// Writes FORMAT (extrap | hatchet | cube | ppg-dot is not handled here) to
// OUT: a file for extrap, a directory of per-run files for hatchet and cube.
// Returns the paths written. Throws Error with a clear message.
std::vector<std::string> Export(const ExportInput &in, const std::string &format,
                                const std::string &out);

} // namespace scalana
