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

std::string Row(const char *table, size_t k, int column) {
  return std::string(table) + "[" + std::to_string(k) + "][" + std::to_string(column) + "]";
}

// The most wall time any rank of the run may have run, and why: from the
// run's wall clock and its start; kMaxSeconds when neither is recorded.
struct WallLimit {
  double seconds = kMaxSeconds;
  std::string basis = "the longest time a profile may hold";
};

WallLimit RunWallLimit(const ProfileMeta &meta) {
  WallLimit w;
  if (meta.wall_time > 0) {
    w.seconds = kRankWallMargin * meta.wall_time + kLaunchSkewSeconds;
    w.basis = "meta.wall_time " + Num(meta.wall_time) + " s x " + Num(kRankWallMargin) + " + " +
              Num(kLaunchSkewSeconds) + " s for ranks that started earlier";
  }
  double start = 0;
  if (StartTimeSeconds(meta.start_time, &start)) {
    double since = double(std::time(nullptr)) - start + kClockSkewSeconds;
    if (since < w.seconds) {
      w.seconds = std::max(0.0, since);
      w.basis = "the time since meta.start_time " + meta.start_time + " + " +
                Num(kClockSkewSeconds) + " s for clocks that differ";
    }
  }
  return w;
}

// One rank's checks: each bound is computed once; the first number past
// its bound is refused.
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
  [[noreturn]] void Refuse(const std::string &field, const std::string &what,
                           const std::string &bound) const {
    throw Error(at_ + "." + field + " " + what + ", at most " + bound + ": impossible for rank " +
                std::to_string(r_.rank) + "; the file was edited or damaged: re-run");
  }

  void CheckWall() {
    if (r_.wall_time > run_.seconds)
      Refuse("wall_time", Num(r_.wall_time) + " s is longer than the run ran (" + run_.basis + ")",
             Num(run_.seconds) + " s");
    // A rank that did not record its wall time ran at most as long as the run.
    wall_ = r_.wall_time > 0 ? r_.wall_time : run_.seconds;
    threads_ = r_.threads > 1 ? r_.threads : 1;
    wall_basis_ = r_.wall_time > 0
                      ? "wall time " + Num(wall_) + " s x " + Num(threads_) + " thread(s)"
                      : "its wall time not recorded: at most " + Num(wall_) + " s (" + run_.basis +
                            ") x " + Num(threads_) + " thread(s)";
    // No more threads run at once than the kernel has CPUs. The slack is
    // per thread: a snapshot reads the CPU clock after the wall clock, and
    // every busy thread runs on meanwhile.
    const double cpus = std::min(threads_, kMaxCpus);
    cpu_allowed_ = kCpuMargin * (wall_ + kCpuSlackSeconds) * cpus;
    thread_cpu_allowed_ = kCpuMargin * (wall_ + kCpuSlackSeconds);
    cpu_bound_ = Num(kCpuMargin) + " x (" + Num(wall_) + " s + " + Num(kCpuSlackSeconds) +
                 " s) x " + Num(cpus) + " thread(s) = " + Num(cpu_allowed_) + " s";
  }

  void CheckCpu() {
    auto cpu = [&](const std::string &field, double seconds, const char *what) {
      if (seconds > cpu_allowed_)
        Refuse(field,
               Num(seconds) + " s " + what + " is more than its threads could use in its " +
                   wall_basis_,
               cpu_bound_);
    };
    cpu("cpu_time", r_.cpu_time, "of CPU time");
    cpu("sampling_blocked", r_.sampling_blocked, "of CPU time with the sampling signal blocked");
    // The CPU time samples stand for: the rank's measured CPU time bounds it
    // where recorded, else its wall time x threads.
    const double of_rank = r_.cpu_time > 0 ? kCpuMargin * r_.cpu_time + kCpuSlackSeconds : 0;
    const std::string rank_bound = Num(kCpuMargin) + " x cpu_time " + Num(r_.cpu_time) + " s + " +
                                   Num(kCpuSlackSeconds) + " s = " + Num(of_rank) + " s";
    auto sum = [&](const char *table, size_t n, int column, auto seconds_of) {
      double total = 0;
      for (size_t k = 0; k < n; ++k) {
        total += seconds_of(k);
        if (r_.cpu_time > 0 && total > of_rank)
          Refuse(Row(table, k, column) + " (cpu seconds, with the rows before it)",
                 Num(total) + " s of CPU time is more than the rank's cpu_time allows", rank_bound);
        cpu(Row(table, k, column) + " (cpu seconds, with the rows before it)", total,
            "of CPU time");
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
  void CheckSamples() {
    const double hz = meta_.sampling.hz;
    if (hz <= 0)
      return;
    const bool cpu_known = r_.cpu_time > 0;
    const double cpu = cpu_known ? r_.cpu_time : wall_ * threads_;
    const double allowed = hz * (kSampleMargin * cpu + kSampleSlackSeconds);
    const std::string basis =
        "(" + Num(hz) + " Hz x " + Num(cpu) +
        (cpu_known ? " s of CPU time" : " s of wall time x threads, its CPU time not recorded") +
        ")";
    const std::string bound = Num(hz) + " Hz x (" + Num(kSampleMargin) + " x " + Num(cpu) +
                              " s + " + Num(kSampleSlackSeconds) + " s) = " + Num(allowed);
    auto samples = [&](const std::string &field, double n) {
      if (n > allowed)
        Refuse(field, Num(n) + " samples is more than the sampling rate allows " + basis, bound);
    };
    samples("samples", double(r_.samples));
    samples("samples_dropped", double(r_.samples_dropped));
    auto sum = [&](const char *table, size_t n, int column, auto samples_of) {
      double total = 0;
      for (size_t k = 0; k < n; ++k) {
        total += double(samples_of(k));
        samples(Row(table, k, column) + " (samples, with the rows before it)", total);
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
        Refuse(Row("thread_info", k, 2) + " (samples)",
               Num(double(t.samples)) + " samples is more than the sampling rate allows in " +
                   Num(own) + " s of the thread's CPU time",
               Num(most));
    }
  }

  // One thread's times: no more than the wall clock.
  void CheckThreads() {
    const std::string bound = Num(kCpuMargin) + " x (" + Num(wall_) + " s + " +
                              Num(kCpuSlackSeconds) + " s) = " + Num(thread_cpu_allowed_) + " s";
    auto one = [&](const std::string &field, double seconds, const char *what) {
      if (seconds > thread_cpu_allowed_)
        Refuse(field,
               Num(seconds) + " s " + what + " is more than one thread ran (" + wall_basis_ + ")",
               bound);
    };
    for (size_t k = 0; k < r_.thread_info.size(); ++k)
      one(Row("thread_info", k, 3) + " (CPU seconds)", r_.thread_info[k].cpu_seconds,
          "of CPU time");
    std::map<uint32_t, double> per_thread;
    for (size_t k = 0; k < r_.thread_vertices.size(); ++k) {
      const ThreadRow &t = r_.thread_vertices[k];
      one(Row("thread_vertices", k, 3) + " (cpu seconds, with thread " + std::to_string(t.thread) +
              "'s rows before it)",
          per_thread[t.thread] += t.cpu_seconds, "of CPU time");
    }
    // OpenMP rows: each is one thread at one place (constructs nest, so a
    // thread's rows may overlap in time and their sum may not be bounded).
    for (size_t k = 0; k < r_.omp.size(); ++k) {
      one(Row("omp", k, 4) + " (seconds)", r_.omp[k].seconds, "in the OpenMP runtime");
      one(Row("omp", k, 6) + " (cpu seconds)", r_.omp[k].cpu_seconds, "of CPU time");
    }
  }

  // Wall-clock time in MPI and dependence waits: each thread is in at most
  // one call at a time.
  void CheckWaits() {
    const double allowed = kWaitMargin * wall_ * threads_ + kWaitSlackSeconds;
    const std::string basis = "(" + wall_basis_ + ")";
    const std::string bound = Num(kWaitMargin) + " x " + Num(wall_) + " s x " + Num(threads_) +
                              " + " + Num(kWaitSlackSeconds) + " s = " + Num(allowed) + " s";
    double sum = 0;
    for (size_t k = 0; k < r_.mpi.size(); ++k) {
      sum += r_.mpi[k].seconds;
      if (sum > allowed)
        Refuse(Row("mpi", k, 2) + " (seconds, with the rows before it)",
               Num(sum) + " s in MPI calls is more than the rank ran " + basis, bound);
    }
    sum = 0;
    const double dep_allowed = kDepWaitMargin * wall_ * threads_ + kWaitSlackSeconds;
    for (size_t k = 0; k < r_.deps.size(); ++k) {
      sum += r_.deps[k].wait_seconds;
      if (sum > dep_allowed)
        Refuse(Row("deps", k, 7) + " (wait seconds, with the rows before it)",
               Num(sum) + " s of waiting is more than the rank ran " + basis,
               Num(kDepWaitMargin) + " x " + Num(wall_) + " s x " + Num(threads_) + " + " +
                   Num(kWaitSlackSeconds) + " s = " + Num(dep_allowed) + " s");
    }
  }

  // Calls, messages, waits, errors: at most kMaxCallsPerSecond per thread
  // over the wall time (and kCountSlackSeconds' worth).
  void CheckCounts() {
    const double allowed = kMaxCallsPerSecond * (wall_ * threads_ + kCountSlackSeconds);
    const std::string bound = Num(kMaxCallsPerSecond) + "/s x (" + Num(wall_) + " s x " +
                              Num(threads_) + " + " + Num(kCountSlackSeconds) +
                              " s) = " + Num(allowed) + ", one per " +
                              Num(1e9 / kMaxCallsPerSecond) + " ns of each thread's wall time";
    auto count = [&](const std::string &field, double n, const char *what) {
      if (n > allowed)
        Refuse(field,
               Num(n) + " " + what + " is more than the rank could make (" + wall_basis_ + ")",
               bound);
    };
    double sum = 0;
    for (size_t k = 0; k < r_.mpi.size(); ++k)
      count(Row("mpi", k, 1) + " (calls, with the rows before it)", sum += double(r_.mpi[k].calls),
            "MPI calls");
    sum = 0;
    for (size_t k = 0; k < r_.deps.size(); ++k) {
      const DepRow &d = r_.deps[k];
      count(Row("deps", k, 5) + " (count, with the rows before it)", sum += double(d.count),
            "messages and calls");
      if (!d.seqs.empty())
        count(Row("deps", k, 8) + " (message sequence ranges)", double(d.seqs.back().last),
              "messages on one channel");
    }
    sum = 0;
    for (size_t k = 0; k < r_.omp.size(); ++k)
      count(Row("omp", k, 3) + " (count, with the rows before it)", sum += double(r_.omp[k].count),
            "OpenMP constructs and waits");
    for (const auto &[name, n] : r_.errors)
      count("errors." + name, double(n), "events");
  }

  // Bytes: at most kMaxBytesPerCall for each call of the row (and one more
  // call's worth: a snapshot may read a row's bytes before its calls).
  void CheckBytes() {
    auto bytes = [&](const std::string &field, uint64_t b, uint64_t calls, const char *what) {
      const double allowed = kMaxBytesPerCall * (double(calls) + 1);
      if (double(b) > allowed)
        Refuse(field,
               Num(double(b)) + " bytes is more than " + std::to_string(calls) + " " + what +
                   " can move",
               Num(kMaxBytesPerCall) + " bytes a call x (" + std::to_string(calls) +
                   " + 1) = " + Num(allowed));
    };
    for (size_t k = 0; k < r_.mpi.size(); ++k)
      bytes(Row("mpi", k, 3) + " (bytes)", r_.mpi[k].bytes, r_.mpi[k].calls, "call(s)");
    for (size_t k = 0; k < r_.deps.size(); ++k)
      bytes(Row("deps", k, 6) + " (bytes)", r_.deps[k].bytes, r_.deps[k].count,
            "message(s) or call(s)");
  }

  const ProfileMeta &meta_;
  const RankData &r_;
  const std::string &at_;
  const WallLimit run_;
  double wall_ = 0, threads_ = 1, cpu_allowed_ = 0, thread_cpu_allowed_ = 0;
  std::string wall_basis_, cpu_bound_;
};

} // namespace

bool StartTimeSeconds(const std::string &text, double *seconds) {
  // The runtime's form, "2026-11-29T18:00:00Z" (UTC); anything else is no
  // usable start (older and hand-written files).
  int y, mo, d, h, mi, s;
  char z = 0, end = 0;
  if (text.size() != 20 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%c", &y, &mo, &d, &h, &mi, &s, &z,
                  &end) != 7 ||
      z != 'Z' || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 ||
      h < 0 || mi < 0 || s < 0)
    return false;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  *seconds = double(timegm(&tm));
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
