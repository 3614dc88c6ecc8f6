#include "detect/detect_stages.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace scalana {

using namespace detect_internal;

namespace {

// The experiment from a model of all computation summed over all ranks
// (CPU time, busiest or not): a fixed problem divided among more ranks
// keeps that total constant (its model has no growing term), a fixed
// problem per rank makes it grow as p (leading exponent 3/4 or more, and
// the modelled total per rank not falling by more than a quarter).
// Needs four scales; otherwise, and between the two, Auto and "".
std::string InferScalingByModel(const Psg &psg, const std::vector<Run> &runs, ScalingMode *out) {
  std::vector<std::pair<double, double>> pts;
  for (const Run &r : runs) {
    double sum = 0;
    for (const VertexSeries &s : r.series)
      if (s.own_data && psg.vertex(s.vertex).kind != VertexKind::Mpi)
        for (int i = 0; i < r.nslots(); ++i)
          sum += ExclusiveTime(psg, s, i);
    pts.push_back({double(r.world_size), sum});
  }
  std::sort(pts.begin(), pts.end());
  ScalingModel m = FitScalingModel(pts);
  *out = ScalingMode::Auto;
  if (!m.ok || m.scales < 4 || m.cv_smape > 0.25)
    return "";
  const double lead = m.terms.empty() ? 0 : m.Leading().Exponent();
  if (m.terms.empty())
    *out = ScalingMode::Strong;
  else if (lead >= 0.75 && m.Eval(pts.back().first) / pts.back().first >=
                               0.75 * m.Eval(pts.front().first) / pts.front().first)
    *out = ScalingMode::Weak; // a falling share per rank (Amdahl) is left to the slopes
  else
    return "";
  return std::string("auto chose ") + ToString(*out) +
         " scaling: the computation summed over all ranks is modelled as " + ModelText(m) +
         (m.terms.empty() ? ", constant, as when a fixed problem is divided among the ranks"
                          : ", growing as " + LeadingText(m) +
                                ", as when each rank keeps its own share of work") +
         " (" + std::to_string(m.scales) + " scales, " + m.Confidence() +
         " confidence); pass --scaling or profile with --experiment to say so";
}

} // namespace

std::unordered_set<VertexId> FindNonScalable(const Psg &psg, const std::vector<Run> &runs,
                                             size_t smallest, size_t largest,
                                             const DetectOptions &opts, DetectResult &res) {
  const Run &big = runs[largest];
  std::map<int, int> scales;
  for (const Run &r : runs)
    scales[r.world_size]++;
  for (auto [p, n] : scales)
    if (n > 1)
      res.warnings.push_back(std::to_string(n) + " runs at " + std::to_string(p) +
                             " ranks: treated as repetitions (their merged values are averaged)");
  std::unordered_set<VertexId> non_scalable_set;
  if (scales.size() < 2) {
    res.warnings.push_back("only one scale (" + std::to_string(big.world_size) +
                           " ranks): non-scalable vertices need runs at two or more rank counts; "
                           "reporting abnormal vertices and their root causes only");
  } else {
    const double floor = NoiseFloor(runs, opts);
    std::vector<std::pair<double, double>> program;
    for (const Run &r : runs) {
      std::vector<double> t(r.rank_total.begin(), r.rank_total.end());
      program.push_back({double(r.world_size), MergeValues(std::move(t), opts.merge)});
    }
    LogLogFit pf = FitLogLog(program, floor);
    res.program_slope = pf.b;
    res.program_slope_ok = pf.ok;
    res.scaling_used = opts.scaling;
    // What the runs were profiled as (scalana prof --experiment), when they
    // all agree: the user said it once; --scaling strong|weak still wins.
    std::string recorded;
    for (const Run &r : runs) {
      auto it = r.meta.config.find("SCALANA_EXPERIMENT");
      std::string e = it == r.meta.config.end() ? "" : it->second;
      if (e != "strong" && e != "weak")
        e = "";
      if (&r == &runs[0])
        recorded = e;
      else if (e != recorded)
        recorded = "?";
    }
    if (recorded == "?")
      res.warnings.push_back("the runs were profiled with different --experiment values (or some "
                             "with none): ignored; pass --scaling strong|weak");
    ScalingMode model_choice = ScalingMode::Auto;
    const std::string model_reason = InferScalingByModel(psg, runs, &model_choice);
    if (opts.scaling == ScalingMode::Auto && (recorded == "strong" || recorded == "weak")) {
      res.scaling_used = recorded == "strong" ? ScalingMode::Strong : ScalingMode::Weak;
      res.scaling_reason = "the runs were profiled as a " + recorded +
                           " scaling experiment (scalana prof --experiment " + recorded + ")";
    } else if (opts.scaling == ScalingMode::Auto && model_choice != ScalingMode::Auto) {
      res.inference = InferScaling(psg, runs, floor);
      res.scaling_used = model_choice;
      res.scaling_reason = model_reason;
    } else if (opts.scaling == ScalingMode::Auto) {
      res.inference = InferScaling(psg, runs, floor);
      const ScalingInference &inf = res.inference;
      res.scaling_used = inf.chosen;
      if (inf.disagree)
        res.scaling_reason =
            "auto chose weak scaling: the computation vertices' median slope is " +
            SlopeText(inf.median_slope) + " (median over " + std::to_string(inf.vertices) +
            " computation vertices, each on its busiest rank), but all computation together has "
            "slope " +
            SlopeText(inf.total_slope) +
            ", flat as in weak scaling; pass --scaling strong if the problem size was fixed";
      else if (inf.ok)
        res.scaling_reason =
            std::string("auto chose ") + ToString(inf.chosen) +
            " scaling: computation time per rank has slope " + SlopeText(inf.median_slope) +
            " (median over " + std::to_string(inf.vertices) +
            " computation vertices, each on its busiest rank, weighted by its share at the "
            "smallest scale; all computation together " +
            SlopeText(inf.total_slope) + "), nearer to " +
            (inf.chosen == ScalingMode::Weak ? "weak (0) than strong (-1)"
                                             : "strong (-1) than weak (0)");
      else if (inf.vertices > 0)
        res.scaling_reason =
            "auto chose weak scaling: only " + SlopeText(inf.small_seconds) +
            " s of computation at the smallest scale (slope " + SlopeText(inf.median_slope) +
            "), too little to tell weak from strong; pass --scaling strong if the problem size "
            "was fixed";
      else
        res.scaling_reason = "auto chose weak scaling: no computation time at two scales to "
                             "tell weak from strong; pass --scaling strong if the problem size "
                             "was fixed";
    }
    res.expected_slope = res.scaling_used == ScalingMode::Strong ? -1 : 0;
    const double hz_big = big.sample_rate;
    double big_total = 0;
    for (float t : big.rank_total)
      big_total += t;
    std::unordered_set<VertexId> candidates;
    for (const Run &r : runs)
      for (const VertexSeries &s : r.series)
        if (s.own_data && !IsStartupOrTeardown(psg, s.vertex))
          candidates.insert(s.vertex);
    std::vector<VertexId> ordered(candidates.begin(), candidates.end());
    std::sort(ordered.begin(), ordered.end());
    // Judges MEMBERS summed (one vertex, or one line's contexts): their
    // time per rank merged over the ranks that run them, fitted over the
    // runs, and kept when it grows beyond the expected scaling by more than
    // noise, over the share threshold.
    auto judge = [&](const std::vector<VertexId> &members, NonScalableVertex *out) {
      NonScalableVertex &ns = *out;
      ns.vertex = members[0];
      ns.contexts = members.size();
      std::vector<std::pair<double, double>> pts;
      for (const Run &r : runs) {
        // Over the ranks that run it: code only the workers of a
        // master/worker program run would otherwise "grow" with the share
        // of ranks that are workers (1 of 2, 7 of 8), and code only rank 0
        // runs would hide its growth behind 1/p.
        std::vector<double> per_rank(size_t(r.nslots()), 0.0);
        for (VertexId v : members)
          if (const VertexSeries *s = r.Find(v))
            for (int i = 0; i < r.nslots(); ++i)
              per_rank[size_t(i)] += ExclusiveTime(psg, *s, i);
        std::vector<double> t;
        for (double x : per_rank)
          if (x > 0)
            t.push_back(x);
        double m = t.empty() ? 0 : MergeValues(std::move(t), opts.merge);
        ns.merged.push_back({r.world_size, m});
        pts.push_back({double(r.world_size), m});
      }
      LogLogFit f = FitLogLog(pts, floor);
      if (!f.ok)
        return false;
      ns.slope = f.b;
      ns.intercept = f.a;
      ns.model = FitScalingModel(pts);
      ns.expected = res.expected_slope;
      double sum = 0, most = -1;
      for (VertexId v : members)
        if (const VertexSeries *s = big.Find(v)) {
          double here = 0;
          for (int i = 0; i < big.nslots(); ++i)
            here += ExclusiveTime(psg, *s, i);
          sum += here;
          if (here > most) // the context that costs most stands for the line
            most = here, ns.vertex = v;
        }
      ns.share = big_total > 0 ? sum / big_total : 0;
      // Growth first: ahead, the share a vertex growing faster than the
      // program will have (an Amdahl section at 0.3% of 8 ranks' time that
      // doubles with them was dropped by --min-share 0.01).
      ns.share_ahead =
          pf.ok ? std::min(1.0, ns.share * std::pow(double(NonScalableVertex::kShareAhead),
                                                    std::max(0.0, ns.slope - pf.b)))
                : ns.share;
      ns.score = (ns.slope - ns.expected) * ns.share;
      // Growth beyond the expected scaling, smallest to largest run (the
      // smallest clamped to the floor, as in the fit). It must exceed the
      // noise floor, and for sampled computation noise_sigma standard
      // deviations of the expected sample count: a vertex going from one
      // sample to three or four has a steep slope that is only noise, and
      // would be "problematic" wherever a backtracking path crosses it.
      const double expected_big =
          std::max(ns.merged[smallest].second, floor) *
          std::pow(double(big.world_size) / runs[smallest].world_size, ns.expected);
      const double excess = ns.merged[largest].second - expected_big;
      double needed = floor;
      if (hz_big > 0 && psg.vertex(ns.vertex).kind != VertexKind::Mpi)
        needed = std::max(needed, opts.noise_sigma * std::sqrt(expected_big * hz_big) / hz_big);
      return std::max(ns.share, ns.share_ahead) >= opts.min_share &&
             ns.slope - ns.expected >= opts.min_slope_excess && excess >= needed;
    };
    std::unordered_set<VertexId> alone;
    for (VertexId v : ordered) {
      NonScalableVertex ns;
      if (judge({v}, &ns)) {
        alone.insert(v);
        res.non_scalable.push_back(std::move(ns));
      }
    }
    // One line reached from many contexts (a boundary routine called from a
    // dozen places): each context may stay under the share threshold, or
    // within noise, while the line as a whole grows. Computation only: an
    // MPI call's contexts are judged by their waits, context by context.
    std::map<LineKey, std::vector<VertexId>> by_line;
    for (VertexId v : ordered) {
      const Vertex &x = psg.vertex(v);
      if (x.kind != VertexKind::Mpi && x.loc.line > 0)
        by_line[LineOf(psg, v)].push_back(v);
    }
    // Contexts already reported alone are left out of the sum: the sampling
    // of a periodic time step can give two of a dozen contexts enough
    // samples to pass alone, and the other ten are the same growth.
    for (const auto &[line, members] : by_line) {
      std::vector<VertexId> rest;
      for (VertexId v : members)
        if (!alone.count(v))
          rest.push_back(v);
      NonScalableVertex ns;
      if (rest.size() >= 2 && judge(rest, &ns))
        res.non_scalable.push_back(std::move(ns));
    }
    std::stable_sort(
        res.non_scalable.begin(), res.non_scalable.end(),
        [](const NonScalableVertex &a, const NonScalableVertex &b) { return a.score > b.score; });
    for (const NonScalableVertex &ns : res.non_scalable)
      non_scalable_set.insert(ns.vertex);
  }
  return non_scalable_set;
}

} // namespace scalana
