// The pieces of the HTML report (html_report.cpp puts them in order): the
// answer first (root causes with their costs and scaling plots), then the
// PPG picture, then the detail sections. Internal to analyzer/detect.
#pragma once

#include "report/report.h"

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace scalana {
namespace html {

using Points = std::vector<std::pair<double, double>>; // (ranks, seconds)

// What a scaling plot draws, log-log over ranks. MEASURED: one point per run
// (class "pt"). The rest is drawn when given: MEASURED_MAX (the slowest rank
// per run), the fitted line, the line of the expected slope through the
// smallest run, and a scaling model: MODEL, a curve sampled over the
// measured range and beyond, MODEL_LABEL its formula, PREDICTED its values
// at larger scales (hollow points, class "predicted"); the axes extend over
// them.
struct ScalingPlotData {
  Points measured, measured_max;
  bool has_fit = false;
  double slope = 0, intercept = 0; // log(t) = intercept + slope * log(p)
  bool has_expected = false;
  double expected = 0;
  Points model, predicted;
  std::string model_label;
};

std::string ScalingPlot(const ScalingPlotData &d, const std::string &id, const std::string &cls);

// Bars of one value per rank slot of RUN (max per bucket past 64 ranks);
// the culprit rank's bar is red.
std::string RankBars(const Run &run, const std::vector<double> &values, int culprit,
                     const std::string &unit, const std::string &cls);

// A non-scalable vertex's figures as a plot.
ScalingPlotData PlotDataOf(const NonScalableVertex &ns);

// A root cause's time per scale: its non-scalable entry's when it has one
// (the same merged values and fit the text report lists), else its time
// merged over the ranks that run it, per run, as the non-scalable stage
// merges (DetectOptions::merge), and the slowest rank's.
ScalingPlotData PlotDataOf(const ReportInput &in, const RootCause &rc);

std::string Desc(const Psg &psg, VertexId v);

// "loop", "0.142 s": the sections.
void WriteCauseSummary(const ReportInput &in, std::ostream &out);
void WriteCauseDetails(const ReportInput &in, size_t plots_for, std::ostream &out);
// SRC_LINK(v): the source pane of V ("" when it has none).
void WritePpgSection(const ReportInput &in, size_t max_causes,
                     const std::function<std::string(VertexId)> &src_link, std::ostream &out);
void WriteRunsSection(const ReportInput &in, std::ostream &out);
// Each run's wall time split, the program's and the kernel's (html_time.cpp).
void WriteTimeSection(const ReportInput &in, std::ostream &out);
void WriteSources(const ReportInput &in, const std::vector<VertexId> &vertices, std::ostream &out);
void WriteNonScalable(const ReportInput &in, std::ostream &out);
void WriteHeatTable(const ReportInput &in, std::ostream &out);
void WriteAbnormal(const ReportInput &in, std::ostream &out);
void WritePsgTree(const ReportInput &in, std::ostream &out);

} // namespace html
} // namespace scalana
