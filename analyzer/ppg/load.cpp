#include "ppg/load.h"

#include "binary_structure.h"
#include "frames.h"
#include "ppg/ppg_build.h"
#include "ppg/profile_parts.h"
#include "ppg/run_identity.h"
#include "ppg/shard_bytes.h"

#include "scalana/elf_section.h"
#include "scalana/profile_v3.h"
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

namespace {
// What a process of a sharded analysis counted while placing frames, added
// to process 0's: the counts are per context resolved, so they add up to
// what one process resolving every part counts.
void SendFrameStats(ShardLink &link, const FrameStats &fs) {
  shard::Out o;
  o.Put(uint64_t(fs.unrecorded_functions.size()));
  for (const auto &[name, n] : fs.unrecorded_functions) {
    o.Str(name);
    o.Put(n);
  }
  for (uint64_t n :
       {fs.frames_of_unknown_modules, fs.line_zero_filled, fs.mpi_sites_by_operation,
        fs.mpi_sites_merged, fs.mpi_sites_without_vertex, fs.call_sites_by_callee,
        fs.call_sites_merged, fs.unplaced_frames, fs.unplaced_contexts, fs.unnamed_contexts,
        fs.unnamed_samples, fs.executable_lookups, fs.executable_unnamed})
    o.Put(n);
  o.Put(uint8_t(fs.no_line_tables));
  o.Str(fs.debug_reader_failure);
  o.Str(fs.debug_reader_object);
  o.Str(fs.damaged_section);
  link.SendString(0, o.b);
}

void AddFrameStats(FrameStats &fs, ShardLink &link, int from) {
  std::string bytes = link.RecvString(from);
  shard::In in(bytes);
  for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
    std::string name = in.Str();
    fs.unrecorded_functions[name] += in.Get<uint64_t>();
  }
  for (uint64_t *n :
       {&fs.frames_of_unknown_modules, &fs.line_zero_filled, &fs.mpi_sites_by_operation,
        &fs.mpi_sites_merged, &fs.mpi_sites_without_vertex, &fs.call_sites_by_callee,
        &fs.call_sites_merged, &fs.unplaced_frames, &fs.unplaced_contexts, &fs.unnamed_contexts,
        &fs.unnamed_samples, &fs.executable_lookups, &fs.executable_unnamed})
    *n += in.Get<uint64_t>();
  fs.no_line_tables = in.Get<uint8_t>() || fs.no_line_tables;
  std::string failure = in.Str(), object = in.Str(), damaged = in.Str();
  if (fs.debug_reader_failure.empty())
    fs.debug_reader_failure = failure, fs.debug_reader_object = object;
  if (fs.damaged_section.empty())
    fs.damaged_section = damaged;
}
} // namespace

// Each run is read one part (group of ranks) at a time and every part is
// folded into its run's PPG as it comes, so no whole-run profile is held. The
// PSG is loaded when the first part arrives, with the shared objects that
// part recorded; frames of one that only later parts loaded are left out
// (counted in the frames warning).
void CheckRunDirs(const std::vector<std::string> &run_dirs) {
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
  CheckDistinctRunDirs(run_dirs);
}

LoadedRuns LoadRuns(const std::vector<std::string> &run_dirs, const LoadOptions &opts,
                    const ProgressFn &progress) {
  CheckRunDirs(run_dirs);
  ShardLink *link = opts.shards && opts.shards->size() > 1 ? opts.shards : nullptr;
  const int me = link ? link->rank() : 0;
  LoadedRuns out;
  out.reporter = me == 0;
  std::unique_ptr<FrameResolver> frames;
  std::string binary_build_id;
  std::vector<RecordedModule> recorded;
  std::map<std::string, size_t> recorded_at;
  Profile first_meta; // the first run's meta: what the others must match
  std::vector<std::string> first_label{run_dirs[0]};
  RunIdsSeen run_ids; // process 0's: it reads the first part of every run

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
    // Built without the wrappers: the structure the binary's DWARF and
    // machine code hold (analyzer/structure/), said in the report.
    if (progress && !elf->has_section && libraries.empty())
      progress("no PSG in " + out.binary + ": recovering its structure from the binary");
    out.psg = LoadProgramStructure(out.binary, libraries, po);
    CheckSharedObjects(recorded, out.psg);
    for (const std::string &w : out.psg.warnings())
      out.warnings.push_back(out.binary + ": " + w);
    frames = std::make_unique<FrameResolver>(out.psg, out.binary);
  };

  // The first part of the first run settles the binary, its PSG and the
  // shared objects: process 0 reads it and tells the others.
  auto share_first = [&](const Profile &part) {
    if (!link)
      return;
    shard::Out o;
    if (me == 0) {
      o.Str(part.meta.psg_id);
      o.Str(part.meta.binary);
      o.Put(uint64_t(recorded.size()));
      for (const RecordedModule &m : recorded) {
        o.Str(m.info.path);
        o.Str(m.info.build_id);
        o.Str(m.info.psg_id);
        o.Str(m.run);
      }
    }
    link->Broadcast(o.b);
    if (me == 0)
      return;
    shard::In in(o.b);
    Profile first;
    first_meta.meta.psg_id = first.meta.psg_id = in.Str();
    first.meta.binary = in.Str();
    for (uint64_t n = in.Get<uint64_t>(); n-- > 0;) {
      RecordedModule m;
      m.info.path = in.Str();
      m.info.build_id = in.Str();
      m.info.psg_id = in.Str();
      m.run = in.Str();
      recorded_at.emplace(m.info.path, recorded.size());
      recorded.push_back(std::move(m));
    }
    load_psg(first, run_dirs[0]);
  };
  if (me != 0)
    share_first(Profile{});

  for (size_t i = 0; i < run_dirs.size(); ++i) {
    const std::string &dir = run_dirs[i];
    if (progress)
      progress("reading " + dir);
    std::unique_ptr<RunBuilder> builder;
    uint64_t abandoned = 0;
    bool complete = true;
    auto each = [&](Profile &&part) { // throws Error naming the file
      if (me == 0)
        run_ids.Add(dir, i, part.meta.run_id);
      if (!frames) {
        first_meta.meta = part.meta;
        first_meta.meta.modules.clear();
      } else {
        // The metas alone: a part holds every row of its ranks.
        Profile meta_only;
        meta_only.meta = part.meta;
        CheckSamePsg({first_meta, meta_only}, {run_dirs[0], dir});
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
      if (!frames) {
        share_first(part);
        load_psg(part, dir);
      }
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
    };
    // Sharded, each process folds its share of a format-3 run's groups
    // (process 0 the first) and process 0 gathers the rest in order; other
    // runs process 0 reads alone.
    bool shared = false;
    if (link) {
      builder = std::make_unique<RunBuilder>(out.psg, dir, progress);
      shared = ReadProfileGroupShare(dir, me, link->size(), each);
    }
    if (!shared && me == 0)
      ForEachProfilePart(dir, each);
    if (shared && me != 0) {
      builder->SendTo(*link, 0);
      shard::Out o;
      o.Put(abandoned);
      o.Put(uint8_t(complete));
      link->SendString(0, o.b);
      continue;
    }
    if (shared)
      for (int from = 1; from < link->size(); ++from) {
        builder->ReceiveFrom(*link, from);
        std::string rec = link->RecvString(from);
        shard::In in(rec);
        abandoned += in.Get<uint64_t>();
        complete = in.Get<uint8_t>() && complete;
      }
    if (me != 0)
      continue;
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
  if (me != 0) {
    SendFrameStats(*link, frames->stats());
    return out;
  }
  FrameStats fs = frames->stats();
  for (int from = 1; link && from < link->size(); ++from)
    AddFrameStats(fs, *link, from);
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
  for (std::string &w : DebugInfoWarnings(fs, out.binary, binary_build_id))
    out.warnings.push_back(std::move(w));
  return out;
}

} // namespace scalana
