// `scalana show RUN_DIR [--rank R] [--tables auto|each|summary] [--format
// text|json]`: prints what a run recorded: metadata, per-vertex samples, MPI
// calls and communication dependence, with contexts resolved to PSG vertices
// and source lines when the binary is still readable. Past
// kShowEachRankUpTo ranks the text folds the per-rank tables over the ranks
// (rank_summary.h): 32,768 ranks printed one by one made 3.9 million lines.
#include "rank_summary.h"
#include "scalana/echo.h"
#include "scalana/out_of_memory.h"
#include "scalana/profile.h"
#include "scalana/sampling_checks.h"
#include "scalana/text_escape.h"
#include "time_lines.h"
#ifdef SCALANA_HAVE_PSG
#include "../cli_options.h"
#include "binary_structure.h"
#include "frames.h"
#include "psg.h"
#include "report/names.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace scalana {
namespace {

struct Resolved {
  bool ok = false;
  // Frames of the program its debug information names nothing of (a
  // stripped binary): no vertex, and no raw ids worth showing.
  bool unplaced = false;
  std::string kind, location, function, label;
  std::vector<std::string> call_lines; // file:line of each call site, outermost first
  // The vertex's calling context as reports print it: "main", "parallel
  // region (a.c:27)", "spin (a.c:30)". Unlike call_lines it does not depend
  // on which frames the context had: every thread's samples in one vertex
  // share it.
  std::vector<std::string> call_path;
};

// Every string printed in the text form that came from the profile, the
// binary or the command line: its control characters escaped, so none of it
// can drive the terminal or forge a line.
std::string Safe(const std::string &s) { return EscapeControls(s); }

std::string RawContext(const Context &c) {
  if (c.empty())
    return "(outside the program: library code only, e.g. an MPI progress thread)";
  std::string s;
  for (size_t i = 0; i < c.size(); ++i)
    s += (i ? ">" : "") + FormatId(c[i]);
  return s;
}

// Maps P's recorded frames to PSG contexts (in place) and resolves each to
// its vertex, or explains in *note why it cannot; without the binary the
// contexts stay frames and are shown raw.
std::vector<Resolved> ResolveContexts(Profile &p, std::string *note) {
  std::vector<Resolved> out(p.contexts.size());
#ifdef SCALANA_HAVE_PSG
  try {
    std::vector<std::string> libraries;
    for (const ModuleInfo &mod : p.meta.modules)
      libraries.push_back(mod.path);
    Psg psg = LoadProgramStructure(p.meta.binary, libraries);
    if (!p.meta.psg_id.empty() && psg.psg_id() != p.meta.psg_id)
      *note = "warning: " + p.meta.binary + " changed since the run (PSG " + psg.psg_id() +
              ", profile " + p.meta.psg_id + "); locations may be wrong";
    FrameResolver frames(psg, p.meta.binary);
    frames.ResolveProfile(p);
    std::vector<std::string> warnings =
        DebugInfoWarnings(frames.stats(), p.meta.binary, p.meta.build_id);
    if (std::string w = DebugReaderWarning(frames.stats(), p.meta.binary); !w.empty())
      warnings.insert(warnings.begin(), w);
    for (const std::string &w : warnings)
      *note += std::string(note->empty() ? "warning: " : "; warning: ") + w;
    out.assign(p.contexts.size(), Resolved{});
    size_t unresolved = 0;
    for (size_t i = 0; i < p.contexts.size(); ++i) {
      if (p.contexts[i].empty())
        continue;
      if (IsUnplacedContext(p.contexts[i])) {
        out[i].unplaced = true;
        continue;
      }
      VertexId v = psg.Resolve(p.contexts[i]);
      if (v == kNoVertex) {
        ++unresolved;
        continue;
      }
      const Vertex &vx = psg.vertex(v);
      Resolved &r = out[i];
      r.ok = true;
      r.kind = std::string(ToString(vx.kind));
      r.location = vx.loc.file + ":" + std::to_string(vx.loc.line);
      // Demangled as the reports name it: an OpenMP region's body read
      // "_ZL28CalcFBHourglassForceForElems…omp_outlined_debug__" (LULESH).
      // An outlined body is the region of the function it came from, not
      // its clone: "Hydro::doCycle(double) (parallel region)", where the
      // symbol reads "... [clone .omp_outlined_debug__.15]" (PENNANT).
      r.function = ReadableName(psg.FunctionOf(v).name);
      if (psg.FunctionOf(v).outlined != OmpRegion::None)
        r.function =
            r.function.substr(0, r.function.find(" [clone .")) + " (" + psg.FunctionName(v) + ")";
      r.label = vx.label;
      for (const CallSite &c : psg.CallSites(v)) {
        std::string file = c.loc.file.substr(c.loc.file.rfind('/') + 1);
        const std::string fn = ReadableName(c.function);
        r.call_path.push_back(
            c.loc.line == 0 ? fn : fn + " (" + file + ":" + std::to_string(c.loc.line) + ")");
      }
      // A context ending in its call site twice names the call vertex itself.
      for (size_t k = 0; k + 1 < p.contexts[i].size(); ++k) {
        Context prefix(p.contexts[i].begin(), p.contexts[i].begin() + long(k) + 1);
        prefix.push_back(p.contexts[i][k]);
        VertexId call = psg.Resolve(prefix);
        r.call_lines.push_back(call == kNoVertex ? "?"
                                                 : psg.vertex(call).loc.file + ":" +
                                                       std::to_string(psg.vertex(call).loc.line));
      }
    }
    if (unresolved)
      *note += std::string(note->empty() ? "" : "; ") + std::to_string(unresolved) +
               " contexts do not fit the binary's PSG (shown as raw ids)";
  } catch (const Error &e) {
    *note = std::string("raw ids: ") + e.what();
  }
#else
  *note = "raw ids: this build of ScalAna has no PSG reader";
#endif
  return out;
}

std::string Describe(const Profile &p, const std::vector<Resolved> &res, uint32_t ctx) {
  const Resolved &r = res[ctx];
  if (r.unplaced)
    return "unplaced (no symbols)";
  if (!r.ok)
    return RawContext(p.contexts[ctx]);
  std::string s = r.kind;
  if (!r.label.empty())
    s += " " + r.label;
  s += " " + r.location + " in " + r.function;
  for (auto it = r.call_lines.rbegin(); it != r.call_lines.rend(); ++it)
    s += " <- " + *it;
  return s;
}

std::string Members(const Profile &p, uint32_t comm) {
  if (comm >= p.comms.size())
    return "?";
  const auto &m = p.comms[comm];
  std::string s = "{";
  size_t i = 0;
  for (auto it = m.begin(); it != m.end() && i < 8; ++it, ++i)
    s += (i ? "," : "") + std::to_string(*it);
  if (m.size() > 8)
    s += ",... " + std::to_string(m.size()) + " ranks";
  return s + "}";
}

void PrintText(Profile p, const std::string &dir, std::optional<int> only_rank,
               const std::string &tables) {
  std::string note;
  std::vector<Resolved> res = ResolveContexts(p, &note);
  const ProfileMeta &m = p.meta;
  std::printf("run        %s (%s)\n", Safe(dir).c_str(),
              m.complete ? "complete" : "incomplete: ended before MPI_Finalize");
  std::printf("binary     %s\n           build-id %s, psg %s\n", Safe(m.binary).c_str(),
              m.build_id.empty() ? "-" : Safe(m.build_id).c_str(),
              m.psg_id.empty() ? "-" : Safe(m.psg_id).c_str());
  std::printf("ranks      %d (%zu with data), started %s, wall %.3f s\n", m.world_size,
              p.ranks.size(), Safe(m.start_time).c_str(), m.wall_time);
  // How the ranks of an incomplete run ended, and why some left nothing.
  for (const std::string &line : DescribeRankEnds(p))
    std::printf("ended      %s\n", Safe(line).c_str());
  if (!m.run_id.empty())
    std::printf("run id     %s\n", Safe(m.run_id).c_str());
  std::printf("mpi        %s\n", Safe(m.mpi_library).c_str());
  std::string counters;
  for (const auto &c : m.sampling.counters)
    counters += (counters.empty() ? "" : ",") + Safe(c);
  // Obtained as detect counts it: samples over the threads' CPU clocks.
  std::printf("sampling   %s at %g Hz asked, %.0f obtained (%s time), counters: %s\n",
              Safe(m.sampling.source).c_str(), m.sampling.hz, ObtainedRate(p),
              Safe(m.sampling.clock).c_str(), counters.empty() ? "none" : counters.c_str());
  if (!m.sampling.note.empty())
    std::printf("           %s\n", Safe(m.sampling.note).c_str());
  for (const std::string &w : SamplingWarnings(p))
    std::printf("           warning: %s\n", Safe(w).c_str());
  if (!note.empty())
    std::printf("vertices   %s\n", Safe(note).c_str());

  const bool summary = !only_rank && (tables == "summary" ||
                                      (tables == "auto" && p.ranks.size() > kShowEachRankUpTo));
  if (summary) {
    PrintRankSummary(p, [&](uint32_t ctx) { return Describe(p, res, ctx); });
    return;
  }
  for (const RankData &r : p.ranks) {
    if (only_rank && r.rank != *only_rank)
      continue;
    std::printf("\n== rank %d  host %s pid %lld threads %d wall %.3f s samples %llu dropped %llu\n",
                r.rank, Safe(r.host).c_str(), (long long)r.pid, r.threads, r.wall_time,
                (unsigned long long)r.samples, (unsigned long long)r.samples_dropped);
    PrintRankTime(r);
    if (!r.errors.empty()) {
      std::printf("   errors:");
      for (const auto &[what, n] : r.errors)
        std::printf(" %s=%llu", Safe(what).c_str(), (unsigned long long)n);
      std::printf("\n");
    }
    // Each table largest first, ties by the printed line: an order of what
    // the rows say, not of context numbers (which a format-3 group
    // renumbers), so both formats of one run print alike.
    using Line = std::pair<double, std::string>;
    auto print_sorted = [](std::vector<Line> lines) {
      std::sort(lines.begin(), lines.end(), [](const Line &a, const Line &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      for (const Line &l : lines)
        std::printf("%s\n", l.second.c_str());
    };
    char buf[256];
    std::printf("   %-9s %9s %s%s\n", "samples", "cpu s",
                counters.empty() ? "" : (counters + "  ").c_str(), "vertex");
    std::vector<Line> lines;
    for (const VertexRow &v : r.vertices) {
      std::string c;
      for (double x : v.counters) { // up to 2^64: no cast to an integer type
        char num[32];
        std::snprintf(num, sizeof num, "%.0f ", x);
        c += num;
      }
      std::snprintf(buf, sizeof buf, "   %-9llu %9.3f ", (unsigned long long)v.samples,
                    v.cpu_seconds);
      lines.push_back({double(v.samples), buf + c + Safe(Describe(p, res, v.ctx))});
    }
    print_sorted(std::move(lines));
    if (!r.mpi.empty()) {
      std::printf("   %-9s %9s %12s  %s\n", "mpi calls", "seconds", "bytes", "vertex");
      lines.clear();
      for (const MpiRow &x : r.mpi) {
        std::snprintf(buf, sizeof buf, "   %-9llu %9.4f %12llu  ", (unsigned long long)x.calls,
                      x.seconds, (unsigned long long)x.bytes);
        lines.push_back({x.seconds, buf + Safe(Describe(p, res, x.ctx))});
      }
      print_sorted(std::move(lines));
    }
    if (!r.off_cpu.empty()) {
      // Where threads came back to a CPU after leaving it outside calls and
      // waits (docs/runtime.md, "Time off the CPU").
      std::printf("   %-9s %9s %9s %6s  %s\n", "off-CPU", "blocked s", "waiting s", "thread",
                  "vertex");
      lines.clear();
      for (const OffCpuRow &o : r.off_cpu) {
        std::snprintf(buf, sizeof buf, "   %-9llu %9.4f %9.4f %6u  ",
                      (unsigned long long)o.switches, o.blocked, o.run_delay, o.thread);
        lines.push_back({o.blocked + o.run_delay, buf + Safe(Describe(p, res, o.ctx))});
      }
      print_sorted(std::move(lines));
    }
    if (!r.deps.empty()) {
      std::printf("   %-5s %5s %5s %-14s %7s %10s %9s  %s\n", "dep", "peer", "tag", "comm", "count",
                  "bytes", "wait s", "vertex");
      lines.clear();
      for (const DepRow &d : r.deps) {
        std::snprintf(buf, sizeof buf, "   %-5s %5d %5d %-14s %7llu %10llu %9.4f  ",
                      ToString(d.kind), d.peer, d.tag, Members(p, d.comm).c_str(),
                      (unsigned long long)d.count, (unsigned long long)d.bytes, d.wait_seconds);
        lines.push_back({d.wait_seconds, buf + Safe(Describe(p, res, d.ctx))});
      }
      print_sorted(std::move(lines));
    }
  }
}

void PrintJson(Profile p, std::optional<int> only_rank) {
  std::string note;
  std::vector<Resolved> res = ResolveContexts(p, &note);
  std::vector<std::string> warnings = SamplingWarnings(p);
  if (only_rank) {
    std::vector<RankData> kept;
    for (RankData &r : p.ranks)
      if (r.rank == *only_rank)
        kept.push_back(std::move(r));
    p.ranks = std::move(kept);
  }
  nlohmann::json j = nlohmann::json::parse(ProfileToJson(p));
  nlohmann::json resolved = nlohmann::json::array();
  for (const Resolved &r : res)
    resolved.push_back(r.ok ? nlohmann::json{{"kind", r.kind},
                                             {"location", r.location},
                                             {"function", r.function},
                                             {"label", r.label},
                                             {"call_lines", r.call_lines},
                                             {"call_path", r.call_path}}
                            : nlohmann::json(nullptr));
  j["resolved"] = resolved;
  if (!note.empty())
    j["resolve_note"] = note;
  j["sampling_warnings"] = warnings;
  // ASCII only (\uXXXX escapes): the same document, nothing a terminal acts on.
  std::printf("%s\n", j.dump(1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
}

} // namespace
} // namespace scalana

int main(int argc, char **argv) {
  scalana::ExitCleanlyOnUncaughtExceptions("scalana show");
  CLI::App app{"Print the data of a run directory written by `scalana prof`.", "scalana show"};
  std::string dir, format = "text";
  std::optional<int> rank;
  app.add_option("RUN_DIR", dir, "run directory (or a profile .json.gz file)")->required();
  app.add_option("--rank", rank, "show only this rank")
      ->check(scalana::cli::Range(0, scalana::kMaxWorldSize - 1, true));
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
  std::string tables = "auto";
  app.add_option("--tables", tables,
                 "text: each rank's tables, or a summary over the ranks (min, median, max and "
                 "the ranks that stand out); auto: each up to " +
                     std::to_string(scalana::kShowEachRankUpTo) + " ranks (JSON has every rank)")
      ->check(CLI::IsMember({"auto", "each", "summary"}));
  if (int status = scalana::cli::Parse(app, argc, argv, "scalana show"); status >= 0)
    return status;
  try {
    scalana::Profile p = scalana::ReadProfile(dir);
    if (rank) {
      bool found = false;
      for (const auto &r : p.ranks)
        found |= r.rank == *rank;
      if (!found) {
        std::fprintf(stderr, "scalana show: %s has no data for rank %d (ranks 0..%d)\n",
                     scalana::EchoValue(dir).c_str(), *rank, p.meta.world_size - 1);
        return 1;
      }
    }
    if (format == "json")
      scalana::PrintJson(std::move(p), rank);
    else
      scalana::PrintText(std::move(p), dir, rank, tables);
  } catch (const scalana::Error &e) { // it may quote the file: escaped
    std::fprintf(stderr, "scalana show: %s\n", scalana::cli::Echoed(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "scalana show: out of memory; the run is too large for this machine's "
                         "memory (or its ulimit -v)\n");
    return 1;
  } catch (const std::exception &e) { // a bug, not bad input: still no abort
    std::fprintf(stderr, "scalana show: internal error: %s\n",
                 scalana::cli::Echoed(e.what()).c_str());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "scalana show: internal error: unknown exception\n");
    return 1;
  }
  return 0;
}
