#include "ppg/rank_time.h"
#include "scalana/io_operations.h"

#include "report/report_common.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

namespace scalana {

using namespace report_common;

bool IsIoOperation(const std::string &op) { return IsIoOperationName(op); }

bool IsIoVertex(const Psg &psg, const Run &run, VertexId v) {
  const Vertex &x = psg.vertex(v);
  if (x.kind == VertexKind::Mpi)
    return IsIoOperation(x.label);
  const VertexSeries *s = x.kind == VertexKind::Call ? run.Find(v) : nullptr;
  return s && s->mpi_rows == kMpiRowsIo;
}

RankTime MainThreadTime(const RankData &rd, double sampled, double in_mpi) {
  RankTime t;
  t.wall = float(rd.wall_time);
  // The rank's rows sum every thread; the other threads' shares are their
  // thread rows (the main thread has none), so the main thread keeps the rest.
  double others = 0;
  for (const ThreadRow &row : rd.thread_vertices)
    others += row.cpu_seconds;
  double mpi = 0, io = 0;
  for (const MpiRow &m : rd.mpi)
    (IsIoOperation(m.op) ? io : mpi) += m.seconds;
  double omp_wait = 0, omp_serial = 0;
  for (const OmpRow &o : rd.omp)
    if (o.thread == 0 && IsOmpWait(o.kind)) {
      omp_wait += o.seconds;
      if (IsOmpSerialWait(o.kind))
        omp_serial += o.seconds;
    }
  // Threads other than the main one may call MPI too (MPI_THREAD_MULTIPLE)
  // and sample inside it: no figure is allowed past the wall time.
  const double wall = std::max(0.0, rd.wall_time);
  t.mpi = float(std::min(mpi, wall));
  t.io = float(std::min(io, wall - double(t.mpi)));
  t.omp_wait = float(std::min(omp_wait, wall - double(t.mpi) - double(t.io)));
  t.omp_serial = float(std::min(omp_serial, double(t.omp_wait)));
  t.computation = float(std::clamp(sampled - others - in_mpi, 0.0, wall));
  double blocked = 0, delay = 0;
  for (const OffCpuRow &o : rd.off_cpu)
    if (o.thread == 0)
      blocked += o.blocked, delay += o.run_delay;
  const double left = std::max(0.0, wall - double(t.mpi) - double(t.io) - double(t.omp_wait) -
                                        double(t.computation));
  t.off_cpu = float(std::min(blocked, left));
  t.off_cpu_delay = float(std::min(delay, left - double(t.off_cpu)));
  t.on_cpu = float(std::min(rd.on_cpu, wall));
  t.run_delay = float(std::min(rd.run_delay, wall - double(t.on_cpu)));
  t.cores = uint32_t(std::max(rd.cores, 0));
  t.host = uint32_t(std::hash<std::string>{}(rd.host));
  return t;
}

namespace {

TimeShare Share(const std::vector<RankTime> &ranks, const std::vector<int> &world,
                const std::function<double(const RankTime &)> &part) {
  TimeShare s;
  std::vector<double> shares;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].wall <= 0)
      continue;
    double f = std::clamp(part(ranks[i]) / double(ranks[i].wall), 0.0, 1.0);
    shares.push_back(f);
    if (f > s.max || s.max_rank < 0) {
      s.max = f;
      s.max_rank = world[i];
    }
  }
  if (!shares.empty()) {
    auto mid = shares.begin() + ptrdiff_t(shares.size() / 2);
    std::nth_element(shares.begin(), mid, shares.end());
    s.median = *mid;
  }
  return s;
}

// A run delay of this median share or more is the cores' doing, whatever
// the count of ranks per host says (another job, a noisy node).
constexpr double kSharedDelayShare = 0.10;

} // namespace

TimeSummary SummariseTime(const Run &run) {
  TimeSummary t;
  std::vector<RankTime> timed;
  std::vector<int> world, measured_world;
  std::vector<RankTime> measured;
  std::map<uint32_t, int> per_host;
  std::map<uint32_t, uint32_t> cores_of;
  std::vector<double> walls;
  for (size_t i = 0; i < run.rank_time.size() && i < run.ranks.size(); ++i) {
    const RankTime &r = run.rank_time[i];
    if (r.wall <= 0)
      continue;
    timed.push_back(r);
    world.push_back(run.ranks[i]);
    walls.push_back(r.wall);
    ++per_host[r.host];
    cores_of[r.host] = std::max(cores_of[r.host], r.cores);
    if (r.kernel_measured()) {
      measured.push_back(r);
      measured_world.push_back(run.ranks[i]);
    }
  }
  t.ranks = int(timed.size());
  t.kernel_ranks = int(measured.size());
  t.hosts = int(per_host.size());
  if (timed.empty())
    return t;
  for (const auto &[host, n] : per_host)
    if (n > t.max_ranks_per_host) {
      t.max_ranks_per_host = n;
      t.cores = cores_of[host];
    }
  std::nth_element(walls.begin(), walls.begin() + ptrdiff_t(walls.size() / 2), walls.end());
  t.median_wall = walls[walls.size() / 2];
  t.computation = Share(timed, world, [](const RankTime &r) { return r.computation; });
  t.mpi = Share(timed, world, [](const RankTime &r) { return r.mpi; });
  t.io = Share(timed, world, [](const RankTime &r) { return r.io; });
  t.omp_wait = Share(timed, world, [](const RankTime &r) { return r.omp_wait; });
  t.omp_serial = Share(timed, world, [](const RankTime &r) { return r.omp_serial; });
  t.off_cpu = Share(timed, world, [](const RankTime &r) { return r.off_cpu; });
  t.off_cpu_delay = Share(timed, world, [](const RankTime &r) { return r.off_cpu_delay; });
  t.not_placed = Share(timed, world, [](const RankTime &r) { return r.not_placed(); });
  if (!measured.empty()) {
    t.on_cpu = Share(measured, measured_world, [](const RankTime &r) { return r.on_cpu; });
    t.run_delay = Share(measured, measured_world, [](const RankTime &r) { return r.run_delay; });
    t.blocked = Share(measured, measured_world, [](const RankTime &r) { return r.blocked(); });
  }
  bool crowded = t.cores > 0 && uint32_t(t.max_ranks_per_host) > t.cores;
  t.shared_cores = crowded || (t.kernel_ranks > 0 && t.run_delay.median >= kSharedDelayShare);
  return t;
}

std::string SharedCoresLine(const TimeSummary &t) {
  if (!t.shared_cores)
    return "";
  std::string line = "shared cores: ";
  if (t.cores > 0 && uint32_t(t.max_ranks_per_host) > t.cores)
    line += RankCount(t.max_ranks_per_host) + " on " + std::to_string(t.cores) + " cores" +
            (t.hosts > 1 ? " (the most crowded of " + std::to_string(t.hosts) + " hosts)" : "");
  else
    line += "other processes shared the ranks' cores";
  if (t.kernel_ranks > 0)
    line += ": ranks runnable but not running " + Percent(t.run_delay.median, 1) +
            " of their wall time (median; " + Percent(t.run_delay.max, 1) + " on rank " +
            std::to_string(t.run_delay.max_rank) + ")";
  return line + "; the costs below use CPU time, and wall-clock waits include that delay";
}

std::string TimeLine(const TimeSummary &t) {
  if (t.ranks == 0)
    return "";
  // A category one rank owns (rank 0's I/O) has a median of nothing: its
  // largest share is said beside it whenever that is twice the median.
  auto part = [](const char *name, const TimeShare &s) {
    std::string out = std::string(name) + " " + Percent(s.median, 1);
    if (s.max_rank >= 0 && s.max > 2 * s.median && s.max >= 0.01)
      out += " (most: " + Percent(s.max, 1) + " on rank " + std::to_string(s.max_rank) + ")";
    return out;
  };
  std::string line = "time: of a rank's wall time (median " + Fmt("%.3f", t.median_wall) +
                     " s; medians over " + RankCount(t.ranks) +
                     "): " + part("computation", t.computation) + ", " + part("MPI", t.mpi);
  if (t.io.max > 0)
    line += ", " + part("I/O", t.io);
  if (t.omp_wait.max > 0)
    line += ", " + part("OpenMP waits", t.omp_wait);
  if (t.omp_serial.max > 0)
    line += " (of them serialised: " + part("critical sections and locks", t.omp_serial) + ")";
  if (t.off_cpu.max > 0 || t.off_cpu_delay.max > 0)
    line += ", " + part("blocked off the CPU", t.off_cpu) + ", " +
            part("waiting for a core", t.off_cpu_delay);
  line += ", not placed " + Percent(t.not_placed.median, 1) +
          " (most: " + Percent(t.not_placed.max, 1) + " on rank " +
          std::to_string(t.not_placed.max_rank) + ")";
  if (t.kernel_ranks > 0)
    line += "; the kernel: on a CPU " + Percent(t.on_cpu.median, 1) +
            ", runnable but not running " + Percent(t.run_delay.median, 1) + ", blocked " +
            Percent(t.blocked.median, 1);
  return line;
}

std::string OffCpuHint(const Run &run, const TimeSummary &t) {
  // A tenth of the wall time: below it the clocks' edges and start-up.
  constexpr double kNotPlacedShare = 0.10;
  auto asked = run.meta.config.find("SCALANA_OFF_CPU");
  if (t.ranks == 0 || t.not_placed.median < kNotPlacedShare ||
      (asked != run.meta.config.end() && asked->second == "on"))
    return "";
  return Percent(t.not_placed.median, 1) + " of a rank's wall time (median) is not placed: " +
         "off the CPU outside MPI and I/O calls (a sleep, a lock, a page fault, a busy core); " +
         "`scalana prof --off-cpu on` places it on the lines that left the CPU (" + run.label + ")";
}

void PutTimeJson(nlohmann::json &obj, const TimeSummary &t) {
  using nlohmann::json;
  auto share = [](const TimeShare &s) {
    return json{{"median", s.median},
                {"max", s.max},
                {"max_rank", s.max_rank >= 0 ? json(s.max_rank) : json()}};
  };
  json time = {{"ranks", t.ranks},
               {"median_wall_seconds", t.median_wall},
               {"computation", share(t.computation)},
               {"mpi", share(t.mpi)},
               {"io", share(t.io)},
               {"omp_wait", share(t.omp_wait)},
               {"omp_serial", share(t.omp_serial)},
               {"off_cpu", share(t.off_cpu)},
               {"off_cpu_delay", share(t.off_cpu_delay)},
               {"not_placed", share(t.not_placed)},
               {"kernel_ranks", t.kernel_ranks},
               {"hosts", t.hosts},
               {"max_ranks_per_host", t.max_ranks_per_host},
               {"cores", t.cores},
               {"shared_cores", t.shared_cores}};
  if (t.kernel_ranks > 0) {
    time["on_cpu"] = share(t.on_cpu);
    time["run_delay"] = share(t.run_delay);
    time["blocked"] = share(t.blocked);
  }
  obj["time"] = std::move(time);
}

} // namespace scalana
