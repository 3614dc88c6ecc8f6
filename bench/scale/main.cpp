// `ninja bench-scale`: the detector on a 3-D halo program at 1,024 to
// 1,048,576 ranks, from profile files written by the real format-3 encoder.
//
// The template is a real profile of halo3d.c at 32 ranks (built with
// scalana-cc, run under `scalana prof`, written by the runtime's collective
// writer): its contexts, frames and binary.
// For each size N, runs at N/4 and N ranks are generated from it group by
// group (generate.h): 26 neighbours a rank in a grid periodic in x and y but
// not z, collectives on per-plane sub-communicators and the world, vertex
// sets that differ between ranks, and three ranks slow in the loop marked
// ROOT CAUSE. Each pair is then analysed in a child process, as `scalana
// detect` does it (LoadRuns' steps: read one group, resolve its frames, fold
// it into the PPG), with the child's peak memory from wait4.
//
// usage: bench_scale --bin DIR --work DIR [--sizes 1024,16384,...] [--keep]
// --keep writes the runs, keeps them (WORK/npN) and analyses nothing: inputs
// for timing `scalana detect` itself, e.g. sharded under mpirun.
#include "generate.h"

#include "detect/detect.h"
#include "frames.h"
#include "ppg/ppg_build.h"
#include "report/report.h"
#include "report/report_common.h"
#include "scalana/profile_v3.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace scalana;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Shell(const std::string &cmd) {
  if (std::system(cmd.c_str()) != 0)
    throw Error("failed: " + cmd);
}

// The child: read, build, detect, report; one line of figures.
void Analyse(const std::string &binary, const std::vector<std::string> &dirs,
             const bench::Layout &layout) {
  double t_read = 0, t_ppg = 0, t0 = Now();
  Psg psg = Psg::LoadFromObjects(binary, {}, PsgOptions{});
  FrameResolver frames(psg, binary);
  std::vector<scalana::Run> runs;
  for (const std::string &dir : dirs) {
    RunBuilder builder(psg, dir);
    double mark = Now();
    ReadProfileGroups(dir, [&](Profile &&part) {
      double a = Now();
      t_read += a - mark;
      frames.ResolveProfile(part);
      builder.Add(part);
      mark = Now();
      t_ppg += mark - a;
    });
    double a = Now();
    runs.push_back(builder.Finish());
    t_ppg += Now() - a;
  }
  double t_load = Now() - t0 - t_read - t_ppg; // the PSG and debug information
  t0 = Now();
  DetectOptions o;
  DetectResult res = Detect(psg, runs, o);
  double t_detect = Now() - t0;
  t0 = Now();
  ReportInput in{psg, runs, res, o, binary, {}};
  std::ostringstream text, json, html;
  WriteTextReport(in, text);
  WriteJsonReport(in, json);
  WriteHtmlReport(in, html);
  double t_report = Now() - t0;
  bool first = false;
  if (!res.root_causes.empty()) {
    const RootCause &rc = res.root_causes[0];
    bool rank_ok = false;
    for (int c : layout.culprits)
      rank_ok |= rc.culprit_rank == c;
    first = rank_ok && report_common::FunctionName(psg, rc.vertex) == "Source";
  }
  std::printf("%7.2f %7.2f %7.2f %8.2f %8.2f %8.0f %8.0f %8.0f  %s\n", t_load, t_read, t_ppg,
              t_detect, t_report, text.str().size() / 1024.0, json.str().size() / 1024.0,
              html.str().size() / 1024.0, first ? "first" : "NOT FIRST");
  std::fflush(stdout);
}

void RemoveRun(const std::string &dir) {
  std::remove((dir + "/" + container::kFileName).c_str());
  rmdir(dir.c_str());
}

} // namespace

int main(int argc, char **argv) {
  std::string bin, work;
  std::vector<int> sizes{1024, 16384, 131072, 1048576};
  uint32_t group = 128;
  bool keep = false;
  for (int a = 1; a < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--keep") {
      keep = true;
      --a;
      continue;
    }
    if (a + 1 >= argc)
      break;
    std::string v = argv[a + 1];
    if (k == "--bin")
      bin = v;
    else if (k == "--work")
      work = v;
    else if (k == "--group")
      group = uint32_t(std::atoi(v.c_str()));
    else if (k == "--sizes") {
      sizes.clear();
      for (size_t p = 0; p < v.size();) {
        size_t q = v.find(',', p);
        sizes.push_back(std::atoi(v.substr(p, q - p).c_str()));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    }
  }
  if (bin.empty() || work.empty()) {
    std::fprintf(stderr,
                 "usage: bench_scale --bin DIR --work DIR [--sizes N,...] [--group G] [--keep]\n");
    return 2;
  }
  try {
    mkdir(work.c_str(), 0755);
    const std::string exe = work + "/halo3d", tmpl = work + "/template";
    Shell(bin + "/scalana-cc -O2 -o " + exe + " " SCALANA_BENCH_SCALE_SRC);
    // The template: 32 real ranks (oversubscribed) write it with the runtime's
    // own collective writer; the sizes below reuse its rows.
    struct stat st;
    if (stat((tmpl + "/profile.scalana").c_str(), &st) != 0 &&
        stat((tmpl + "/profile.json.gz").c_str(), &st) != 0)
      Shell("mpirun --oversubscribe -np 32 " + bin + "/scalana prof -f -o " + tmpl + " -- " + exe +
            " > /dev/null");
    bench::Template t = bench::ReadTemplate(tmpl, exe);
    std::printf("halo3d: 26 neighbours (grid periodic in x, y), per-plane and world "
                "allreduce; 3 slow ranks; groups of %u ranks, columnar codec\n",
                group);
    std::printf("%8s %8s %7s %8s | %7s %7s %7s %8s %8s %8s %8s %8s  %s\n", "ranks", "partner",
                "write_s", "B/rank", "psg_s", "read_s", "ppg_s", "detect_s", "report_s", "text_KB",
                "json_KB", "html_KB", "cause");
    for (int n : sizes) {
      const int m = std::max(8, n / 4);
      bench::Layout big = bench::MakeLayout(n), small = bench::MakeLayout(m);
      std::string d_small = work + "/np" + std::to_string(m),
                  d_big = work + "/np" + std::to_string(n);
      mkdir(d_small.c_str(), 0755);
      mkdir(d_big.c_str(), 0755);
      double t0 = Now();
      uint64_t bytes = bench::WriteRun(t, small, m, d_small, group);
      bytes += bench::WriteRun(t, big, n, d_big, group);
      double t_write = Now() - t0;
      std::printf("%8d %8d %7.1f %8.0f | ", n, m, t_write, double(bytes) / (n + m));
      std::fflush(stdout);
      if (keep) {
        std::printf("kept %s %s\n", d_small.c_str(), d_big.c_str());
        continue;
      }
      pid_t pid = fork();
      if (pid == 0) {
        try {
          Analyse(exe, {d_small, d_big}, big);
        } catch (const std::exception &e) {
          std::printf("failed: %s\n", e.what());
          std::fflush(stdout);
          _exit(1);
        }
        _exit(0);
      }
      int status = 0;
      struct rusage ru;
      wait4(pid, &status, 0, &ru);
      std::printf("%8s peak %.0f MB (child)%s\n", "", ru.ru_maxrss / 1024.0,
                  WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  FAILED");
      std::fflush(stdout);
      RemoveRun(d_small);
      RemoveRun(d_big);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-scale: %s\n", e.what());
    return 1;
  }
  return 0;
}
