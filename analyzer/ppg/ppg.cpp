#include "ppg/ppg.h"
#include "ppg/ppg_build.h"

#include <algorithm>

namespace scalana {

double ExclusiveTime(const Psg &psg, const VertexSeries &s, int slot) {
  double cpu = s.cpu.empty() ? 0.0 : s.cpu[slot];
  double mpi = s.mpi.empty() ? 0.0 : s.mpi[slot];
  double off = s.off_cpu.empty() ? 0.0 : s.off_cpu[slot];
  if (psg.vertex(s.vertex).kind == VertexKind::Mpi)
    return std::max(cpu, mpi) + off;
  return cpu + off + mpi;
}

double InclusiveTime(const VertexSeries &s, int slot) { return s.incl.empty() ? 0 : s.incl[slot]; }

Run BuildRun(Psg &psg, const Profile &profile, const std::string &label,
             const ProgressFn &progress) {
  RunBuilder builder(psg, label, progress);
  builder.Add(profile);
  return builder.Finish();
}

} // namespace scalana
