#include "frames.h"

#include "debug_reader.h"

#include "scalana/ids.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace scalana {
namespace {

std::string Basename(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A function's source file as an absolute path where the record allows.
std::string FunctionFile(const LocalPsg &f) {
  const std::string &file = f.loc.file.empty() ? f.module : f.loc.file;
  if (file.empty() || file[0] == '/' || f.comp_dir.empty())
    return file;
  return f.comp_dir + "/" + file;
}

// Debug info names a file absolutely (comp_dir joined); records may name it
// relative to their comp_dir. Same file if equal, or one ends with the other
// at a path boundary.
bool SameFile(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  const std::string &longer = a.size() > b.size() ? a : b;
  const std::string &shorter = a.size() > b.size() ? b : a;
  return !shorter.empty() && longer.size() > shorter.size() &&
         longer.compare(longer.size() - shorter.size(), shorter.size(), shorter) == 0 &&
         longer[longer.size() - shorter.size() - 1] == '/';
}

} // namespace

struct FrameResolver::Impl {
  const Psg &psg;
  // The files frames are symbolized in: the executable, then the PSG's
  // shared objects; and, for the profile being resolved, the object of each
  // of its modules (module K of the profile is objects[module_object[K]]).
  std::vector<std::string> objects;
  std::vector<int32_t> module_object{0};
  // Reads the objects' debug information in a child process: a malformed
  // object can crash LLVM's readers, never the analysis.
  std::unique_ptr<DebugReader> reader;
  // Source frames of one looked-up address, innermost first, by object and
  // address (object << 48 | address); the keys the reader could not answer.
  std::unordered_map<uint64_t, std::vector<SourceFrame>> cache;
  std::unordered_set<uint64_t> unanswered;
  std::unordered_map<std::string, std::vector<int32_t>> by_name, by_basename;
  std::unordered_map<std::string, int32_t> by_key;
  std::map<std::pair<int32_t, int32_t>, std::vector<uint64_t>> tail_paths;
  std::vector<std::vector<uint32_t>> depth; // per function: nesting depth of each vertex
  FrameStats stats;
  uint64_t lookups = 0, lookups_without_lines = 0;

  Impl(const Psg &p, const std::string &bin) : psg(p) {
    objects.push_back(bin);
    objects.insert(objects.end(), psg.libraries().begin(), psg.libraries().end());
    for (const std::string &o : objects)
      if (stats.damaged_section.empty())
        stats.damaged_section = DamagedDebugSection(o);
    reader = std::make_unique<DebugReader>(objects);
    const auto &fns = psg.functions();
    depth.resize(fns.size());
    for (size_t i = 0; i < fns.size(); ++i) {
      const LocalPsg &f = fns[i];
      // Keys of internal functions are "<module>:<name>"; debug info names
      // them by <name> alone.
      std::string name = f.key;
      if (f.linkage == "internal" && !f.module.empty() && name.rfind(f.module + ":", 0) == 0)
        name = name.substr(f.module.size() + 1);
      by_name[name].push_back(int32_t(i));
      by_key.emplace(f.key, int32_t(i));
      by_basename[Basename(FunctionFile(f))].push_back(int32_t(i));
      auto &d = depth[i];
      d.assign(f.vertices.size(), 0);
      for (size_t v = 1; v < f.vertices.size(); ++v)
        // Bounded walk: a malformed record with a parent cycle ends too.
        for (int32_t p = f.vertices[v].parent;
             p > 0 && size_t(p) < f.vertices.size() && d[v] < f.vertices.size();
             p = f.vertices[size_t(p)].parent)
          ++d[v];
    }
  }

  // The PSG function a debug-info frame is in. Physical frames are named by
  // the symbol table (the PSG key, less an internal function's module
  // prefix); inlined frames only by their short source name (`step`,
  // `operator()`, a Fortran `foo`), which may equal another function's key.
  // So a name counts when the file agrees; otherwise the function whose
  // lines hold the frame's line in that file, the innermost one, decides.
  int32_t FindFunction(const std::string &name, const std::string &file, uint32_t line) const {
    const auto &fns = psg.functions();
    int32_t by_lines = FunctionHoldingLine(file, line);
    auto it = by_name.find(name);
    if (it == by_name.end())
      return by_lines;
    for (int32_t f : it->second)
      if (file.empty() || SameFile(FunctionFile(fns[size_t(f)]), file))
        return f;
    return by_lines >= 0 ? by_lines : it->second[0];
  }

  int32_t FunctionHoldingLine(const std::string &file, uint32_t line) const {
    if (line == 0 || file.empty())
      return -1;
    auto bt = by_basename.find(Basename(file));
    if (bt == by_basename.end())
      return -1;
    const auto &fns = psg.functions();
    int32_t best = -1;
    uint32_t best_span = UINT32_MAX;
    for (int32_t f : bt->second) {
      const LocalPsg &fn = fns[size_t(f)];
      if (fn.loc.line > line || fn.loc.end_line < line || !SameFile(FunctionFile(fn), file))
        continue;
      uint32_t span = fn.loc.end_line - fn.loc.line;
      if (span < best_span) {
        best = f;
        best_span = span;
      }
    }
    return best;
  }

  static uint64_t KeyOf(uint32_t object, uint64_t address) {
    return uint64_t(object) << kFrameModuleShift | address;
  }

  // Looks up every (object, address) not yet known in one exchange with
  // the reader: its answers stream back while it reads.
  void Fetch(const std::vector<std::pair<uint32_t, uint64_t>> &wanted) {
    std::vector<std::pair<uint32_t, uint64_t>> fresh;
    std::unordered_set<uint64_t> asked;
    for (const auto &w : wanted) {
      uint64_t key = KeyOf(w.first, w.second);
      if (!cache.count(key) && asked.insert(key).second)
        fresh.push_back(w);
    }
    if (fresh.empty())
      return;
    bool failed_before = reader->failed();
    uint64_t unanswered_before = reader->unanswered();
    std::vector<std::vector<DebugFrame>> found = reader->Lookup(fresh);
    // The reader failed in this exchange: the last unanswered() -
    // unanswered_before lookups have no answer.
    size_t first_unanswered = fresh.size() - size_t(reader->unanswered() - unanswered_before);
    if (failed_before)
      first_unanswered = 0;
    for (size_t i = 0; i < fresh.size(); ++i) {
      uint64_t key = KeyOf(fresh[i].first, fresh[i].second);
      std::vector<SourceFrame> out;
      ++lookups;
      if (i >= first_unanswered) {
        unanswered.insert(key);
      } else {
        for (DebugFrame &d : found[i]) {
          SourceFrame s;
          s.name = std::move(d.name);
          s.file = std::move(d.file);
          s.line = d.line;
          s.column = d.column;
          s.function = FindFunction(s.name, s.file, s.line);
          out.push_back(std::move(s));
        }
        if (!out.empty() && out[0].line == 0)
          ++lookups_without_lines;
        if (fresh[i].first == 0) {
          ++stats.executable_lookups;
          stats.executable_unnamed += Unnamed(out);
        }
      }
      cache.emplace(key, std::move(out));
    }
  }

  // The debug information knew nothing of the address: no function, no line.
  static bool Unnamed(const std::vector<SourceFrame> &frames) {
    for (const SourceFrame &f : frames)
      if (!f.name.empty() || f.line != 0)
        return false;
    return true;
  }

  const std::vector<SourceFrame> &Lookup(uint32_t object, uint64_t address) {
    uint64_t key = KeyOf(object, address);
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
    Fetch({{object, address}});
    return cache.at(key);
  }

  uint64_t RawId(int32_t f, size_t v) const {
    const LocalPsg &fn = psg.functions()[size_t(f)];
    return scalana_vertex_id(fn.hash, fn.vertices[v].local);
  }

  // The call or MPI vertex of a call instruction at (line, column) in F.
  // CALLEE, when known, is the function the next frame is in. Columns decide
  // between calls on one line; without a column match, a lone candidate or
  // one calling CALLEE is taken.
  // OP, when known, is the MPI or SHMEM operation the wrapper saw called
  // there: it tells apart the calls of a macro that expands to several on
  // one line and column.
  int32_t MatchCall(const SourceFrame &s, int32_t callee, const std::string &op = {}) const {
    const LocalPsg &fn = psg.functions()[size_t(s.function)];
    const std::string *callee_key = callee >= 0 ? &psg.functions()[size_t(callee)].key : nullptr;
    int32_t best = -1, candidates = 0;
    int best_score = -1;
    for (size_t v = 0; v < fn.vertices.size(); ++v) {
      const LocalVertex &x = fn.vertices[v];
      if ((x.kind != VertexKind::Call && x.kind != VertexKind::Mpi) || x.loc.line != s.line)
        continue;
      ++candidates;
      int score = 0;
      if (s.column && x.loc.column == s.column)
        score += 2;
      if (callee_key && x.kind == VertexKind::Call && x.callee == *callee_key)
        score += 4;
      if (!op.empty() && x.kind == VertexKind::Mpi && x.mpi_op == op)
        score += 8;
      if (score > best_score) {
        best = int32_t(v);
        best_score = score;
      }
    }
    if (best >= 0 && best_score == 0 && candidates > 1)
      return -1; // several calls on the line and nothing to tell them apart
    return best;
  }

  // For a call the line tables place nowhere (line 0: the compiler merged
  // the calls of both arms of an `if` into one instruction, or made the
  // call up), the vertex of S's function that WANTED accepts: the only one,
  // else the first of several (*SEVERAL set); -1 when there is none.
  template <typename Wanted>
  int32_t VertexOfMergedCall(const SourceFrame &s, Wanted wanted, bool *several) const {
    const LocalPsg &fn = psg.functions()[size_t(s.function)];
    int32_t first = -1;
    *several = false;
    for (size_t v = 0; v < fn.vertices.size(); ++v) {
      if (!wanted(fn.vertices[v]))
        continue;
      if (first >= 0) {
        *several = true;
        break;
      }
      first = int32_t(v);
    }
    return first;
  }
  // ... the MPI vertex of operation OP;
  int32_t MpiVertexOfOp(const SourceFrame &s, const std::string &op, bool *several) const {
    return VertexOfMergedCall(
        s, [&](const LocalVertex &x) { return x.kind == VertexKind::Mpi && x.mpi_op == op; },
        several);
  }
  // ... the call of CALLEE (Zeus-MP's avisc_d calls bvalv2 in both arms of
  // an `if`; bale's porter_push calls porter_try_send twice).
  int32_t CallOfCallee(const SourceFrame &s, int32_t callee, bool *several) const {
    const std::string &key = psg.functions()[size_t(callee)].key;
    return VertexOfMergedCall(
        s,
        [&](const LocalVertex &x) {
          return x.kind == VertexKind::Call && !x.indirect && x.callee == key;
        },
        several);
  }

  // Whether function F's lines (in its file) hold frame S.
  bool Holds(int32_t f, const SourceFrame &s) const {
    const LocalPsg &fn = psg.functions()[size_t(f)];
    return s.line >= fn.loc.line && s.line <= fn.loc.end_line &&
           (s.file.empty() || SameFile(FunctionFile(fn), s.file));
  }

  int32_t CalleeOf(int32_t f, size_t v) const {
    const LocalVertex &x = psg.functions()[size_t(f)].vertices[v];
    if (x.kind != VertexKind::Call || x.indirect)
      return -1;
    auto it = by_key.find(x.callee);
    return it == by_key.end() ? -1 : it->second;
  }

  // Call sites leading from FROM to TO through direct calls, shortest first:
  // the frames of calls the compiler made into jumps (tail calls) are not on
  // the stack, so the chain between two frames is restored from the PSG.
  // Empty when TO is not reached within a few calls.
  const std::vector<uint64_t> &TailPath(int32_t from, int32_t to) {
    auto [it, fresh] = tail_paths.try_emplace({from, to});
    if (!fresh)
      return it->second;
    constexpr size_t kMaxDepth = 4;
    struct Step {
      int32_t fn, prev;
      uint64_t id;
    };
    std::vector<Step> steps{{from, -1, 0}};
    std::vector<uint8_t> seen(psg.functions().size(), 0);
    seen[size_t(from)] = 1;
    for (size_t level = 0, begin = 0; level < kMaxDepth; ++level) {
      size_t end = steps.size();
      for (size_t k = begin; k < end; ++k) {
        const LocalPsg &fn = psg.functions()[size_t(steps[k].fn)];
        for (size_t v = 0; v < fn.vertices.size(); ++v) {
          int32_t callee = CalleeOf(steps[k].fn, v);
          if (callee < 0 || seen[size_t(callee)])
            continue;
          seen[size_t(callee)] = 1;
          steps.push_back({callee, int32_t(k), RawId(steps[k].fn, v)});
          if (callee != to)
            continue;
          std::vector<uint64_t> path;
          for (int32_t j = int32_t(steps.size()) - 1; steps[size_t(j)].prev >= 0;
               j = steps[size_t(j)].prev)
            path.push_back(steps[size_t(j)].id);
          it->second.assign(path.rbegin(), path.rend());
          return it->second;
        }
      }
      begin = end;
    }
    return it->second;
  }

  // The innermost loop or branch of F whose lines hold LINE; the function
  // vertex when none does.
  size_t Innermost(const SourceFrame &s) const {
    const LocalPsg &fn = psg.functions()[size_t(s.function)];
    size_t best = 0;
    for (size_t v = 1; v < fn.vertices.size(); ++v) {
      const LocalVertex &x = fn.vertices[v];
      if ((x.kind != VertexKind::Loop && x.kind != VertexKind::Branch) || x.loc.line > s.line ||
          x.loc.end_line < s.line)
        continue;
      if (best == 0 || depth[size_t(s.function)][v] > depth[size_t(s.function)][best])
        best = v;
    }
    return best;
  }
};

namespace {
// A call whose callee has a PSG record, yet no frame of that callee is on the
// stack: the callee jumped (a tail call) into a library. Where the callee is
// a thin wrapper, one call or MPI call and nothing else (`void exchange() {
// MPI_Allreduce(...); }`), possibly several deep, that chain is what runs:
// its ids follow the call site. A callee with more calls ends in the call
// of OP, the operation the wrapper saw, when it has one: bale's
// lgp_atomic_add checks its PE against shmem_n_pes() twice, then jumps to
// shmem_long_atomic_add, whose waits otherwise stayed on the call site as
// computation. Otherwise the call site is repeated and the time stays
// there, as for a callee without a record.
std::vector<uint64_t> TailChain(const FrameResolver::Impl &m, int32_t f, size_t v, uint64_t call_id,
                                const std::string &op) {
  std::vector<uint64_t> chain;
  for (int32_t fn = m.CalleeOf(f, v); fn >= 0 && chain.size() < 4;) {
    const LocalPsg &callee = m.psg.functions()[size_t(fn)];
    int64_t only = -1, of_op = -1;
    for (size_t k = 1; k < callee.vertices.size(); ++k) {
      const LocalVertex &x = callee.vertices[k];
      if (x.kind == VertexKind::Mpi && !op.empty() && x.mpi_op == op && of_op == -1)
        of_op = int64_t(k);
      if (x.kind != VertexKind::Call && x.kind != VertexKind::Mpi)
        continue;
      only = only == -1 ? int64_t(k) : -2;
    }
    if (only == -2 && of_op >= 0) {
      chain.push_back(m.RawId(fn, size_t(of_op)));
      return chain;
    }
    if (only < 0)
      break;
    chain.push_back(m.RawId(fn, size_t(only)));
    if (callee.vertices[size_t(only)].kind == VertexKind::Mpi)
      return chain;
    fn = m.CalleeOf(fn, size_t(only));
  }
  return {call_id};
}
} // namespace

namespace {
// Re-indexes ROWS through REMAP and sums, with ADD, the rows that now share
// a key: recorded contexts that map to one PSG context become one row. In
// place, ordered by key, the rows of one key added in their order: a stable
// sort, not a map, because a node per row (and the copy of its sequence
// ranges or counters) made the allocator the costliest part of reading a
// million ranks.
template <typename Row, typename KeyOf, typename Add>
void MergeRows(std::vector<Row> &rows, const std::vector<uint32_t> &remap, KeyOf key_of, Add add) {
  for (Row &row : rows)
    row.ctx = remap.at(row.ctx);
  auto before = [&](const Row &a, const Row &b) { return key_of(a) < key_of(b); };
  if (!std::is_sorted(rows.begin(), rows.end(), before))
    std::stable_sort(rows.begin(), rows.end(), before);
  size_t out = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (out > 0 && !before(rows[out - 1], rows[i])) { // sorted: equal keys
      add(rows[out - 1], rows[i]);
      continue;
    }
    if (out != i)
      rows[out] = std::move(rows[i]);
    ++out;
  }
  rows.resize(out);
}
} // namespace

FrameResolver::FrameResolver(const Psg &psg, const std::string &binary)
    : impl_(std::make_unique<Impl>(psg, binary)) {}
FrameResolver::~FrameResolver() = default;

const FrameStats &FrameResolver::stats() const { return impl_->stats; }

std::string DebugReaderWarning(const FrameStats &s, const std::string &binary) {
  if (s.debug_reader_failure.empty())
    return {};
  const std::string &object = s.debug_reader_object.empty() ? binary : s.debug_reader_object;
  return object + ": its debug information could not be read (the reader " +
         s.debug_reader_failure +
         "; the file may be corrupt): " + std::to_string(s.unplaced_frames) + " frame(s) and " +
         std::to_string(s.unplaced_contexts) +
         " recorded context(s) could not be fully placed: their samples and MPI time "
         "stay on the frames that could be read, or outside the program";
}

namespace {
// The object and address a recorded frame is looked up at; false for the
// truncation mark and frames of modules the PSG was not loaded with.
bool WhereToLook(const FrameResolver::Impl &m, uint64_t f, uint32_t *object, uint64_t *address) {
  if (f == kFramesTruncated)
    return false;
  uint64_t offset = f & kFrameOffsetMask;
  // A return address points after its call; the call itself is one byte
  // before (the line tables' row for the call instruction).
  *address = (f & kFrameExact) || offset == 0 ? offset : offset - 1;
  uint32_t module = FrameModule(f);
  if (module >= m.module_object.size() || m.module_object[module] < 0)
    return false;
  *object = uint32_t(m.module_object[module]);
  return true;
}
} // namespace

namespace {
// How far before an instruction of line 0 its line is looked for: a few
// instructions (spills and reloads come in runs of one to three).
constexpr uint64_t kLineZeroLookBack = 64;

// Gives an interrupted instruction that the line tables place on line 0 the
// line of the nearest instruction before it in the same function. Clang
// emits line 0 for code of no one statement: the spill before a call in a
// loop and the reload its return lands on. Such a sample fits no loop, so
// it went to the function's vertex, i.e. to its caller's call site: in a
// loop calling a small function every iteration, two thirds of the loop's
// samples. The instruction before it is the statement it serves.
void FillLineZero(FrameResolver::Impl &m, const std::vector<Context> &contexts) {
  using Impl = FrameResolver::Impl;
  std::vector<std::pair<uint32_t, uint64_t>> leaves, wanted;
  std::unordered_set<uint64_t> seen;
  for (const Context &c : contexts) {
    uint32_t object = 0;
    uint64_t address = 0;
    if (c.empty() || !(c.back() & kFrameExact) || !WhereToLook(m, c.back(), &object, &address))
      continue;
    uint64_t key = Impl::KeyOf(object, address);
    auto it = m.cache.find(key);
    if (it == m.cache.end() || it->second.empty() || it->second[0].line != 0 ||
        !seen.insert(key).second)
      continue;
    leaves.emplace_back(object, address);
    for (uint64_t k = 1; k <= kLineZeroLookBack && k <= address; ++k)
      if (!m.cache.count(Impl::KeyOf(object, address - k)))
        wanted.emplace_back(object, address - k);
  }
  if (leaves.empty())
    return;
  m.Fetch(wanted);
  // Those lookups are no frames of the profile: a reader that failed on
  // them leaves no frame unplaced.
  for (const auto &w : wanted)
    m.unanswered.erase(Impl::KeyOf(w.first, w.second));
  for (const auto &[object, address] : leaves) {
    std::vector<SourceFrame> &frames = m.cache[Impl::KeyOf(object, address)];
    for (uint64_t k = 1; k <= kLineZeroLookBack && k <= address; ++k) {
      auto it = m.cache.find(Impl::KeyOf(object, address - k));
      if (it == m.cache.end() || it->second.empty() || it->second.back().name != frames.back().name)
        break; // another function, or no debug information: nothing to borrow
      const SourceFrame &before = it->second[0];
      if (it->second.size() != frames.size() || before.name != frames[0].name || before.line == 0)
        continue;
      frames[0].line = before.line;
      frames[0].column = before.column;
      frames[0].file = before.file;
      frames[0].function = m.FindFunction(frames[0].name, frames[0].file, frames[0].line);
      ++m.stats.line_zero_filled;
      break;
    }
  }
}
} // namespace

std::vector<SourceFrame> FrameResolver::Symbolize(const Context &frames) {
  std::vector<SourceFrame> out;
  for (uint64_t f : frames) {
    uint32_t object = 0;
    uint64_t address = 0;
    if (!WhereToLook(*impl_, f, &object, &address)) {
      // A module the PSG was not loaded with: its frames cannot be read.
      if (f != kFramesTruncated)
        ++impl_->stats.frames_of_unknown_modules;
      continue;
    }
    const std::vector<SourceFrame> &inl = impl_->Lookup(object, address);
    for (size_t i = inl.size(); i-- > 0;)
      out.push_back(inl[i]);
  }
  return out;
}

Context FrameResolver::ToPsgContext(const Context &frames, const std::string &mpi_op) {
  Impl &m = *impl_;
  std::vector<SourceFrame> all = Symbolize(frames);
  // Functions are settled outermost first: a frame reached through a call
  // vertex whose callee's lines hold it is that callee. Names cannot do it
  // for inlined template instances (every forall<Policy, lambda> shares the
  // template's lines, and debug info names each just `forall<...>`); the
  // call site can.
  int32_t expected = -1;
  for (SourceFrame &s : all) {
    if (expected >= 0 && m.Holds(expected, s))
      s.function = expected;
    expected = -1;
    if (s.function < 0)
      continue;
    int32_t v = m.MatchCall(s, -1);
    if (v >= 0)
      expected = m.CalleeOf(s.function, size_t(v));
  }
  // Only the interrupted instruction itself is exact, and only if no library
  // code lies inside it; every other kept frame is a call.
  bool exact = !frames.empty() && (frames.back() & kFrameExact) != 0 && !all.empty() &&
               all.back().function >= 0;
  bool truncated = !frames.empty() && frames.front() == kFramesTruncated;
  std::vector<SourceFrame> kept;
  for (SourceFrame &s : all) {
    if (s.function >= 0)
      kept.push_back(std::move(s));
    else if (!s.name.empty())
      ++m.stats.unrecorded_functions[s.name];
  }
  // flang's generated main is not in the graph: its call of the program
  // unit, at the `end program` line, is no call site of the program.
  while (kept.size() > 1 && m.psg.IsGeneratedEntry(kept.front().function))
    kept.erase(kept.begin());
  if (kept.empty())
    return {};
  Context ids;
  if (!truncated) {
    for (size_t i = 0; i + 1 < kept.size(); ++i) {
      int32_t v = m.MatchCall(kept[i], kept[i + 1].function);
      if (v < 0 && kept[i].line == 0) {
        // A merged call: the next frame's function says which call it is.
        bool several = false;
        v = m.CallOfCallee(kept[i], kept[i + 1].function, &several);
        if (v >= 0)
          ++(several ? m.stats.call_sites_merged : m.stats.call_sites_by_callee);
      }
      if (v < 0) {
        // A call into code without a vertex that called back into the
        // program (qsort; an OpenMP barrier running a task): the PSG
        // resolver restarts there.
        continue;
      }
      ids.push_back(m.RawId(kept[i].function, size_t(v)));
      int32_t callee = m.CalleeOf(kept[i].function, size_t(v));
      if (callee >= 0 && callee != kept[i + 1].function) {
        const std::vector<uint64_t> &path = m.TailPath(callee, kept[i + 1].function);
        ids.insert(ids.end(), path.begin(), path.end());
      }
    }
  }
  const SourceFrame &leaf = kept.back();
  if (!exact) {
    // The innermost program frame is a call: into MPI (its vertex), into a
    // callee without a PSG (the call site twice, docs/formats.md), or into
    // library code that is part of the surrounding computation.
    int32_t v = m.MatchCall(leaf, -1, mpi_op);
    const LocalPsg &fn = m.psg.functions()[size_t(leaf.function)];
    if (!mpi_op.empty() && (v < 0 || (fn.vertices[size_t(v)].kind != VertexKind::Call &&
                                      fn.vertices[size_t(v)].mpi_op != mpi_op))) {
      // The wrapper saw OP called here, but the line has no such call: the
      // time is communication all the same, on the function's call of OP.
      bool several = false;
      if (int32_t w = m.MpiVertexOfOp(leaf, mpi_op, &several); w >= 0) {
        v = w;
        ++(several ? m.stats.mpi_sites_merged : m.stats.mpi_sites_by_operation);
      } else {
        ++m.stats.mpi_sites_without_vertex;
      }
    }
    if (v >= 0) {
      uint64_t id = m.RawId(leaf.function, size_t(v));
      ids.push_back(id);
      if (m.psg.functions()[size_t(leaf.function)].vertices[size_t(v)].kind == VertexKind::Call) {
        std::vector<uint64_t> chain = TailChain(m, leaf.function, size_t(v), id, mpi_op);
        ids.insert(ids.end(), chain.begin(), chain.end());
      }
      return ids;
    }
  }
  ids.push_back(m.RawId(leaf.function, m.Innermost(leaf)));
  return ids;
}

void FrameResolver::ResolveProfile(Profile &profile) {
  Impl &m = *impl_;
  m.module_object.assign(1, 0);
  for (const ModuleInfo &mod : profile.meta.modules) {
    auto at = std::find(m.objects.begin() + 1, m.objects.end(), mod.path);
    m.module_object.push_back(at == m.objects.end() ? -1 : int32_t(at - m.objects.begin()));
  }
  // The operation of each context of an MPI row: the wrapper's word on
  // which call it is, where the line tables say nothing or too little.
  std::vector<const std::string *> op_of(profile.contexts.size(), nullptr);
  for (const RankData &r : profile.ranks)
    for (const MpiRow &row : r.mpi)
      if (!row.op.empty() && row.ctx < op_of.size() && !op_of[row.ctx])
        op_of[row.ctx] = &row.op;
  // Every frame's lines in one exchange with the reader; contexts with a
  // frame it could not answer (it died on the binary) are counted.
  std::vector<std::pair<uint32_t, uint64_t>> wanted;
  for (const Context &c : profile.contexts)
    for (uint64_t f : c) {
      uint32_t object = 0;
      uint64_t address = 0;
      if (WhereToLook(m, f, &object, &address))
        wanted.emplace_back(object, address);
    }
  m.Fetch(wanted);
  FillLineZero(m, profile.contexts);
  if (!m.unanswered.empty())
    for (const Context &c : profile.contexts)
      for (uint64_t f : c) {
        uint32_t object = 0;
        uint64_t address = 0;
        if (WhereToLook(m, f, &object, &address) &&
            m.unanswered.count(Impl::KeyOf(object, address))) {
          ++m.stats.unplaced_contexts;
          break;
        }
      }
  // Contexts with frames of the program none of which the debug
  // information names: their samples exist but belong nowhere it can tell.
  std::vector<uint8_t> unnamed(profile.contexts.size(), 0);
  for (size_t i = 0; i < profile.contexts.size(); ++i) {
    bool any = false, named = false;
    for (uint64_t f : profile.contexts[i]) {
      uint32_t object = 0;
      uint64_t address = 0;
      if (!WhereToLook(m, f, &object, &address))
        continue;
      uint64_t key = Impl::KeyOf(object, address);
      any = true;
      named = named || m.unanswered.count(key) || !Impl::Unnamed(m.cache[key]);
    }
    unnamed[i] = any && !named;
    m.stats.unnamed_contexts += unnamed[i];
  }
  for (const RankData &r : profile.ranks)
    for (const VertexRow &row : r.vertices)
      if (row.ctx < unnamed.size() && unnamed[row.ctx])
        m.stats.unnamed_samples += row.samples;
  std::map<Context, uint32_t> index;
  std::vector<Context> mapped;
  std::vector<uint32_t> remap(profile.contexts.size());
  static const std::string kNoOp;
  for (size_t i = 0; i < profile.contexts.size(); ++i) {
    Context c = unnamed[i] ? UnplacedContext()
                           : ToPsgContext(profile.contexts[i], op_of[i] ? *op_of[i] : kNoOp);
    auto [it, fresh] = index.emplace(std::move(c), uint32_t(mapped.size()));
    if (fresh)
      mapped.push_back(it->first);
    remap[i] = it->second;
  }
  m.stats.no_line_tables = m.lookups > 0 && m.lookups_without_lines == m.lookups;
  m.stats.unplaced_frames = m.unanswered.size();
  m.stats.debug_reader_failure = m.reader->failure();
  m.stats.debug_reader_object = m.reader->failed_object();
  profile.contexts = std::move(mapped);
  for (RankData &r : profile.ranks) {
    MergeRows(
        r.vertices, remap, [](const VertexRow &x) { return x.ctx; },
        [](VertexRow &to, const VertexRow &x) {
          to.samples += x.samples;
          to.cpu_seconds += x.cpu_seconds;
          if (to.counters.size() < x.counters.size())
            to.counters.resize(x.counters.size());
          for (size_t k = 0; k < x.counters.size(); ++k)
            to.counters[k] += x.counters[k];
        });
    MergeRows(
        r.mpi, remap, [](const MpiRow &x) { return x.ctx; },
        [](MpiRow &to, const MpiRow &x) {
          to.calls += x.calls;
          to.seconds += x.seconds;
          to.bytes += x.bytes;
          if (to.op.empty())
            to.op = x.op;
        });
    MergeRows(
        r.deps, remap,
        [](const DepRow &x) { return std::make_tuple(x.ctx, x.kind, x.peer, x.tag, x.comm); },
        [](DepRow &to, const DepRow &x) {
          to.count += x.count;
          to.bytes += x.bytes;
          to.wait_seconds += x.wait_seconds;
          MergeSeqRanges(to.seqs, x.seqs);
        });
    MergeRows(
        r.thread_vertices, remap,
        [](const ThreadRow &x) { return std::make_pair(x.ctx, x.thread); },
        [](ThreadRow &to, const ThreadRow &x) {
          to.samples += x.samples;
          to.cpu_seconds += x.cpu_seconds;
        });
    MergeRows(
        r.omp, remap, [](const OmpRow &x) { return std::make_tuple(x.ctx, x.thread, x.kind); },
        [](OmpRow &to, const OmpRow &x) {
          to.count += x.count;
          to.seconds += x.seconds;
          to.samples += x.samples;
          to.cpu_seconds += x.cpu_seconds;
          to.iterations += x.iterations;
        });
    MergeRows(
        r.off_cpu, remap, [](const OffCpuRow &x) { return std::make_pair(x.ctx, x.thread); },
        [](OffCpuRow &to, const OffCpuRow &x) {
          to.switches += x.switches;
          to.blocked += x.blocked;
          to.run_delay += x.run_delay;
        });
  }
}

} // namespace scalana
