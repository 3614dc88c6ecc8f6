// The plausibility limits of a profile's numbers (profile_checks.h; docs/
// formats.md section 3, "Numbers against each other"): every time, count
// and size a rank records is bounded by what its own wall clock, threads and
// sampling rate allow, and the run's wall clock by its start time and the
// reader's clock. A file whose checksums are right can still hold a lie;
// such a number is refused with the rank, the field, the value and the bound.
#include "profile_checks.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

namespace scalana {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The most wall time any rank of the run may have run, and why: from the
// run's wall clock and its start; kMaxSeconds when neither is recorded.
// Messages are spelled only when a number is refused: a reader checks a
// million ranks' numbers, and spelling every bound would cost more than
// reading them.
struct WallLimit {
  enum Basis { kNone, kMetaWall, kSinceStart };
  double seconds = kMaxSeconds;
  Basis basis = kNone;
  std::string Why(const ProfileMeta &meta) const {
    switch (basis) {
    case kNone:
      return "the longest time a profile may hold";
    case kMetaWall:
      return "meta.wall_time " + Num(meta.wall_time) + " s x " + Num(kRankWallMargin) + " + " +
             Num(kLaunchSkewSeconds) + " s for ranks that started earlier";
    case kSinceStart:
      return "the time since meta.start_time " + meta.start_time + " + " + Num(kClockSkewSeconds) +
             " s for clocks that differ";
    }
    return "";
  }
};

WallLimit RunWallLimit(const ProfileMeta &meta) {
  WallLimit w;
  if (meta.wall_time > 0) {
    w.seconds = kRankWallMargin * meta.wall_time + kLaunchSkewSeconds;
    w.basis = WallLimit::kMetaWall;
  }
  double start = 0;
  if (StartTimeSeconds(meta.start_time, &start)) {
    double since = double(std::time(nullptr)) - start + kClockSkewSeconds;
    if (since < w.seconds) {
      w.seconds = std::max(0.0, since);
      w.basis = WallLimit::kSinceStart;
    }
  }
  return w;
}

// Where a refused number sits: "vertices[3][2] (cpu seconds, with the rows
// before it)", spelled only for the message.
struct Field {
  const char *table;
  size_t row = 0;
  int column = -1; // -1: a field of the rank itself
  const char *label = nullptr;
  std::string extra; // appended (a thread's number)
  std::string Str() const {
    std::string s = table;
    if (column >= 0)
      s += "[" + std::to_string(row) + "][" + std::to_string(column) + "]";
    if (label)
      s += std::string(" (") + label + extra + ")";
    return s;
  }
};

// One rank's checks: each bound is a number; the first number past its
// bound is refused.
class RankLimits {
public:
  RankLimits(const ProfileMeta &meta, const RankData &r, const std::string &at)
      : meta_(meta), r_(r), at_(at), run_(RunWallLimit(meta)) {}

  void Check() {
    CheckWall();
    CheckCpu();
    CheckSamples();
    CheckThreads();
    CheckWaits();
    CheckCounts();
    CheckBytes();
  }

private:
  [[noreturn]] void Refuse(const Field &field, const std::string &what,
                           const std::string &bound) const {
    throw Error(at_ + "." + field.Str() + " " + what + ", at most " + bound +
                ": impossible for rank " + std::to_string(r_.rank) +
                "; the file was edited or damaged: re-run");
  }

  std::string WallBasis() const {
    return r_.wall_time > 0 ? "wall time " + Num(wall_) + " s x " + Num(threads_) + " thread(s)"
                            : "its wall time not recorded: at most " + Num(wall_) + " s (" +
                                  run_.Why(meta_) + ") x " + Num(threads_) + " thread(s)";
  }

  void CheckWall() {
    if (r_.wall_time > run_.seconds)
      Refuse({"wall_time"},
             Num(r_.wall_time) + " s is longer than the run ran (" + run_.Why(meta_) + ")",
             Num(run_.seconds) + " s");
    // A rank that did not record its wall time ran at most as long as the run.
    wall_ = r_.wall_time > 0 ? r_.wall_time : run_.seconds;
    threads_ = r_.threads > 1 ? r_.threads : 1;
    // No more threads run at once than the kernel has CPUs. The slack is
    // per thread: a snapshot reads the CPU clock after the wall clock, and
    // every busy thread runs on meanwhile.
    cpus_ = std::min(threads_, kMaxCpus);
    cpu_allowed_ = kCpuMargin * (wall_ + kCpuSlackSeconds) * cpus_;
    thread_cpu_allowed_ = kCpuMargin * (wall_ + kCpuSlackSeconds);
  }

  void Cpu(const Field &field, double seconds, const char *what) const {
    if (seconds > cpu_allowed_)
      Refuse(field,
             Num(seconds) + " s " + what + " is more than its threads could use in its " +
                 WallBasis(),
             Num(kCpuMargin) + " x (" + Num(wall_) + " s + " + Num(kCpuSlackSeconds) + " s) x " +
                 Num(cpus_) + " thread(s) = " + Num(cpu_allowed_) + " s");
  }

  void CheckCpu() {
    Cpu({"cpu_time"}, r_.cpu_time, "of CPU time");
    Cpu({"sampling_blocked"}, r_.sampling_blocked, "of CPU time with the sampling signal blocked");
    // The CPU time samples stand for: the rank's measured CPU time bounds it
    // where recorded, else its wall time x threads.
    const double of_rank = r_.cpu_time > 0 ? kCpuMargin * r_.cpu_time + kCpuSlackSeconds : 0;
    auto sum = [&](const char *table, size_t n, int column, auto seconds_of) {
      double total = 0;
      for (size_t k = 0; k < n; ++k) {
        total += seconds_of(k);
        const Field field{table, k, column, "cpu seconds, with the rows before it"};
        if (r_.cpu_time > 0 && total > of_rank)
          Refuse(field, Num(total) + " s of CPU time is more than the rank's cpu_time allows",
                 Num(kCpuMargin) + " x cpu_time " + Num(r_.cpu_time) + " s + " +
                     Num(kCpuSlackSeconds) + " s = " + Num(of_rank) + " s");
        Cpu(field, total, "of CPU time");
      }
    };
    sum("vertices", r_.vertices.size(), 2, [&](size_t k) { return r_.vertices[k].cpu_seconds; });
    sum("thread_vertices", r_.thread_vertices.size(), 3,
        [&](size_t k) { return r_.thread_vertices[k].cpu_seconds; });
    sum("omp", r_.omp.size(), 6, [&](size_t k) { return r_.omp[k].cpu_seconds; });
    sum("thread_info", r_.thread_info.size(), 3,
        [&](size_t k) { return r_.thread_info[k].cpu_seconds; });
  }

  // Samples: at most the rate times the CPU time they were taken in, with
  // kSampleMargin and kSampleSlackSeconds (timers are not exact).
  void CheckSamples() const {
    const double hz = meta_.sampling.hz;
    if (hz <= 0)
      return;
    const bool cpu_known = r_.cpu_time > 0;
    const double cpu = cpu_known ? r_.cpu_time : wall_ * threads_;
    const double allowed = hz * (kSampleMargin * cpu + kSampleSlackSeconds);
    auto samples = [&](const Field &field, double n) {
      if (n > allowed)
        Refuse(field,
               Num(n) + " samples is more than the sampling rate allows (" + Num(hz) + " Hz x " +
                   Num(cpu) +
                   (cpu_known ? " s of CPU time"
                              : " s of wall time x threads, its CPU time not recorded") +
                   ")",
               Num(hz) + " Hz x (" + Num(kSampleMargin) + " x " + Num(cpu) + " s + " +
                   Num(kSampleSlackSeconds) + " s) = " + Num(allowed));
    };
    samples({"samples"}, double(r_.samples));
    samples({"samples_dropped"}, double(r_.samples_dropped));
    auto sum = [&](const char *table, size_t n, int column, auto samples_of) {
      double total = 0;
      for (size_t k = 0; k < n; ++k) {
        total += double(samples_of(k));
        samples({table, k, column, "samples, with the rows before it"}, total);
      }
    };
    sum("vertices", r_.vertices.size(), 1, [&](size_t k) { return r_.vertices[k].samples; });
    sum("thread_vertices", r_.thread_vertices.size(), 2,
        [&](size_t k) { return r_.thread_vertices[k].samples; });
    sum("omp", r_.omp.size(), 5, [&](size_t k) { return r_.omp[k].samples; });
    sum("thread_info", r_.thread_info.size(), 2,
        [&](size_t k) { return r_.thread_info[k].samples; });
    // One thread: its own CPU time where measured, else the wall time.
    for (size_t k = 0; k < r_.thread_info.size(); ++k) {
      const ThreadInfo &t = r_.thread_info[k];
      const double own = t.cpu_seconds > 0 ? t.cpu_seconds : thread_cpu_allowed_;
      const double most = hz * (kSampleMargin * own + kSampleSlackSeconds);
      if (double(t.samples) > most)
        Refuse({"thread_info", k, 2, "samples"},
               Num(double(t.samples)) + " samples is more than the sampling rate allows in " +
                   Num(own) + " s of the thread's CPU time",
               Num(most));
    }
  }

  // One thread's times: no more than the wall clock.
  void OneThread(const Field &field, double seconds, const char *what) const {
    if (seconds > thread_cpu_allowed_)
      Refuse(field,
             Num(seconds) + " s " + what + " is more than one thread ran (" + WallBasis() + ")",
             Num(kCpuMargin) + " x (" + Num(wall_) + " s + " + Num(kCpuSlackSeconds) +
                 " s) = " + Num(thread_cpu_allowed_) + " s");
  }

  void CheckThreads() const {
    // The kernel's account of the main thread and of each thread: time on a
    // CPU, runnable but not running, and a thread's life, all within one
    // thread's wall clock.
    OneThread({"on_cpu"}, r_.on_cpu, "on a CPU");
    OneThread({"run_delay"}, r_.run_delay, "runnable but not running");
    OneThread({"on_cpu", 0, -1, "with run_delay"}, r_.on_cpu + r_.run_delay,
              "on a CPU or runnable");
    for (size_t k = 0; k < r_.thread_info.size(); ++k) {
      const ThreadInfo &t = r_.thread_info[k];
      OneThread({"thread_info", k, 3, "CPU seconds"}, t.cpu_seconds, "of CPU time");
      OneThread({"thread_info", k, 4, "run delay"}, t.run_delay, "runnable but not running");
      OneThread({"thread_info", k, 5, "wall seconds"}, t.wall_seconds, "of the thread's life");
    }
    std::map<uint32_t, double> per_thread;
    for (size_t k = 0; k < r_.thread_vertices.size(); ++k) {
      const ThreadRow &t = r_.thread_vertices[k];
      const double sum = per_thread[t.thread] += t.cpu_seconds;
      if (sum > thread_cpu_allowed_)
        OneThread({"thread_vertices", k, 3, "cpu seconds, with thread ",
                   std::to_string(t.thread) + "'s rows before it"},
                  sum, "of CPU time");
    }
    // Off-CPU rows: a thread is off the CPU at one place at a time, so its
    // rows sum to at most its wall clock.
    std::map<uint32_t, double> off_per_thread;
    for (size_t k = 0; k < r_.off_cpu.size(); ++k) {
      const OffCpuRow &o = r_.off_cpu[k];
      const double sum = off_per_thread[o.thread] += o.blocked + o.run_delay;
      if (sum > thread_cpu_allowed_)
        OneThread({"off_cpu", k, 3, "blocked and run delay, with thread ",
                   std::to_string(o.thread) + "'s rows before it"},
                  sum, "off the CPU");
    }
    // OpenMP rows: each is one thread at one place (constructs nest, so a
    // thread's rows may overlap in time and their sum may not be bounded).
    for (size_t k = 0; k < r_.omp.size(); ++k) {
      OneThread({"omp", k, 4, "seconds"}, r_.omp[k].seconds, "in the OpenMP runtime");
      OneThread({"omp", k, 6, "cpu seconds"}, r_.omp[k].cpu_seconds, "of CPU time");
    }
  }

  // Wall-clock time in MPI and dependence waits: each thread is in at most
  // one call at a time.
  void CheckWaits() const {
    auto sums = [&](const char *table, size_t n, int column, const char *label, double margin,
                    const char *what, auto seconds_of) {
      const double allowed = margin * wall_ * threads_ + kWaitSlackSeconds;
      double sum = 0;
      for (size_t k = 0; k < n; ++k) {
        sum += seconds_of(k);
        if (sum > allowed)
          Refuse({table, k, column, label},
                 Num(sum) + " s " + what + " is more than the rank ran (" + WallBasis() + ")",
                 Num(margin) + " x " + Num(wall_) + " s x " + Num(threads_) + " + " +
                     Num(kWaitSlackSeconds) + " s = " + Num(allowed) + " s");
      }
    };
    sums("mpi", r_.mpi.size(), 2, "seconds, with the rows before it", kWaitMargin, "in MPI calls",
         [&](size_t k) { return r_.mpi[k].seconds; });
    sums("deps", r_.deps.size(), 7, "wait seconds, with the rows before it", kDepWaitMargin,
         "of waiting", [&](size_t k) { return r_.deps[k].wait_seconds; });
  }

  // Calls, messages, waits, errors: at most kMaxCallsPerSecond per thread
  // over the wall time (and kCountSlackSeconds' worth).
  void CheckCounts() const {
    const double allowed = kMaxCallsPerSecond * (wall_ * threads_ + kCountSlackSeconds);
    auto count = [&](const Field &field, double n, const char *what) {
      if (n > allowed)
        Refuse(field,
               Num(n) + " " + what + " is more than the rank could make (" + WallBasis() + ")",
               Num(kMaxCallsPerSecond) + "/s x (" + Num(wall_) + " s x " + Num(threads_) + " + " +
                   Num(kCountSlackSeconds) + " s) = " + Num(allowed) + ", one per " +
                   Num(1e9 / kMaxCallsPerSecond) + " ns of each thread's wall time");
    };
    double sum = 0;
    for (size_t k = 0; k < r_.mpi.size(); ++k)
      count({"mpi", k, 1, "calls, with the rows before it"}, sum += double(r_.mpi[k].calls),
            "MPI calls");
    sum = 0;
    for (size_t k = 0; k < r_.deps.size(); ++k) {
      const DepRow &d = r_.deps[k];
      count({"deps", k, 5, "count, with the rows before it"}, sum += double(d.count),
            "messages and calls");
      if (!d.seqs.empty())
        count({"deps", k, 8, "message sequence ranges"}, double(d.seqs.back().last),
              "messages on one channel");
    }
    sum = 0;
    for (size_t k = 0; k < r_.omp.size(); ++k)
      count({"omp", k, 3, "count, with the rows before it"}, sum += double(r_.omp[k].count),
            "OpenMP constructs and waits");
    for (const auto &[name, n] : r_.errors)
      if (double(n) > allowed) {
        const std::string field = "errors." + name;
        count({field.c_str()}, double(n), "events");
      }
  }

  // Bytes: at most kMaxBytesPerCall for each call of the row (and one more
  // call's worth: a snapshot may read a row's bytes before its calls).
  void CheckBytes() const {
    auto bytes = [&](const Field &field, uint64_t b, uint64_t calls, const char *what) {
      const double allowed = kMaxBytesPerCall * (double(calls) + 1);
      if (double(b) > allowed)
        Refuse(field,
               Num(double(b)) + " bytes is more than " + std::to_string(calls) + " " + what +
                   " can move",
               Num(kMaxBytesPerCall) + " bytes a call x (" + std::to_string(calls) +
                   " + 1) = " + Num(allowed));
    };
    for (size_t k = 0; k < r_.mpi.size(); ++k)
      bytes({"mpi", k, 3, "bytes"}, r_.mpi[k].bytes, r_.mpi[k].calls, "call(s)");
    for (size_t k = 0; k < r_.deps.size(); ++k)
      bytes({"deps", k, 6, "bytes"}, r_.deps[k].bytes, r_.deps[k].count, "message(s) or call(s)");
  }

  const ProfileMeta &meta_;
  const RankData &r_;
  const std::string &at_;
  const WallLimit run_;
  double wall_ = 0, threads_ = 1, cpus_ = 1, cpu_allowed_ = 0, thread_cpu_allowed_ = 0;
};

} // namespace

bool StartTimeSeconds(const std::string &text, double *seconds) {
  // The runtime's form, "2026-11-29T18:00:00Z" (UTC); anything else is no
  // usable start (older and hand-written files). Parsed by hand: every
  // rank's check reads it, and sscanf and timegm cost more than the checks.
  static const char kForm[] = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != sizeof kForm - 1)
    return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (kForm[i] == 'd' ? text[i] < '0' || text[i] > '9' : text[i] != kForm[i])
      return false;
  auto num = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i)
      v = v * 10 + (text[i] - '0');
    return v;
  };
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
            sec = num(17, 2);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return false;
  // Days since 1970-01-01 of the civil date (the proleptic Gregorian
  // calendar, as UTC counts them).
  const int yy = y - (mo <= 2), era = yy / 400, yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = double(era) * 146097 + doe - 719468;
  *seconds = days * 86400 + h * 3600 + mi * 60 + sec;
  return true;
}

void CheckMetaNumbers(const ProfileMeta &meta) {
  double start = 0;
  if (!StartTimeSeconds(meta.start_time, &start))
    return;
  const double now = double(std::time(nullptr));
  const double most = now - start + kClockSkewSeconds;
  if (meta.wall_time > most || most < 0) {
    std::time_t now_t = std::time_t(now);
    std::tm tm;
    gmtime_r(&now_t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    throw Error("meta.wall_time " + Num(meta.wall_time) + " s from meta.start_time " +
                meta.start_time + " ends after the time it is read (" + when + ") + " +
                Num(kClockSkewSeconds) + " s for clocks that differ, at most " +
                Num(std::max(0.0, most)) +
                " s: impossible for this run; the file was edited or damaged: re-run");
  }
}

void CheckRankNumbers(const ProfileMeta &meta, const RankData &r, const std::string &at) {
  RankLimits(meta, r, at).Check();
}

} // namespace scalana
