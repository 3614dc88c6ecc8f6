#include "rank_summary.h"

#include "scalana/rank_ranges.h"
#include "scalana/text_escape.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

namespace scalana {
namespace {

// One quantity's values on the ranks that have it; the others count 0.
struct Values {
  std::vector<std::pair<uint32_t, double>> at; // (index into Profile::ranks, value)
  double total = 0;
  void Add(uint32_t index, double v) {
    if (!at.empty() && at.back().first == index)
      at.back().second += v; // several rows of one rank (dependence rows)
    else
      at.push_back({index, v});
    total += v;
  }
};

struct Spread {
  double min = 0, median = 0, max = 0;
  int max_rank = -1;
  std::vector<int> high, low; // beyond kStandOut times the median, either way
};

Spread SpreadOf(const Profile &p, const Values &v) {
  const size_t n = p.ranks.size();
  Spread s;
  std::vector<double> sorted;
  sorted.reserve(n);
  sorted.assign(n - v.at.size(), 0.0);
  for (const auto &[i, x] : v.at)
    sorted.push_back(x);
  if (sorted.empty())
    return s;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  std::vector<uint8_t> present(n, 0);
  for (const auto &[i, x] : v.at) {
    present[i] = 1;
    if (x == s.max && s.max_rank < 0)
      s.max_rank = p.ranks[i].rank;
    if (x > s.median * kStandOut && x > s.median)
      s.high.push_back(p.ranks[i].rank);
    else if (x < s.median / kStandOut)
      s.low.push_back(p.ranks[i].rank);
  }
  if (s.median > 0)
    for (size_t i = 0; i < n; ++i)
      if (!present[i])
        s.low.push_back(p.ranks[i].rank);
  return s;
}

std::string Ranks(const std::vector<int> &ranks) {
  std::string s = RankRanges(ranks, 60);
  return s + " (" + std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank)" : " ranks)");
}

// "min 0.401  median 0.430  max 0.460 (rank 7)", with FMT for each value.
std::string Row(const Spread &s, const char *fmt) {
  char a[32], b[32], c[32], line[160];
  std::snprintf(a, sizeof a, fmt, s.min);
  std::snprintf(b, sizeof b, fmt, s.median);
  std::snprintf(c, sizeof c, fmt, s.max);
  std::snprintf(line, sizeof line, "%10s %10s %10s %-12s", a, b, c,
                s.max_rank >= 0 ? ("(rank " + std::to_string(s.max_rank) + ")").c_str() : "");
  return line;
}

// The ranks standing out, on a line of their own under a table row.
void PrintStandOut(const Spread &s) {
  if (!s.high.empty())
    std::printf("       over %.1fx the median: ranks %s\n", kStandOut, Ranks(s.high).c_str());
  if (!s.low.empty())
    std::printf("       under the median / %.1f: ranks %s\n", kStandOut, Ranks(s.low).c_str());
}

// One table: a row per key, largest total first, ties by the printed text.
template <class Key> struct Table {
  std::map<Key, Values> values;
  std::map<Key, std::string> text; // what the row prints after the figures
};

template <class Key>
void PrintTable(const Profile &p, Table<Key> &t, const char *fmt,
                const std::function<std::string(const Key &, const Values &)> &lead) {
  std::vector<std::pair<double, Key>> order;
  for (const auto &[k, v] : t.values)
    order.push_back({v.total, k});
  std::sort(order.begin(), order.end(), [&](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : t.text[a.second] < t.text[b.second];
  });
  for (const auto &[total, k] : order) {
    const Values &v = t.values[k];
    Spread s = SpreadOf(p, v);
    std::printf("   %s %s %s\n", lead(k, v).c_str(), Row(s, fmt).c_str(),
                EscapeControls(t.text[k]).c_str());
    PrintStandOut(s);
  }
}

} // namespace

void PrintRankSummary(const Profile &p, const std::function<std::string(uint32_t)> &describe) {
  const size_t n = p.ranks.size();
  std::printf("\n== %zu ranks summarised (every rank: --tables each; one rank: --rank R)\n", n);
  std::printf("   per rank over all %zu ranks, 0 where a rank has no row: min, median, max "
              "(the rank with the max); ranks standing out below a row\n",
              n);
  Values wall, samples, threads, on_cpu, run_delay;
  std::map<std::string, std::pair<uint64_t, std::vector<int>>> errors;
  for (uint32_t i = 0; i < n; ++i) {
    const RankData &r = p.ranks[i];
    wall.Add(i, r.wall_time);
    samples.Add(i, double(r.samples));
    threads.Add(i, r.threads);
    on_cpu.Add(i, r.on_cpu);
    run_delay.Add(i, r.run_delay);
    for (const auto &[what, count] : r.errors) {
      errors[what].first += count;
      errors[what].second.push_back(r.rank);
    }
  }
  std::printf("   %-10s %10s %10s %10s\n", "", "min", "median", "max");
  std::printf("   %-10s %s\n", "wall s", Row(SpreadOf(p, wall), "%.3f").c_str());
  std::printf("   %-10s %s\n", "samples", Row(SpreadOf(p, samples), "%.0f").c_str());
  std::printf("   %-10s %s\n", "threads", Row(SpreadOf(p, threads), "%.0f").c_str());
  // The kernel's account of the main thread (0 where not measured).
  std::printf("   %-10s %s\n", "on cpu s", Row(SpreadOf(p, on_cpu), "%.3f").c_str());
  std::printf("   %-10s %s\n", "run dly s", Row(SpreadOf(p, run_delay), "%.3f").c_str());
  for (const auto &[what, e] : errors)
    std::printf("   errors:    %s=%llu on ranks %s\n", EscapeControls(what).c_str(),
                (unsigned long long)e.first, Ranks(e.second).c_str());

  Table<uint32_t> cpu, mpi;
  std::map<uint32_t, uint64_t> vertex_samples, mpi_calls, mpi_bytes;
  for (uint32_t i = 0; i < n; ++i) {
    for (const VertexRow &v : p.ranks[i].vertices) {
      cpu.values[v.ctx].Add(i, v.cpu_seconds);
      vertex_samples[v.ctx] += v.samples;
    }
    for (const MpiRow &x : p.ranks[i].mpi) {
      mpi.values[x.ctx].Add(i, x.seconds);
      mpi_calls[x.ctx] += x.calls;
      mpi_bytes[x.ctx] += x.bytes;
    }
  }
  for (auto &[ctx, v] : cpu.values)
    cpu.text[ctx] = describe(ctx);
  for (auto &[ctx, v] : mpi.values)
    mpi.text[ctx] = describe(ctx);
  char buf[96];
  std::printf("   %-7s %11s %10s %10s %10s %-12s %s\n", "ranks", "samples", "min cpu s", "median",
              "max", "", "vertex");
  PrintTable<uint32_t>(p, cpu, "%.3f", [&](const uint32_t &ctx, const Values &v) {
    std::snprintf(buf, sizeof buf, "%-7zu %11llu", v.at.size(),
                  (unsigned long long)vertex_samples[ctx]);
    return std::string(buf);
  });
  if (!mpi.values.empty()) {
    std::printf("   %-7s %11s %14s %10s %10s %10s %-12s %s\n", "ranks", "calls", "bytes",
                "min s", "median", "max", "", "vertex");
    PrintTable<uint32_t>(p, mpi, "%.4f", [&](const uint32_t &ctx, const Values &v) {
      std::snprintf(buf, sizeof buf, "%-7zu %11llu %14llu", v.at.size(),
                    (unsigned long long)mpi_calls[ctx], (unsigned long long)mpi_bytes[ctx]);
      return std::string(buf);
    });
  }
  // Dependence rows by vertex and kind: the peers, tags and communicators of
  // a halo are a rank's own; their counts and waits per rank are what differ.
  using DepKey = std::pair<uint32_t, int>;
  Table<DepKey> deps;
  std::map<DepKey, uint64_t> rows, messages, bytes;
  for (uint32_t i = 0; i < n; ++i)
    for (const DepRow &d : p.ranks[i].deps) {
      DepKey k{d.ctx, int(d.kind)};
      deps.values[k].Add(i, d.wait_seconds);
      ++rows[k];
      messages[k] += d.count;
      bytes[k] += d.bytes;
    }
  if (deps.values.empty())
    return;
  for (auto &[k, v] : deps.values)
    deps.text[k] = std::string(ToString(DepKind(k.second))) + "  " + describe(k.first);
  std::printf("   %-7s %9s %11s %14s %10s %10s %10s %-12s %s\n", "ranks", "rows", "messages",
              "bytes", "min wait s", "median", "max", "", "dep  vertex");
  PrintTable<DepKey>(p, deps, "%.4f", [&](const DepKey &k, const Values &v) {
    std::snprintf(buf, sizeof buf, "%-7zu %9llu %11llu %14llu", v.at.size(),
                  (unsigned long long)rows[k], (unsigned long long)messages[k],
                  (unsigned long long)bytes[k]);
    return std::string(buf);
  });
}

} // namespace scalana
