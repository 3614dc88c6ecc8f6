// --comm-layer: code the program communicates through, named by the user.
// A library that moves data with plain loads and stores on memory another
// process writes (bale's conveyors over SHMEM symmetric memory, a mailbox in
// an MPI shared-memory window) waits in its own polling loops, which no
// wrapper times: the samples there look like computation that grows with
// the rank count, and they outrank the work the ranks wait for.
#include "detect/detect_stages.h"
#include "report/report_common.h"
#include "scalana/io_operations.h"

#include <fnmatch.h>

#include <map>

namespace scalana {
using report_common::BaseName;
using report_common::FileOf;
namespace detect_internal {

namespace {

std::string Dirname(const std::string &path) {
  size_t k = path.rfind('/');
  return k == std::string::npos ? std::string() : path.substr(0, k);
}

const LocalPsg *FunctionRecord(const Psg &psg, VertexId v) {
  return psg.vertex(v).function >= 0 ? &psg.FunctionOf(v) : nullptr;
}

// PATTERN names the code at FILE in FN: by the function's name (as shown or
// as linked), by its source file or any trailing part of the file's path
// ("convey/*" matches ../../convey/putport.c), or by the shared object it
// was built into ("libconvey.so*").
bool Matches(const std::string &pattern, const std::string &file, const LocalPsg *fn) {
  auto match = [&pattern](const std::string &text) {
    return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
  };
  if (match(file))
    return true;
  for (size_t k = file.find('/'); k != std::string::npos; k = file.find('/', k + 1))
    if (match(file.substr(k + 1)))
      return true;
  return fn && (match(fn->name) || match(fn->linkage) || match(BaseName(fn->object)));
}

} // namespace

CommLayer::CommLayer(const Psg &psg, const std::vector<std::string> &patterns)
    : patterns_(patterns), counts_(patterns.size(), 0) {
  if (patterns.empty())
    return;
  const std::vector<Vertex> &vertices = psg.vertices();
  pattern_of_.assign(vertices.size(), -1);
  // Vertices of one function and file match alike: decide each pair once.
  std::map<std::pair<int32_t, std::string>, int32_t> decided;
  for (size_t v = 0; v < vertices.size(); ++v) {
    const LocalPsg *fn = FunctionRecord(psg, VertexId(v));
    const std::string file = FileOf(psg, VertexId(v));
    auto [it, fresh] = decided.try_emplace({vertices[v].function, file}, -1);
    if (fresh)
      for (size_t k = 0; k < patterns.size() && it->second < 0; ++k)
        if (Matches(patterns[k], file, fn))
          it->second = int32_t(k);
    pattern_of_[v] = it->second;
    if (it->second >= 0)
      ++counts_[size_t(it->second)];
  }
}

bool CommLayer::Contains(VertexId v) const {
  return v >= 0 && size_t(v) < pattern_of_.size() && pattern_of_[size_t(v)] >= 0;
}

const std::string &CommLayer::PatternOf(VertexId v) const {
  static const std::string none;
  return Contains(v) ? patterns_[size_t(pattern_of_[size_t(v)])] : none;
}

std::vector<std::pair<std::string, size_t>> CommLayer::Counts() const {
  std::vector<std::pair<std::string, size_t>> out;
  for (size_t k = 0; k < patterns_.size(); ++k)
    out.push_back({patterns_[k], counts_[k]});
  return out;
}

} // namespace detect_internal

std::string CommLayerHint(const Psg &psg, const std::vector<RootCause> &causes) {
  using namespace detect_internal;
  const RootCause *first = nullptr;
  // An I/O call's time is the device's, never polling.
  for (const RootCause &rc : causes)
    if (!rc.communication && !rc.io) {
      first = &rc;
      break;
    }
  // Polling grows on every rank that waits; an imbalance is abnormal on one.
  if (!first || !first->non_scalable || first->abnormal)
    return {};
  const Vertex &x = psg.vertex(first->vertex);
  const std::string file = FileOf(psg, first->vertex);
  bool communicates = false;
  for (size_t v = 0; v < psg.vertices().size() && !communicates; ++v)
    communicates = psg.vertices()[v].kind == VertexKind::Mpi &&
                   !IsPosixIoOperation(psg.vertices()[v].label) && FileOf(psg, VertexId(v)) == file;
  if (file.empty() || !communicates)
    return {};
  // A directory of its own (a library's sources) names the layer; beside
  // main's file, only the function does.
  const std::string dir = Dirname(file), main_dir = Dirname(FileOf(psg, psg.root()));
  const LocalPsg *fn = FunctionRecord(psg, first->vertex);
  std::string pattern = !dir.empty() && dir != main_dir ? BaseName(dir) + "/*" : fn ? fn->name : "";
  if (pattern.empty())
    return {};
  return "the first computation cause (" + file + ":" + std::to_string(x.loc.line) +
         (fn ? ", " + fn->name : std::string()) +
         ") grows with the rank count on every rank rather than on one, in a file that makes "
         "MPI or SHMEM calls too. If it is code the program communicates through, waiting by "
         "polling memory other ranks write (a conveyor, a mailbox), name it with --comm-layer '" +
         pattern + "': its time then counts as waiting, and what the ranks waited for is named";
}

} // namespace scalana
