// The prediction's parts of the text and JSON reports and of the page's
// scaling plots.
#pragma once

#include "report/report.h"

#include <nlohmann/json_fwd.hpp>
#include <ostream>

namespace scalana {

// "== Prediction at P ranks ==": nothing when no prediction was asked.
void WritePredictionText(const ReportInput &in, std::ostream &out);
// The "prediction" object (null when none was asked).
nlohmann::json PredictionJson(const ReportInput &in);
// A model as JSON: terms, coefficients, confidence.
nlohmann::json ModelJson(const ScalingModel &m);
// Samples M on a geometric grid over [LO, HI] (positive values only).
std::vector<std::pair<double, double>> ModelCurve(const ScalingModel &m, double lo, double hi);

} // namespace scalana
