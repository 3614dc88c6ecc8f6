#include "detect/detect_stages.h"

#include <algorithm>
#include <cmath>

namespace scalana {

using namespace detect_internal;

// A vertex is abnormal on a rank when its time there exceeds AbnormThd times
// its median over the run's ranks (and, for sampled time, the median's noise).
std::unordered_set<uint64_t> FindAbnormal(const Psg &psg, const std::vector<Run> &runs,
                                          size_t largest, const DetectOptions &opts,
                                          DetectResult &res) {
  std::unordered_set<uint64_t> abnormal_big; // (vertex, rank) in the largest run
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const Run &run = runs[ri];
    const double floor = NoiseFloor(run, opts);
    for (const VertexSeries &s : run.series) {
      if (!s.own_data || IsStartupOrTeardown(psg, s.vertex))
        continue;
      std::vector<double> t = TimesOverRanks(psg, run, s);
      double med = Median(t);
      AbnormalVertex ab;
      ab.run = ri;
      ab.vertex = s.vertex;
      ab.median = med;
      // Computation time is a count of samples, and a count of n samples
      // scatters by about sqrt(n): 5 samples against a median of 3 is 1.7x
      // but only noise. Such vertices must also exceed the median by
      // noise_sigma standard deviations. (MPI time is measured, not sampled.)
      const double hz = run.sample_rate;
      const bool sampled = hz > 0 && psg.vertex(s.vertex).kind != VertexKind::Mpi;
      for (int slot = 0; slot < run.nslots(); ++slot) {
        if (t[slot] < floor || !(t[slot] > opts.abnorm_thd * med))
          continue;
        if (sampled && (t[slot] - med) * hz < opts.noise_sigma * std::sqrt(med * hz))
          continue;
        ab.ranks.push_back(run.ranks[slot]);
        ab.excess += t[slot] - med;
        if (t[slot] > ab.worst_time)
          ab.worst_time = t[slot], ab.worst_rank = run.ranks[slot];
        if (ri == largest)
          abnormal_big.insert(StepKey(s.vertex, run.ranks[slot], false));
      }
      if (!ab.ranks.empty())
        res.abnormal.push_back(std::move(ab));
    }
  }
  std::stable_sort(
      res.abnormal.begin(), res.abnormal.end(),
      [](const AbnormalVertex &a, const AbnormalVertex &b) { return a.excess > b.excess; });
  return abnormal_big;
}

} // namespace scalana
