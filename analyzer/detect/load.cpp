#include "detect/load.h"

#include "detect/ppg_build.h"
#include "detect/profile_parts.h"
#include "frames.h"

#include "scalana/elf_section.h"
#include "scalana/psg_format.h"
#include "scalana/regular_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>

namespace scalana {

void CheckSamePsg(const std::vector<Profile> &profiles, const std::vector<std::string> &labels) {
  for (size_t i = 1; i < profiles.size(); ++i) {
    if (profiles[i].meta.psg_id == profiles[0].meta.psg_id)
      continue;
    throw Error(labels[i] + ": profiled binary has PSG " + profiles[i].meta.psg_id + " but " +
                labels[0] + " has PSG " + profiles[0].meta.psg_id +
                "; these runs come from different programs or builds. Profile every run with "
                "the same binary");
  }
}

void CheckProfileMatchesBinary(const Profile &profile, const std::string &label,
                               const std::string &binary, const std::string &binary_build_id,
                               const std::string &binary_psg_id) {
  if (!profile.meta.build_id.empty() && !binary_build_id.empty() &&
      profile.meta.build_id != binary_build_id)
    throw Error(label + ": run was made with build " + profile.meta.build_id + " but " + binary +
                " is build " + binary_build_id +
                ": it is not the binary that was profiled (rebuilt since, or another program). "
                "Pass the profiled binary "
                "with --binary PATH, or profile again");
  if (!profile.meta.psg_id.empty() && profile.meta.psg_id != binary_psg_id)
    throw Error(label + ": run was made with PSG " + profile.meta.psg_id + " but " + binary +
                " holds PSG " + binary_psg_id +
                ": it is not the binary that was profiled (rebuilt since, or another program). "
                "Pass the profiled binary "
                "with --binary PATH, or profile again");
}

namespace {
// The functions most often met on stacks without a PSG record: what the
// contexts that do not fit ran in.
std::string UnrecordedSummary(const FrameStats &fs) {
  std::vector<std::pair<uint64_t, std::string>> top;
  for (const auto &[name, n] : fs.unrecorded_functions)
    top.emplace_back(n, name);
  std::sort(top.rbegin(), top.rend());
  std::string s = "stacks ran through functions with no PSG record (compiled without the "
                  "wrappers, or library code linked in): ";
  for (size_t i = 0; i < top.size() && i < 3; ++i)
    s += (i ? ", " : "") + top[i].second;
  return s;
}
} // namespace

namespace {
// A shared object with a PSG as the runs recorded it, and the first run
// that loaded it.
struct RecordedModule {
  ModuleInfo info;
  std::string run;
};

// The shared objects PROFILES (labelled by LABELS) loaded, each once, in the
// order first met. Throws Error when two runs loaded different builds of one.
std::vector<RecordedModule> SharedObjectsOf(const std::vector<Profile> &profiles,
                                            const std::vector<std::string> &labels) {
  std::vector<RecordedModule> out;
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < profiles.size(); ++i)
    for (const ModuleInfo &mod : profiles[i].meta.modules) {
      auto [it, fresh] = seen.try_emplace(mod.path, out.size());
      if (fresh) {
        out.push_back({mod, labels[i]});
        continue;
      }
      const RecordedModule &first = out[it->second];
      if (first.info.build_id != mod.build_id || first.info.psg_id != mod.psg_id)
        throw Error(labels[i] + ": shared object " + mod.path + " was build " + mod.build_id +
                    " (PSG " + mod.psg_id + ") but in " + first.run + " build " +
                    first.info.build_id + " (PSG " + first.info.psg_id +
                    "): it was rebuilt between the runs. Profile every run with the same build");
    }
  return out;
}

// Each shared object as the PSG read it must be the build the runs loaded.
void CheckSharedObjects(const std::vector<RecordedModule> &recorded, const Psg &psg) {
  for (size_t i = 0; i < recorded.size(); ++i) {
    const ModuleInfo &was = recorded[i].info, &now = psg.library_ids().at(i);
    if ((!was.build_id.empty() && now.build_id != was.build_id) || now.psg_id != was.psg_id)
      throw Error(recorded[i].run + ": the run loaded " + was.path + " with build " + was.build_id +
                  " and PSG " + was.psg_id + ", but the file is now build " + now.build_id +
                  " with PSG " + now.psg_id +
                  ": it was rebuilt since. Profile "
                  "again");
  }
}
} // namespace

// Each run is read one part (group of ranks) at a time and every part is
// folded into its run's PPG as it comes, so no whole-run profile is held. The
// PSG is loaded when the first part arrives, with the shared objects that
// part recorded; frames of one that only later parts loaded are left out
// (counted in the frames warning).
LoadedRuns LoadRuns(const std::vector<std::string> &run_dirs, const LoadOptions &opts,
                    const ProgressFn &progress) {
  if (run_dirs.empty())
    throw Error("scalana detect: no run directories given; usage: scalana detect RUN_DIR...");
  for (const std::string &dir : run_dirs) {
    struct stat st;
    bool found = stat(dir.c_str(), &st) == 0;
    if (!found || !S_ISDIR(st.st_mode))
      throw Error(dir + ": not a readable directory (" +
                  (found ? FileKind(st.st_mode) : OpenErrorText(errno)) +
                  "); give the run directories written by 'scalana prof -o DIR'");
  }
  LoadedRuns out;
  std::unique_ptr<FrameResolver> frames;
  std::string binary_build_id;
  std::vector<RecordedModule> recorded;
  std::map<std::string, size_t> recorded_at;
  Profile first_meta; // the first run's meta: what the others must match
  std::vector<std::string> first_label{run_dirs[0]};

  auto load_psg = [&](const Profile &part, const std::string &dir) {
    out.binary = opts.binary.empty() ? part.meta.binary : opts.binary;
    if (out.binary.empty())
      throw Error(dir + ": profile does not name its binary; pass it with --binary PATH");
    struct stat st;
    if (stat(out.binary.c_str(), &st) != 0 && errno == ENOENT)
      throw Error(out.binary + (opts.binary.empty()
                                    ? ": the profiled binary no longer exists (recorded in " + dir +
                                          "); if it moved, pass --binary PATH"
                                    : ": no such file (given with --binary)"));
    std::string elf_error;
    auto elf = ReadElf(out.binary, kPsgSection, &elf_error);
    if (!elf)
      throw Error(elf_error);
    binary_build_id = elf->build_id;
    std::vector<std::string> libraries;
    for (const RecordedModule &m : recorded)
      libraries.push_back(m.info.path);
    if (progress)
      progress("loading the PSG of " + out.binary +
               (libraries.empty() ? ""
                                  : " and " + std::to_string(libraries.size()) +
                                        " shared object(s) built with the wrappers"));
    PsgOptions po;
    po.max_loop_depth = opts.max_loop_depth;
    out.psg = Psg::LoadFromObjects(out.binary, libraries, po);
    CheckSharedObjects(recorded, out.psg);
    for (const std::string &w : out.psg.warnings())
      out.warnings.push_back(out.binary + ": " + w);
    frames = std::make_unique<FrameResolver>(out.psg, out.binary);
  };

  for (size_t i = 0; i < run_dirs.size(); ++i) {
    const std::string &dir = run_dirs[i];
    if (progress)
      progress("reading " + dir);
    std::unique_ptr<RunBuilder> builder;
    uint64_t abandoned = 0;
    bool complete = true;
    ForEachProfilePart(dir, [&](Profile &&part) { // throws Error naming the file
      if (!frames) {
        first_meta.meta = part.meta;
        first_meta.meta.modules.clear();
      } else {
        CheckSamePsg({first_meta, part}, {run_dirs[0], dir});
      }
      // Shared objects: one build of each across the runs.
      Profile modules;
      modules.meta.modules = part.meta.modules;
      for (RecordedModule &m : SharedObjectsOf({modules}, {dir})) {
        auto [it, fresh] = recorded_at.try_emplace(m.info.path, recorded.size());
        if (fresh && !frames) {
          recorded.push_back(m);
          continue;
        }
        if (fresh)
          continue; // loaded by no part before the PSG: its frames are left out
        const RecordedModule &was = recorded[it->second];
        if (was.info.build_id != m.info.build_id || was.info.psg_id != m.info.psg_id)
          throw Error(dir + ": shared object " + m.info.path + " was build " + m.info.build_id +
                      " (PSG " + m.info.psg_id + ") but in " + was.run + " build " +
                      was.info.build_id + " (PSG " + was.info.psg_id +
                      "): it was rebuilt between the runs. Profile every run with the same "
                      "build");
      }
      if (!frames)
        load_psg(part, dir);
      CheckProfileMatchesBinary(part, dir, out.binary, binary_build_id, out.psg.psg_id());
      // A longjmp out of an MPI error handler left calls the wrappers closed
      // late (docs/runtime.md, "MPI wrappers").
      for (const RankData &r : part.ranks)
        if (auto it = r.errors.find("mpi_call_abandoned"); it != r.errors.end())
          abandoned += it->second;
      complete = complete && part.meta.complete;
      frames->ResolveProfile(part);
      if (!builder) {
        if (progress)
          progress("building the PPG of " + dir);
        builder = std::make_unique<RunBuilder>(out.psg, dir, progress);
      }
      builder->Add(part);
    });
    if (!builder)
      throw Error(dir + ": the profile holds no part");
    if (abandoned)
      out.warnings.push_back(dir + ": " + std::to_string(abandoned) +
                             " MPI call(s) were left by a longjmp (mpi_call_abandoned: an error "
                             "handler that jumps out of the call); each counts as one call of "
                             "unknown duration, and what followed as the program's own");
    out.runs.push_back(builder->Finish());
    if (!complete)
      out.warnings.push_back(dir + ": run ended before MPI_Finalize (per-rank fallback files)");
  }
  const FrameStats &fs = frames->stats();
  for (size_t i = 0; i < out.runs.size(); ++i)
    if (out.runs[i].unresolved_contexts && !fs.unrecorded_functions.empty())
      out.runs[i].warnings.push_back(run_dirs[i] + ": " + UnrecordedSummary(fs));
  if (std::string w = DebugReaderWarning(fs, out.binary); !w.empty())
    out.warnings.push_back(w);
  // How many frames were placed otherwise than their line tables say, and how.
  auto placed = [&](uint64_t n, const char *how) {
    if (n)
      out.warnings.push_back(std::to_string(n) + how);
  };
  placed(fs.mpi_sites_merged,
         " MPI call site(s) have no line (the compiler merged several calls of one operation "
         "into one instruction); their time is on the first call of that operation in their "
         "function");
  placed(fs.call_sites_merged,
         " call site(s) have no line (the compiler merged several calls of one function into one "
         "instruction); what runs below them is under the first call of that function in their "
         "caller");
  placed(fs.mpi_sites_without_vertex,
         " MPI call site(s) lie where the PSG has no call of their operation; their time is on "
         "the vertex the line tables name");
  placed(fs.frames_of_unknown_modules,
         " frame(s) in shared objects the PSG was not loaded with were left out");
  if (fs.no_line_tables)
    out.warnings.push_back(out.binary +
                           ": no line tables, so samples cannot be placed on loops and call "
                           "sites; rebuild with scalana-cc/-cxx/-fc (they add -gline-tables-only)");
  return out;
}

} // namespace scalana
