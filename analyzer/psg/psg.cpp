// Whole-program PSG: parsing, lazy expansion, contraction, Resolve, writers.
// docs/psg.md describes the rules; docs/formats.md section 2 the records.
#include "psg.h"
#include "omp.h"

#include "scalana/text_escape.h"

#include "scalana/elf_section.h"
#include "scalana/ids.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>
#include <unordered_set>

namespace scalana {

namespace {

using json = nlohmann::json;

uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// One record's context for error messages: "scalana_psg record 2 (module a.c)".
struct RecordWhere {
  size_t index = 0;
  size_t offset = 0;
  std::string module;
  std::string Str() const {
    std::string s =
        "scalana_psg record " + std::to_string(index) + " (at byte " + std::to_string(offset);
    if (!module.empty())
      s += ", module " + module;
    return s + ")";
  }
};

[[noreturn]] void Fail(const RecordWhere &w, const std::string &what) {
  throw Error(w.Str() + ": " + what +
              "; the PSG records are corrupt or from another version: rebuild the program with "
              "scalana-cc, scalana-cxx or scalana-fc");
}

template <typename T>
T Get(const json &obj, const char *field, const T &def, const RecordWhere &w,
      const std::string &where) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null())
    return def;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Checked here: nlohmann converts -1 to 4294967295 and a float out of
    // range to an undefined value.
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    bool fits = false;
    if (it->is_number_unsigned())
      fits = it->get<uint64_t>() <= uint64_t(hi);
    else if (it->is_number_integer())
      fits = it->get<int64_t>() < 0 ? std::is_signed_v<T> && it->get<int64_t>() >= int64_t(lo)
                                    : uint64_t(it->get<int64_t>()) <= uint64_t(hi);
    else
      Fail(w, where + ": field '" + field + "' has the wrong type");
    if (!fits)
      Fail(w, where + ": field '" + field + "' is out of range");
    return it->is_number_unsigned() ? T(it->get<uint64_t>()) : T(it->get<int64_t>());
  } else {
    try {
      return it->get<T>();
    } catch (const json::exception &) {
      Fail(w, where + ": field '" + field + "' has the wrong type");
    }
  }
}

LocalPsg ParseFunction(const json &jf, const RecordWhere &w, const std::string &module,
                       const std::string &language) {
  if (!jf.is_object())
    Fail(w, "a function entry is not an object");
  LocalPsg f;
  f.key = Get<std::string>(jf, "key", "", w, "function");
  if (f.key.empty())
    Fail(w, "a function has no 'key'");
  std::string where = "function '" + f.key + "'";
  f.name = Get<std::string>(jf, "name", f.key, w, where);
  f.linkage = Get<std::string>(jf, "linkage", "external", w, where);
  f.module = module;
  f.language = language;
  std::string hash = Get<std::string>(jf, "hash", "", w, where);
  try {
    f.hash = ParseId(hash);
  } catch (const Error &) {
    Fail(w, where + ": bad hash '" + hash + "'");
  }
  uint64_t expect = scalana_function_hash(f.key.data(), f.key.size());
  if (f.hash != expect)
    Fail(w, where + ": hash " + hash + " is not the hash of its key (" + FormatId(expect) + ")");
  f.loc.file = Get<std::string>(jf, "file", module, w, where);
  f.loc.line = Get<uint32_t>(jf, "line", 0, w, where);
  f.loc.end_line = Get<uint32_t>(jf, "end_line", f.loc.line, w, where);
  // Optional (records before it have none), as are `region`,
  // `directive_line` and `worksharing` on vertices.
  f.outlined = omp::ParseRegion(Get<std::string>(jf, "outlined", "none", w, where),
                                [&](const std::string &m) { Fail(w, where + ": " + m); });
  auto vs = jf.find("vertices");
  if (vs == jf.end() || !vs->is_array() || vs->empty())
    Fail(w, where + ": no 'vertices' (vertex 0 must be the function vertex)");
  if (vs->size() > SCALANA_MAX_LOCAL_VERTICES)
    Fail(w, where + ": more than " + std::to_string(SCALANA_MAX_LOCAL_VERTICES) + " vertices");
  const size_t n = vs->size();
  f.vertices.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const json &jv = (*vs)[i];
    std::string vw = where + " vertex " + std::to_string(i);
    if (!jv.is_object())
      Fail(w, vw + ": not an object");
    LocalVertex &v = f.vertices[i];
    int64_t id = Get<int64_t>(jv, "id", -1, w, vw);
    if (id != int64_t(i))
      Fail(w, vw + ": 'id' is " + std::to_string(id) + ", expected its index");
    v.local = uint32_t(i);
    std::string kind = Get<std::string>(jv, "kind", "", w, vw);
    auto k = ParseVertexKind(kind);
    if (!k)
      Fail(w, vw + ": unknown kind '" + kind + "'");
    v.kind = *k;
    if ((i == 0) != (v.kind == VertexKind::Function))
      Fail(w, vw + (i == 0 ? ": vertex 0 must be the function vertex"
                           : ": only vertex 0 may be a function vertex"));
    int64_t parent = Get<int64_t>(jv, "parent", -1, w, vw);
    if (i == 0 && parent != -1)
      Fail(w, vw + ": the function vertex has a parent");
    if (i != 0 && (parent < 0 || parent >= int64_t(n)))
      Fail(w, vw + ": parent " + std::to_string(parent) + " out of range (" + std::to_string(n) +
                  " vertices)");
    v.parent = int32_t(parent);
    auto ch = jv.find("children");
    if (ch != jv.end() && !ch->is_null()) {
      if (!ch->is_array())
        Fail(w, vw + ": 'children' is not an array");
      for (const json &c : *ch) {
        if (!c.is_number_integer())
          Fail(w, vw + ": a child is not a vertex index (" + c.type_name() + ")");
        if (c.is_number_unsigned() ? c.get<uint64_t>() < 1 || c.get<uint64_t>() >= n
                                   : c.get<int64_t>() < 1 || c.get<int64_t>() >= int64_t(n))
          Fail(w,
               vw + ": child " + c.dump() + " out of range (" + std::to_string(n) + " vertices)");
        v.children.push_back(c.get<uint32_t>());
      }
    }
    v.arm = Get<int32_t>(jv, "arm", -1, w, vw);
    v.loc.file = Get<std::string>(jv, "file", "", w, vw);
    v.loc.line = Get<uint32_t>(jv, "line", 0, w, vw);
    v.loc.end_line = Get<uint32_t>(jv, "end_line", v.loc.line, w, vw);
    v.loc.column = Get<uint32_t>(jv, "col", 0, w, vw);
    v.loop_depth = Get<uint32_t>(jv, "depth", 0, w, vw);
    if (v.kind == VertexKind::Call) {
      v.callee = Get<std::string>(jv, "callee", "", w, vw);
      v.indirect = Get<bool>(jv, "indirect", false, w, vw);
      if (v.callee.empty() && !v.indirect)
        Fail(w, vw + ": a call has neither 'callee' nor 'indirect'");
      // Optional (records before it have none): the targets the pass saw.
      auto cs = jv.find("candidates");
      if (cs != jv.end() && !cs->is_null()) {
        if (!cs->is_array())
          Fail(w, vw + ": 'candidates' is not an array");
        for (const json &c : *cs) {
          if (!c.is_string() || c.get_ref<const std::string &>().empty())
            Fail(w, vw + ": candidate " + c.dump() + " is not a function key");
          v.candidates.push_back(c.get<std::string>());
        }
      }
      if (v.indirect) {
        v.signature = Get<std::string>(jv, "sig", "", w, vw);
        v.vtable_slot = Get<int64_t>(jv, "slot", -1, w, vw);
      }
      v.region = omp::ParseRegion(Get<std::string>(jv, "region", "none", w, vw),
                                  [&](const std::string &m) { Fail(w, vw + ": " + m); });
      if (v.region != OmpRegion::None && v.indirect)
        Fail(w, vw + ": an OpenMP construct's call names no outlined function");
      v.directive_line = Get<uint32_t>(jv, "directive_line", 0, w, vw);
    } else if (v.kind == VertexKind::Loop) {
      v.worksharing = omp::ParseLoop(Get<std::string>(jv, "worksharing", "none", w, vw),
                                     [&](const std::string &m) { Fail(w, vw + ": " + m); });
    } else if (v.kind == VertexKind::Mpi) {
      v.mpi_op = Get<std::string>(jv, "op", "", w, vw);
      if (v.mpi_op.empty())
        Fail(w, vw + ": an mpi vertex has no 'op'");
      std::string cls = Get<std::string>(jv, "class", "other", w, vw);
      auto c = ParseMpiClass(cls);
      if (!c)
        Fail(w, vw + ": unknown mpi class '" + cls + "'");
      v.mpi_class = *c;
    }
  }
  // Parent and children must describe the same tree, reachable from vertex 0.
  std::vector<int> listed(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t c : f.vertices[i].children) {
      if (f.vertices[c].parent != int32_t(i))
        Fail(w, where + " vertex " + std::to_string(i) + ": child " + std::to_string(c) +
                    " has parent " + std::to_string(f.vertices[c].parent));
      if (++listed[c] > 1)
        Fail(w, where + " vertex " + std::to_string(c) + ": listed twice as a child");
    }
  for (size_t i = 1; i < n; ++i)
    if (!listed[i])
      Fail(w, where + " vertex " + std::to_string(i) + ": not among the children of its parent " +
                  std::to_string(f.vertices[i].parent));
  // Each non-root vertex is listed once by its parent; a walk from 0 then
  // finds all of them unless some form a cycle detached from the root.
  std::vector<uint32_t> stack{0};
  size_t seen = 0;
  while (!stack.empty()) {
    uint32_t u = stack.back();
    stack.pop_back();
    if (++seen > n)
      break;
    for (uint32_t c : f.vertices[u].children)
      stack.push_back(c);
  }
  if (seen != n)
    Fail(w, where + ": vertices form a cycle detached from the function vertex");
  return f;
}

std::string BaseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A callee key as the same source names it in any TU: the key of an internal
// function is "<module>:<name>" (docs/formats.md), so a header's `static
// inline` helper called from an inline function or template has a different
// key in each TU that includes it.
std::string PortableCallee(const LocalPsg &f, const std::string &callee) {
  if (!f.module.empty() && callee.size() > f.module.size() &&
      callee.compare(0, f.module.size(), f.module) == 0 && callee[f.module.size()] == ':')
    return callee.substr(f.module.size() + 1);
  return callee;
}

// Whether F's only structure is calls of CALLEE (flang's generated main).
bool OnlyCalls(const LocalPsg &f, const std::string &callee) {
  bool calls = false;
  for (size_t i = 1; i < f.vertices.size(); ++i) {
    const LocalVertex &v = f.vertices[i];
    if (v.kind != VertexKind::Call || v.indirect || v.callee != callee)
      return false;
    calls = true;
  }
  return calls;
}

std::string Lines(const SourceLoc &l) {
  return BaseName(l.file) + ":" + std::to_string(l.line) + "-" + std::to_string(l.end_line);
}

// How two records of one linkonce/weak function differ, "" if they describe
// the same code. Source lines first: different lines are different sources
// (an ODR violation, or two unrelated functions of one name). Then the
// structure, which differs if the TUs were compiled differently. TU-local
// parts (internal callees' module prefixes, the indirect-call candidates each
// TU can see) are not differences.
std::string ShapeDifference(const LocalPsg &a, const LocalPsg &b) {
  std::vector<std::string> diffs;
  if (a.loc.line != b.loc.line || a.loc.end_line != b.loc.end_line ||
      BaseName(a.loc.file) != BaseName(b.loc.file))
    diffs.push_back("lines " + Lines(a.loc) + " and " + Lines(b.loc));
  if (a.vertices.size() != b.vertices.size()) {
    diffs.push_back(std::to_string(a.vertices.size()) + " and " +
                    std::to_string(b.vertices.size()) + " vertices");
  } else {
    for (size_t i = 0; i < a.vertices.size(); ++i) {
      const LocalVertex &x = a.vertices[i], &y = b.vertices[i];
      std::string at = "vertex " + std::to_string(i) + ": ";
      if (x.kind != y.kind)
        diffs.push_back(at + std::string(ToString(x.kind)) + " and " +
                        std::string(ToString(y.kind)));
      else if (x.parent != y.parent || x.children != y.children)
        diffs.push_back(at + "different place in the tree");
      else if (PortableCallee(a, x.callee) != PortableCallee(b, y.callee))
        diffs.push_back(at + "calls '" + x.callee + "' and '" + y.callee + "'");
      else if (x.mpi_op != y.mpi_op)
        diffs.push_back(at + x.mpi_op + " and " + y.mpi_op);
      else if (x.indirect != y.indirect)
        diffs.push_back(at + "direct and indirect call");
      else if (x.loc.line != y.loc.line)
        diffs.push_back(at + "line " + std::to_string(x.loc.line) + " and " +
                        std::to_string(y.loc.line));
      if (diffs.size() >= 3)
        break; // enough to tell what happened
    }
  }
  std::string out;
  for (const std::string &d : diffs)
    out += (out.empty() ? "" : "; ") + d;
  return out;
}

} // namespace

std::string PsgIdOf(const std::vector<uint8_t> &bytes) {
  return FormatId(scalana_fnv1a64(bytes.data(), bytes.size()));
}

std::vector<LocalPsg> ParsePsgSection(const std::vector<uint8_t> &bytes) {
  return ParsePsgSection(bytes, nullptr);
}

namespace {

// A function one TU makes reachable through indirect calls (the record's
// `targets`): its address taken (slot -1) or in a vtable slot.
struct IndirectTarget {
  std::string key, signature;
  int64_t slot = -1;
};

// The pass lists an indirect call's candidates as far as its TU shows; a
// function pointer set up in one file and called in another, or an override
// defined in another file, is missing. Every TU records what it makes
// reachable, so each call gets those of the whole program: of its type, in
// its vtable slot for a virtual call. As in the pass, past kMaxCandidates the
// list tells nothing; the TU's own list is then kept.
void AddProgramCandidates(std::vector<LocalPsg> &fns, const std::vector<IndirectTarget> &targets,
                          const std::unordered_map<std::string, size_t> &by_key) {
  constexpr size_t kMaxCandidates = 32;
  if (targets.empty())
    return;
  std::map<std::pair<std::string, int64_t>, std::vector<std::string>> by_type;
  for (const IndirectTarget &t : targets)
    // Only functions the program defines (with a record) can be a target
    // that has vertices; the key of a declaration names its definition.
    if (by_key.count(t.key))
      by_type[{t.signature, t.slot}].push_back(t.key);
  for (auto &[type, keys] : by_type) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  for (LocalPsg &f : fns)
    for (LocalVertex &v : f.vertices) {
      if (v.kind != VertexKind::Call || !v.indirect || v.signature.empty())
        continue;
      auto it = by_type.find({v.signature, v.vtable_slot});
      if (it == by_type.end())
        continue;
      std::vector<std::string> all = v.candidates;
      all.insert(all.end(), it->second.begin(), it->second.end());
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      if (all.size() <= kMaxCandidates)
        v.candidates = std::move(all);
    }
}

} // namespace

std::vector<LocalPsg> ParsePsgSection(const std::vector<uint8_t> &bytes,
                                      std::vector<std::string> *warnings) {
  return ParsePsgSections({PsgSection{"", bytes}}, warnings);
}

namespace {

// What ParsePsgSections joins over the sections, record by record.
struct JoinedRecords {
  std::vector<LocalPsg> out;
  std::vector<IndirectTarget> targets;
  std::unordered_map<std::string, size_t> by_key;
  std::unordered_map<uint64_t, size_t> by_hash;
};

void ParseRecords(const std::vector<uint8_t> &bytes, const std::string &object, JoinedRecords &j,
                  std::vector<std::string> *warnings) {
  std::vector<LocalPsg> &out = j.out;
  std::vector<IndirectTarget> &targets = j.targets;
  auto &by_key = j.by_key;
  auto &by_hash = j.by_hash;
  size_t pos = 0, index = 0;
  while (pos < bytes.size()) {
    if (bytes[pos] == 0) { // alignment padding between records
      ++pos;
      continue;
    }
    RecordWhere w{index, pos, ""};
    size_t end = pos;
    while (end < bytes.size() && bytes[end] != 0)
      ++end;
    if (end == bytes.size())
      Fail(w, "truncated record (no terminating NUL byte)");
    json rec;
    try {
      rec = json::parse(bytes.begin() + long(pos), bytes.begin() + long(end));
    } catch (const json::exception &e) {
      Fail(w, std::string("invalid JSON: ") + e.what());
    }
    if (!rec.is_object())
      Fail(w, "a record is not a JSON object");
    w.module = Get<std::string>(rec, "module", "", w, "record");
    auto ver = rec.find("scalana_psg");
    if (ver == rec.end() || !ver->is_number_integer())
      Fail(w, "not a PSG record (no 'scalana_psg' version)");
    if (ver->get<int64_t>() != kPsgSchemaVersion)
      Fail(w, "schema version " + ver->dump() + ", this analyzer reads version " +
                  std::to_string(kPsgSchemaVersion));
    std::string language = Get<std::string>(rec, "language", "unknown", w, "record");
    std::string comp_dir = Get<std::string>(rec, "comp_dir", "", w, "record");
    auto fs = rec.find("functions");
    if (fs == rec.end() || !fs->is_array())
      Fail(w, "no 'functions' array");
    // Optional (records before it have none): what the TU makes reachable.
    if (auto ts = rec.find("targets"); ts != rec.end() && !ts->is_null()) {
      if (!ts->is_array())
        Fail(w, "'targets' is not an array");
      for (const json &jt : *ts) {
        if (!jt.is_object())
          Fail(w, "a target is not an object");
        IndirectTarget t;
        t.key = Get<std::string>(jt, "key", "", w, "target");
        t.signature = Get<std::string>(jt, "sig", "", w, "target");
        t.slot = Get<int64_t>(jt, "slot", -1, w, "target");
        if (t.key.empty() || t.signature.empty())
          Fail(w, "a target has no 'key' or no 'sig'");
        targets.push_back(std::move(t));
      }
    }
    for (const json &jf : *fs) {
      LocalPsg f = ParseFunction(jf, w, w.module, language);
      f.comp_dir = comp_dir;
      auto k = by_key.find(f.key);
      if (k != by_key.end()) {
        // linkonce/weak functions come once per TU that emits them, and
        // the linker keeps the first copy, as we do. Copies of one source
        // compiled alike agree but for TU-local names; a real difference
        // matters because contexts from the dropped copy may not fit.
        const LocalPsg &first = out[k->second];
        if (std::string diff = ShapeDifference(first, f); warnings && !diff.empty()) {
          bool sources = diff.rfind("lines ", 0) == 0;
          warnings->push_back(
              "function '" + f.key + "' has different PSGs in " + first.module + " and " +
              f.module + " (" + diff + "): " +
              (sources ? "two different sources of one name" : "compiled with different options?") +
              "; using the one from " + first.module);
        }
        continue;
      }
      auto h = by_hash.find(f.hash);
      if (h != by_hash.end())
        throw Error(w.Str() + ": functions '" + out[h->second].key + "' and '" + f.key +
                    "' have the same hash " + FormatId(f.hash) +
                    ": their vertex ids cannot be told apart; rename one of them");
      by_key.emplace(f.key, out.size());
      by_hash.emplace(f.hash, out.size());
      f.object = object;
      out.push_back(std::move(f));
    }
    pos = end + 1;
    ++index;
  }
}

} // namespace

std::vector<LocalPsg> ParsePsgSections(const std::vector<PsgSection> &sections,
                                       std::vector<std::string> *warnings) {
  JoinedRecords j;
  for (const PsgSection &section : sections) {
    try {
      ParseRecords(section.bytes, section.object, j, warnings);
    } catch (const Error &e) {
      if (section.object.empty())
        throw;
      throw Error(section.object + ": " + e.what());
    }
  }
  AddProgramCandidates(j.out, j.targets, j.by_key);
  return std::move(j.out);
}

// ---------------------------------------------------------------------------

namespace {

// Per-kind counts of a (part of a) graph as shown; saturating.
struct Counts {
  uint64_t total = 0, loops = 0, branches = 0, comps = 0, mpis = 0, calls = 0, expanded = 0;
  uint64_t regions = 0;
  void Add(const Counts &o) {
    total = SatAdd(total, o.total);
    regions = SatAdd(regions, o.regions);
    loops = SatAdd(loops, o.loops);
    branches = SatAdd(branches, o.branches);
    comps = SatAdd(comps, o.comps);
    mpis = SatAdd(mpis, o.mpis);
    calls = SatAdd(calls, o.calls);
    expanded = SatAdd(expanded, o.expanded);
  }
  void AddKind(VertexKind k) {
    total = SatAdd(total, 1);
    switch (k) {
    case VertexKind::Loop:
      loops = SatAdd(loops, 1);
      break;
    case VertexKind::Branch:
      branches = SatAdd(branches, 1);
      break;
    case VertexKind::Comp:
      comps = SatAdd(comps, 1);
      break;
    case VertexKind::Mpi:
      mpis = SatAdd(mpis, 1);
      break;
    case VertexKind::Call:
      calls = SatAdd(calls, 1);
      break;
    case VertexKind::Function:
      break;
    }
  }
};

// A function's PSG after contraction at one entry loop depth: the shape every
// copy of the function at that depth gets. Index 0 is the copy's root.
struct TVertex {
  VertexKind kind = VertexKind::Comp;
  int32_t parent = -1;
  std::vector<int32_t> children;
  int32_t arm = -1;
  SourceLoc loc;
  uint32_t local = 0;
  int32_t callee = -1; // call with a record: function index
  bool indirect = false;
  uint32_t loop_depth = 0; // loops enclosing it inside the function
  OmpRegion region = OmpRegion::None;
  Worksharing worksharing = Worksharing::None;
};

struct Template {
  std::vector<TVertex> v;
  std::vector<int32_t> local_to_t; // raw local index -> template vertex containing it
};

} // namespace

struct Psg::Impl {
  PsgOptions opts;
  std::vector<LocalPsg> fns;
  std::unordered_map<std::string, int32_t> by_key;
  std::unordered_map<uint64_t, int32_t> by_hash;
  int32_t main_fn = -1;
  int32_t fortran_program = -1; // `_QQmain`, shown as part of main
  // flang's generated C `main`, which only calls `_QQmain`: not part of the
  // graph (main_fn is then `_QQmain`), its frames are skipped by Resolve.
  int32_t flang_main = -1;
  std::string psg_id, build_id, binary;
  std::vector<std::string> libraries;
  std::vector<ModuleInfo> library_ids;
  std::vector<std::string> warnings;

  // Static analysis per function.
  std::vector<std::vector<int32_t>> callee_of;     // per local vertex: callee index or -1
  std::vector<std::vector<uint8_t>> mpi_below;     // per local vertex (through callees)
  std::vector<std::vector<uint8_t>> loop_below;    // per local vertex (through callees)
  std::vector<std::vector<uint32_t>> loops_around; // loops enclosing a local vertex
  std::vector<uint8_t> fn_mpi, fn_loop;
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> callers; // (caller fn, call local)
  std::vector<int32_t> scc;
  std::vector<uint8_t> scc_cyclic; // per scc: more than one function or a self call
  // OpenMP (omp.h): functions only libomp calls, and where each one's code is.
  std::vector<uint8_t> runtime_entered;
  std::vector<int32_t> source_fn;

  // Templates: contracted by (fn, min(depth, max_loop_depth)), raw by fn.
  std::map<std::pair<int32_t, uint32_t>, Template> contracted;
  std::unordered_map<int32_t, Template> raw;

  // The materialised graph.
  struct Copy {
    int32_t fn = -1;
    VertexId vertex = kNoVertex; // the expanded call (or root) standing for the function vertex
    uint32_t depth = 0;          // loops enclosing the copy in the whole program
    std::vector<VertexId> local_map;
  };
  std::vector<Vertex> verts;
  std::vector<int32_t> copy_of;     // per vertex: copy it roots, or -1
  std::vector<int32_t> call_callee; // per vertex: callee function of a call, or -1
  std::vector<uint32_t> call_depth; // per vertex: loop depth a callee copy would enter at
  std::vector<Copy> copies;
  VertexId root = kNoVertex;
  std::vector<VertexId> extra_roots;
  std::unordered_map<uint64_t, VertexId> indirect_targets; // (call vertex, fn) -> target
  struct Start {
    int32_t copy = -1;
    VertexId terminal = kNoVertex;
  };
  std::unordered_map<int32_t, Start> starts; // first function of a context -> where it starts

  void Analyse();
  const Template &GetTemplate(int32_t f, uint32_t depth, bool contract);
  Template MakeTemplate(int32_t f, uint32_t depth, bool contract);
  int32_t Materialise(VertexId cv, int32_t f, uint32_t depth);
  VertexId AddVertex(Vertex v);
  void Expand(VertexId call);
  VertexId BindIndirect(VertexId call, int32_t target);
  int32_t CopyBelow(VertexId call_vertex);
  Start StartOf(int32_t f, std::vector<uint8_t> &visiting);
  // Vertices of these functions get no "(in f)" in the writers; nor do those
  // of an OpenMP construct's body in them.
  bool IsProgram(int32_t f) const {
    int32_t g = source_fn.empty() ? f : source_fn[size_t(f)];
    return g == main_fn || g == fortran_program;
  }
  // The name a reader knows: flang's program unit `_QQmain` is "main", an
  // OpenMP construct's outlined body "parallel region" (or "task", ...).
  const std::string &DisplayName(int32_t f) const {
    static const std::string kMain = "main";
    if (fns[size_t(f)].outlined != OmpRegion::None)
      return omp::StepName(fns[size_t(f)].outlined);
    return f == fortran_program || f == flang_main ? kMain : fns[size_t(f)].name;
  }
  // The function named in the writers' "(in f)": the one with the source.
  const std::string &SourceName(int32_t f) const {
    return fns[size_t(source_fn.empty() ? f : source_fn[size_t(f)])].name;
  }
  int32_t FnOfId(uint64_t id) const {
    auto it = by_hash.find(id & SCALANA_FN_MASK);
    return it == by_hash.end() ? -1 : it->second;
  }
  Counts Count(int32_t f, uint32_t depth, bool contract, std::vector<uint8_t> &on_path,
               std::map<std::tuple<int32_t, uint32_t, bool>, Counts> &memo);
  Counts CountProgram(bool contract);
  // Steps left for Count: call-graph cycles are walked path by path, which
  // can be exponential; past the budget the counts saturate ("too many").
  uint64_t count_steps_left = 0;
  // Memoised functions cost one step per template vertex and entry depth;
  // the budget covers that for any program, plus room for cycles.
  uint64_t CountBudget() const {
    uint64_t local = 0;
    for (const LocalPsg &f : fns)
      local += f.vertices.size();
    return 10'000'000 + 2 * local * (std::min<uint64_t>(opts.max_loop_depth, 64) + 1);
  }
  bool OnPath(VertexId from, int32_t f, VertexId *copy_vertex) const;
};

void Psg::Impl::Analyse() {
  const size_t nf = fns.size();
  callee_of.resize(nf);
  mpi_below.resize(nf);
  loop_below.resize(nf);
  loops_around.resize(nf);
  fn_mpi.assign(nf, 0);
  fn_loop.assign(nf, 0);
  callers.assign(nf, {});
  std::vector<std::vector<int32_t>> calls(nf);
  for (size_t f = 0; f < nf; ++f) {
    const auto &vs = fns[f].vertices;
    callee_of[f].assign(vs.size(), -1);
    for (const LocalVertex &v : vs) {
      if (v.kind == VertexKind::Mpi)
        fn_mpi[f] = 1;
      if (v.kind == VertexKind::Loop)
        fn_loop[f] = 1;
      // An indirect call may reach MPI: keep the structure around it.
      if (v.kind == VertexKind::Call && v.indirect)
        fn_mpi[f] = 1;
      if (v.kind == VertexKind::Call && !v.indirect) {
        auto it = by_key.find(v.callee);
        if (it != by_key.end()) {
          callee_of[f][v.local] = it->second;
          calls[f].push_back(it->second);
          callers[it->second].emplace_back(int32_t(f), v.local);
        }
      }
    }
  }
  // "Has MPI / a loop below" flows from callees to callers: a worklist over
  // the reverse call graph handles recursion without iterating to a fixpoint.
  for (auto *flag : {&fn_mpi, &fn_loop}) {
    std::vector<int32_t> work;
    for (size_t f = 0; f < nf; ++f)
      if ((*flag)[f])
        work.push_back(int32_t(f));
    while (!work.empty()) {
      int32_t g = work.back();
      work.pop_back();
      for (auto &[caller, local] : callers[g])
        if (!(*flag)[caller]) {
          (*flag)[caller] = 1;
          work.push_back(caller);
        }
    }
  }
  // Per local vertex: post-order over the tree (children before parents).
  for (size_t f = 0; f < nf; ++f) {
    const auto &vs = fns[f].vertices;
    auto &mb = mpi_below[f], &lb = loop_below[f];
    auto &la = loops_around[f];
    mb.assign(vs.size(), 0);
    lb.assign(vs.size(), 0);
    la.assign(vs.size(), 0);
    std::vector<uint32_t> order;
    order.reserve(vs.size());
    std::vector<uint32_t> stack{0};
    while (!stack.empty()) {
      uint32_t u = stack.back();
      stack.pop_back();
      order.push_back(u);
      for (uint32_t c : vs[u].children) {
        la[c] = la[u] + (vs[u].kind == VertexKind::Loop ? 1 : 0);
        stack.push_back(c);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const LocalVertex &v = vs[*it];
      uint8_t m = v.kind == VertexKind::Mpi || (v.kind == VertexKind::Call && v.indirect);
      uint8_t l = v.kind == VertexKind::Loop;
      int32_t g = callee_of[f][*it];
      if (g >= 0) {
        m |= fn_mpi[g];
        l |= fn_loop[g];
      }
      for (uint32_t c : v.children) {
        m |= mb[c];
        l |= lb[c];
      }
      mb[*it] = m;
      lb[*it] = l;
    }
  }
  // Strongly connected components of the call graph (iterative Tarjan): a
  // function outside any cycle expands the same way on every path, so counts
  // can be memoised per function.
  scc.assign(nf, -1);
  std::vector<int32_t> index(nf, -1), low(nf, 0), stk;
  std::vector<uint8_t> on_stk(nf, 0);
  int32_t next_index = 0, nscc = 0;
  for (size_t s = 0; s < nf; ++s) {
    if (index[s] >= 0)
      continue;
    std::vector<std::pair<int32_t, size_t>> dfs{{int32_t(s), 0}};
    index[s] = low[s] = next_index++;
    stk.push_back(int32_t(s));
    on_stk[s] = 1;
    while (!dfs.empty()) {
      auto &[u, i] = dfs.back();
      if (i < calls[u].size()) {
        int32_t w = calls[u][i++];
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stk.push_back(w);
          on_stk[w] = 1;
          dfs.emplace_back(w, 0);
        } else if (on_stk[w]) {
          low[u] = std::min(low[u], index[w]);
        }
        continue;
      }
      int32_t done = u;
      dfs.pop_back();
      if (!dfs.empty())
        low[dfs.back().first] = std::min(low[dfs.back().first], low[done]);
      if (low[done] == index[done]) {
        int32_t w;
        do {
          w = stk.back();
          stk.pop_back();
          on_stk[w] = 0;
          scc[w] = nscc;
        } while (w != done);
        ++nscc;
      }
    }
  }
  runtime_entered = omp::EnteredByRuntime(fns, callers);
  source_fn = omp::SourceFunctions(fns, callers);
  scc_cyclic.assign(nscc, 0);
  std::vector<int32_t> size(nscc, 0);
  for (size_t f = 0; f < nf; ++f)
    ++size[scc[f]];
  for (size_t f = 0; f < nf; ++f) {
    if (size[scc[f]] > 1)
      scc_cyclic[scc[f]] = 1;
    for (int32_t g : calls[f])
      if (g == int32_t(f))
        scc_cyclic[scc[f]] = 1;
  }
}

// Contraction of one function at whole-program entry loop depth `depth`
// (docs/psg.md). Without contraction the template is the local PSG with
// calls that have no record turned into Comp.
Template Psg::Impl::MakeTemplate(int32_t f, uint32_t depth, bool contract) {
  const LocalPsg &fn = fns[f];
  const auto &vs = fn.vertices;
  const uint32_t max_depth = opts.max_loop_depth;
  Template t;
  t.local_to_t.assign(vs.size(), 0);
  TVertex r;
  r.kind = VertexKind::Function;
  r.loc = fn.loc;
  t.v.push_back(r);

  auto loc_of = [&](const LocalVertex &v) {
    SourceLoc l = v.loc;
    if (l.file.empty())
      l.file = fn.loc.file;
    return l;
  };
  auto map_subtree = [&](uint32_t u, int32_t to, std::vector<uint32_t> *locals) {
    std::vector<uint32_t> st{u};
    while (!st.empty()) {
      uint32_t x = st.back();
      st.pop_back();
      t.local_to_t[x] = to;
      if (locals)
        locals->push_back(x);
      for (uint32_t c : vs[x].children)
        st.push_back(c);
    }
  };
  // Global loop depth of the code directly inside local vertex u's parent.
  auto enclosing = [&](uint32_t u) { return depth + loops_around[f][u]; };
  auto is_comp = [&](uint32_t c) {
    const LocalVertex &v = vs[c];
    uint32_t d = enclosing(c);
    if (v.kind == VertexKind::Comp)
      return true;
    if (v.kind == VertexKind::Call && !v.indirect && callee_of[f][c] < 0)
      return true;
    // A callee that is only straight-line code: computation, not an empty copy.
    if (v.kind == VertexKind::Call && callee_of[f][c] >= 0 &&
        fns[callee_of[f][c]].vertices.size() == 1)
      return true;
    if (!contract)
      return false;
    switch (v.kind) {
    case VertexKind::Loop:
      return !mpi_below[f][c] && d + 1 > max_depth;
    case VertexKind::Branch:
    case VertexKind::Call:
      return !mpi_below[f][c] && !(loop_below[f][c] && d < max_depth);
    default:
      return false;
    }
  };
  auto folds = [&](uint32_t c) {
    return contract && vs[c].kind == VertexKind::Loop && enclosing(c) + 1 > max_depth;
  };

  struct Pending {
    std::vector<uint32_t> roots; // raw subtrees that become one Comp
    int32_t arm = -1;
  };
  std::function<void(int32_t, uint32_t, Pending &, int32_t)> emit;
  auto flush = [&](int32_t tparent, Pending &p) {
    if (p.roots.empty())
      return;
    int32_t ti = int32_t(t.v.size());
    TVertex cv;
    cv.kind = VertexKind::Comp;
    cv.parent = tparent;
    cv.arm = p.arm;
    cv.local = p.roots.front();
    cv.loop_depth = loops_around[f][p.roots.front()];
    std::vector<uint32_t> locals;
    for (uint32_t u : p.roots)
      map_subtree(u, ti, &locals);
    bool first = true;
    for (uint32_t x : locals) {
      SourceLoc l = loc_of(vs[x]);
      if (l.line == 0)
        continue;
      if (first)
        cv.loc = l;
      cv.loc.line = std::min(cv.loc.line, l.line);
      cv.loc.end_line = std::max({cv.loc.end_line, l.end_line, l.line});
      first = false;
    }
    if (first)
      cv.loc.file = fn.loc.file;
    t.v.push_back(cv);
    t.v[tparent].children.push_back(ti);
    p.roots.clear();
  };
  // Emits the children of raw vertex u under template vertex tparent. A
  // folded loop splices its children into tparent, so pending computation is
  // shared with the caller to merge across the fold.
  emit = [&](int32_t tparent, uint32_t u, Pending &pending, int32_t inherited_arm) {
    bool branch = vs[u].kind == VertexKind::Branch;
    for (uint32_t c : vs[u].children) {
      int32_t arm = branch ? vs[c].arm : inherited_arm;
      if (is_comp(c)) {
        // Arms of a branch are alternatives: never merge across them.
        if (!contract || pending.arm != arm)
          flush(tparent, pending);
        pending.arm = arm;
        pending.roots.push_back(c);
        if (!contract)
          flush(tparent, pending);
        continue;
      }
      if (folds(c)) {
        t.local_to_t[c] = tparent; // its own code becomes the parent's
        emit(tparent, c, pending, arm);
        continue;
      }
      flush(tparent, pending);
      const LocalVertex &v = vs[c];
      int32_t ti = int32_t(t.v.size());
      TVertex tv;
      tv.kind = v.kind;
      tv.parent = tparent;
      tv.arm = arm;
      tv.loc = loc_of(v);
      tv.local = c;
      tv.callee = callee_of[f][c];
      tv.indirect = v.indirect;
      tv.loop_depth = loops_around[f][c];
      tv.region = v.region;
      tv.worksharing = v.worksharing;
      // Readers look for a construct at its directive (flang's fork call
      // has a location of its own; frames still match the record's).
      if (v.region != OmpRegion::None && v.directive_line)
        tv.loc.line = tv.loc.end_line = v.directive_line;
      t.v.push_back(tv);
      t.v[tparent].children.push_back(ti);
      t.local_to_t[c] = ti;
      if (v.kind == VertexKind::Loop || v.kind == VertexKind::Branch) {
        Pending inner;
        emit(ti, c, inner, -1);
        flush(ti, inner);
        // A loop whose body is only computation is a leaf: the Comp would
        // just repeat the loop's own time.
        if (contract && v.kind == VertexKind::Loop && t.v[ti].children.size() == 1 &&
            t.v.back().kind == VertexKind::Comp && t.v[ti].children[0] == int32_t(t.v.size()) - 1) {
          for (auto &m : t.local_to_t)
            if (m == int32_t(t.v.size()) - 1)
              m = ti;
          t.v.pop_back();
          t.v[ti].children.clear();
        }
      } else {
        // Calls and MPI: raw children (none expected) belong to the vertex.
        map_subtree(c, ti, nullptr);
      }
    }
  };
  Pending top;
  emit(0, 0, top, -1);
  flush(0, top);
  if (contract && t.v[0].children.size() == 1 && t.v.size() == 2 &&
      t.v[1].kind == VertexKind::Comp) {
    for (auto &m : t.local_to_t)
      m = 0;
    t.v.pop_back();
    t.v[0].children.clear();
  }
  return t;
}

const Template &Psg::Impl::GetTemplate(int32_t f, uint32_t depth, bool contract) {
  if (!contract) {
    auto it = raw.find(f);
    if (it == raw.end())
      it = raw.emplace(f, MakeTemplate(f, 0, false)).first;
    return it->second;
  }
  // Past the limit every loop folds, so deeper entries contract alike.
  uint32_t d = std::min(depth, opts.max_loop_depth);
  auto key = std::make_pair(f, d);
  auto it = contracted.find(key);
  if (it == contracted.end())
    it = contracted.emplace(key, MakeTemplate(f, d, true)).first;
  return it->second;
}

VertexId Psg::Impl::AddVertex(Vertex v) {
  verts.push_back(std::move(v));
  copy_of.push_back(-1);
  call_callee.push_back(-1);
  call_depth.push_back(0);
  return VertexId(verts.size() - 1);
}

// Is function f on the expansion path from `from` up to the root? Sets
// *copy_vertex to the vertex of the innermost copy of f on it.
bool Psg::Impl::OnPath(VertexId from, int32_t f, VertexId *copy_vertex) const {
  for (VertexId x = from; x != kNoVertex; x = verts[x].parent) {
    int32_t c = copy_of[x];
    if (c >= 0 && copies[c].fn == f) {
      *copy_vertex = x;
      return true;
    }
  }
  return false;
}

// Makes vertex cv stand for function f's vertex and adds f's contracted PSG
// below it. Calls with a record stay unexpanded until Expand.
int32_t Psg::Impl::Materialise(VertexId cv, int32_t f, uint32_t depth) {
  const Template &t = GetTemplate(f, depth, opts.contract);
  int32_t ci = int32_t(copies.size());
  copies.push_back(Copy{f, cv, depth, {}});
  copy_of[cv] = ci;
  std::vector<VertexId> tmap(t.v.size(), kNoVertex);
  tmap[0] = cv;
  // The functions on the expansion path, innermost copy first, gathered
  // once: each call checks it for recursion without walking up again.
  std::unordered_map<int32_t, VertexId> on_path;
  bool has_calls = false;
  for (size_t i = 1; i < t.v.size() && !has_calls; ++i)
    has_calls = t.v[i].callee >= 0;
  if (has_calls)
    for (VertexId x = cv; x != kNoVertex; x = verts[x].parent)
      if (copy_of[x] >= 0)
        on_path.emplace(copies[copy_of[x]].fn, x);
  for (size_t i = 1; i < t.v.size(); ++i) {
    const TVertex &tv = t.v[i];
    Vertex v;
    v.kind = tv.kind;
    v.parent = tmap[tv.parent];
    v.arm = tv.arm;
    v.loc = tv.loc;
    v.function = f;
    v.local = tv.local;
    v.region = tv.region;
    v.worksharing = tv.worksharing;
    const LocalVertex &lv = fns[f].vertices[tv.local];
    if (tv.kind == VertexKind::Mpi) {
      v.label = lv.mpi_op;
      v.mpi_class = lv.mpi_class;
    } else if (tv.kind == VertexKind::Call) {
      v.indirect = tv.indirect;
      v.label = tv.indirect ? "?" : tv.callee >= 0 ? fns[tv.callee].name : lv.callee;
      if (tv.region != OmpRegion::None) // its callee is a name the compiler made up
        v.label = omp::StepName(tv.region);
    }
    VertexId id = AddVertex(std::move(v));
    tmap[i] = id;
    verts[tmap[tv.parent]].children.push_back(id);
    if (tv.kind == VertexKind::Call) {
      call_depth[id] = depth + tv.loop_depth;
      if (tv.callee >= 0) {
        auto target = on_path.find(tv.callee);
        if (target != on_path.end()) {
          verts[id].recursive = true;
          verts[id].recursion_target = target->second;
        } else {
          call_callee[id] = tv.callee;
        }
      }
    }
  }
  Copy &c = copies[ci];
  c.local_map.resize(t.local_to_t.size());
  for (size_t l = 0; l < t.local_to_t.size(); ++l)
    c.local_map[l] = tmap[t.local_to_t[l]];
  return ci;
}

void Psg::Impl::Expand(VertexId call) {
  if (verts[call].expanded || call_callee[call] < 0)
    return;
  verts[call].expanded = true;
  Materialise(call, call_callee[call], call_depth[call]);
}

VertexId Psg::Impl::BindIndirect(VertexId call, int32_t target) {
  uint64_t key = uint64_t(uint32_t(call)) << 32 | uint32_t(target);
  auto it = indirect_targets.find(key);
  if (it != indirect_targets.end())
    return it->second;
  Vertex v;
  v.kind = VertexKind::Call;
  v.parent = call;
  v.loc = verts[call].loc;
  v.function = verts[call].function;
  v.local = verts[call].local;
  v.label = fns[target].name;
  v.indirect = true;
  VertexId id = AddVertex(std::move(v));
  verts[call].children.push_back(id);
  call_depth[id] = call_depth[call];
  VertexId loop_to;
  if (OnPath(call, target, &loop_to)) {
    verts[id].recursive = true;
    verts[id].recursion_target = loop_to;
  } else {
    call_callee[id] = target;
    Expand(id);
  }
  indirect_targets.emplace(key, id);
  return id;
}

// The copy a context continues in below a (kept) call vertex.
int32_t Psg::Impl::CopyBelow(VertexId x) {
  if (verts[x].recursive)
    return copy_of[verts[x].recursion_target];
  Expand(x);
  return copy_of[x];
}

// Where a context whose outermost frame is in function f starts: main's
// copy; else below f's only call site (recursively up to main); else a
// synthetic root of its own (OpenMP outlined functions, thread routines).
Psg::Impl::Start Psg::Impl::StartOf(int32_t f, std::vector<uint8_t> &visiting) {
  if (f == main_fn)
    return Start{copy_of[root], kNoVertex};
  auto it = starts.find(f);
  if (it != starts.end())
    return it->second;
  Start s;
  if (callers[f].size() == 1 && callers[f][0].first != f && !visiting[f]) {
    visiting[f] = 1;
    auto [caller, local] = callers[f][0];
    Start up = StartOf(caller, visiting);
    visiting[f] = 0;
    if (up.terminal != kNoVertex) {
      s.terminal = up.terminal;
    } else if (up.copy >= 0) {
      const Copy &c = copies[up.copy];
      VertexId x = c.local_map[local];
      const Vertex &xv = verts[x];
      if (xv.kind == VertexKind::Call && xv.function == caller && xv.local == local)
        s.copy = CopyBelow(x);
      else
        s.terminal = x; // the call was contracted into computation
    }
  }
  if (s.copy < 0 && s.terminal == kNoVertex) {
    Vertex v;
    v.kind = VertexKind::Function;
    v.loc = fns[f].loc;
    v.function = f;
    v.label = fns[f].name;
    VertexId id = AddVertex(std::move(v));
    extra_roots.push_back(id);
    s.copy = Materialise(id, f, 0);
  }
  starts.emplace(f, s);
  return s;
}

Counts Psg::Impl::Count(int32_t f, uint32_t depth, bool contract, std::vector<uint8_t> &on_path,
                        std::map<std::tuple<int32_t, uint32_t, bool>, Counts> &memo) {
  // Outside call-graph cycles the expansion of f does not depend on the path
  // (nothing below f can be on it), so one entry per (f, depth) suffices.
  // Inside a cycle it does: walked path by path, within count_steps_left.
  uint32_t d = contract ? std::min(depth, opts.max_loop_depth) : 0;
  bool cacheable = !scc_cyclic[scc[f]];
  auto key = std::make_tuple(f, d, contract);
  if (cacheable) {
    auto it = memo.find(key);
    if (it != memo.end())
      return it->second;
  }
  on_path[f] = 1;
  Counts c;
  const Template &t = GetTemplate(f, d, contract);
  for (size_t i = 1; i < t.v.size(); ++i) {
    if (count_steps_left == 0) {
      const uint64_t max = std::numeric_limits<uint64_t>::max();
      c = Counts{max, max, max, max, max, max, max, max};
      break;
    }
    --count_steps_left;
    const TVertex &tv = t.v[i];
    if (tv.kind == VertexKind::Call && tv.callee >= 0 && !on_path[tv.callee]) {
      c.expanded = SatAdd(c.expanded, 1);
      // A construct's call is shown (docs/psg.md): a vertex of its own.
      if (tv.region != OmpRegion::None) {
        c.total = SatAdd(c.total, 1);
        c.regions = SatAdd(c.regions, 1);
      }
      c.Add(Count(tv.callee, depth + tv.loop_depth, contract, on_path, memo));
    } else {
      c.AddKind(tv.kind);
    }
  }
  on_path[f] = 0;
  if (cacheable)
    memo.emplace(key, c);
  return c;
}

Counts Psg::Impl::CountProgram(bool contract) {
  std::vector<uint8_t> on_path(fns.size(), 0);
  std::map<std::tuple<int32_t, uint32_t, bool>, Counts> memo;
  count_steps_left = CountBudget();
  Counts c = Count(main_fn, 0, contract, on_path, memo);
  c.total = SatAdd(c.total, 1); // the root
  return c;
}

// ---------------------------------------------------------------------------

Psg::Psg() : impl_(std::make_unique<Impl>()) {}
Psg::~Psg() = default;
Psg::Psg(Psg &&) noexcept = default;
Psg &Psg::operator=(Psg &&) noexcept = default;

Psg Psg::Build(std::vector<LocalPsg> functions, const PsgOptions &opts) {
  Psg p;
  Impl &m = *p.impl_;
  m.opts = opts;
  m.fns = std::move(functions);
  for (size_t i = 0; i < m.fns.size(); ++i) {
    const LocalPsg &f = m.fns[i];
    if (f.vertices.empty() || f.vertices[0].kind != VertexKind::Function)
      throw Error("function '" + f.key + "': vertex 0 must be the function vertex");
    for (const LocalVertex &v : f.vertices) {
      for (uint32_t c : v.children)
        if (c >= f.vertices.size() || c == 0)
          throw Error("function '" + f.key + "': vertex " + std::to_string(v.local) +
                      " has child " + std::to_string(c) + " out of range");
    }
    if (!m.by_key.emplace(f.key, int32_t(i)).second)
      throw Error("function '" + f.key + "' is given twice");
    uint64_t h = f.hash ? f.hash : scalana_function_hash(f.key.data(), f.key.size());
    m.fns[i].hash = h & SCALANA_FN_MASK;
    auto [it, fresh] = m.by_hash.emplace(m.fns[i].hash, int32_t(i));
    if (!fresh)
      throw Error("functions '" + m.fns[it->second].key + "' and '" + f.key +
                  "' have the same hash " + FormatId(h) + "; rename one of them");
  }
  // flang-new-19 emits `main` calling the program unit `_QQmain`; older
  // flang put `main` in its runtime, which is not instrumented.
  for (const char *name : {"main", "_QQmain"}) {
    auto it = m.by_key.find(name);
    if (it != m.by_key.end()) {
      m.main_fn = it->second;
      break;
    }
  }
  if (auto it = m.by_key.find("_QQmain"); it != m.by_key.end())
    m.fortran_program = it->second;
  // flang's `main` carries only the `end program` line: were it the root,
  // every context would start with a call site at that line. The program
  // unit is the entry instead.
  if (m.main_fn >= 0 && m.fortran_program >= 0 && m.main_fn != m.fortran_program &&
      OnlyCalls(m.fns[m.main_fn], "_QQmain")) {
    m.flang_main = m.main_fn;
    m.main_fn = m.fortran_program;
  }
  if (m.main_fn < 0)
    throw Error("no PSG record of main (nor of a Fortran main program _QQmain): build the file "
                "that defines main with scalana-cc, scalana-cxx or scalana-fc");
  // The local index is the position (hand-built graphs may leave it unset).
  for (LocalPsg &f : m.fns)
    for (size_t l = 0; l < f.vertices.size(); ++l)
      f.vertices[l].local = uint32_t(l);
  m.Analyse();
  Vertex r;
  r.kind = VertexKind::Function;
  r.loc = m.fns[m.main_fn].loc;
  // flang's generated main has only the program's last line: show the
  // program unit's range, where the reader's code is.
  if (m.fortran_program >= 0 && m.fortran_program != m.main_fn)
    r.loc = m.fns[m.fortran_program].loc;
  r.function = m.main_fn;
  r.label = m.fns[m.flang_main >= 0 ? m.flang_main : m.main_fn].name;
  m.root = m.AddVertex(std::move(r));
  m.Materialise(m.root, m.main_fn, 0);
  return p;
}

Psg Psg::LoadFromBinary(const std::string &binary, const PsgOptions &opts) {
  return LoadFromObjects(binary, {}, opts);
}

Psg Psg::LoadFromObjects(const std::string &binary, const std::vector<std::string> &libraries,
                         const PsgOptions &opts) {
  std::vector<PsgSection> sections;
  std::string exe_build_id, exe_psg_id;
  std::vector<ModuleInfo> library_ids;
  for (size_t i = 0; i <= libraries.size(); ++i) {
    const std::string &object = i ? libraries[i - 1] : binary;
    std::string err;
    auto info = ReadElf(object, kPsgSection, &err);
    if (!info)
      throw Error(err + (i ? ": the shared object the run loaded is gone or unreadable; restore "
                             "it, or profile again"
                           : ": give the path of a program built with scalana-cc, scalana-cxx "
                             "or scalana-fc"));
    if (!info->has_section)
      throw Error(object + " has no Program Structure Graph (section scalana_psg missing): "
                           "rebuild it with scalana-cc, scalana-cxx or scalana-fc (e.g. "
                           "CC=scalana-cc make)");
    if (i == 0) {
      exe_build_id = info->build_id;
      exe_psg_id = PsgIdOf(info->section);
    } else {
      library_ids.push_back({object, info->build_id, PsgIdOf(info->section)});
    }
    sections.push_back(PsgSection{object, std::move(info->section)});
  }
  std::vector<std::string> warnings;
  std::vector<LocalPsg> fns = ParsePsgSections(sections, &warnings); // errors name the object
  if (fns.empty())
    throw Error(binary + " has an empty scalana_psg section: rebuild it with scalana-cc, "
                         "scalana-cxx or scalana-fc");
  Psg p;
  try {
    p = Build(std::move(fns), opts);
  } catch (const Error &e) {
    throw Error(binary + ": " + e.what());
  }
  p.impl_->psg_id = exe_psg_id;
  p.impl_->build_id = exe_build_id;
  p.impl_->binary = binary;
  p.impl_->libraries = libraries;
  p.impl_->library_ids = std::move(library_ids);
  p.impl_->warnings = std::move(warnings);
  return p;
}

const std::vector<Vertex> &Psg::vertices() const { return impl_->verts; }
const Vertex &Psg::vertex(VertexId v) const { return impl_->verts.at(size_t(v)); }
VertexId Psg::root() const { return impl_->root; }
const std::vector<LocalPsg> &Psg::functions() const { return impl_->fns; }
const std::string &Psg::psg_id() const { return impl_->psg_id; }
const std::vector<VertexId> &Psg::extra_roots() const { return impl_->extra_roots; }
const std::string &Psg::build_id() const { return impl_->build_id; }
const std::string &Psg::binary() const { return impl_->binary; }
const std::vector<std::string> &Psg::libraries() const { return impl_->libraries; }
const std::vector<ModuleInfo> &Psg::library_ids() const { return impl_->library_ids; }
const std::vector<std::string> &Psg::warnings() const { return impl_->warnings; }
const PsgOptions &Psg::options() const { return impl_->opts; }

bool Psg::IsGeneratedEntry(int32_t function) const {
  return function >= 0 && function == impl_->flang_main;
}

const LocalPsg *Psg::FunctionOfId(uint64_t raw_id) const {
  int32_t f = impl_->FnOfId(raw_id);
  return f < 0 ? nullptr : &impl_->fns[f];
}

VertexId Psg::Resolve(const Context &ctx) {
  Impl &m = *impl_;
  if (ctx.empty() || m.root == kNoVertex)
    return kNoVertex;
  size_t n = ctx.size();
  size_t first = 0;
  // Deeper than contexts are kept: only the vertex is trustworthy.
  if (n > kMaxContextCallSites + 1)
    first = n - 1;
  // Last two ids equal: running in an uninstrumented callee of that call
  // site; the sample belongs to the call site's vertex.
  size_t last = n - 1;
  if (n - first >= 2 && ctx[n - 1] == ctx[n - 2])
    last = n - 2;
  // Where a context (or its suffix) starting in function f begins.
  auto start_in = [&m](int32_t f) {
    if (f == m.main_fn)
      return Impl::Start{m.copy_of[m.root], kNoVertex};
    auto it = m.starts.find(f);
    if (it != m.starts.end())
      return it->second;
    std::vector<uint8_t> visiting(m.fns.size(), 0);
    return m.StartOf(f, visiting);
  };
  // An id of a function that nothing calls directly, met where another
  // function's id was due: the code was entered through a library callback
  // with no call site on the stack (a thread routine, a comparator, an
  // OpenMP outlined function in records without constructs). Likewise a
  // function only OpenMP constructs call: a task run by the thread that
  // made it, at a barrier, has no frame of its construct. The rest of the
  // context starts afresh there, as the other threads' contexts do.
  auto restart_allowed = [&m](uint64_t id) {
    int32_t g = m.FnOfId(id);
    return g >= 0 && g != m.main_fn && g != m.flang_main &&
           (m.callers[g].empty() || m.runtime_entered[g]);
  };
  // flang's main is not in the graph: its call of the program unit (and a
  // sample in it, made in flang's runtime start-up) belong to the root.
  if (m.flang_main >= 0) {
    while (first < last && m.FnOfId(ctx[first]) == m.flang_main)
      ++first;
    if (m.FnOfId(ctx[first]) == m.flang_main)
      return m.root;
  }
  // Restarts at ID's function: false when not allowed; else *COPY is where
  // the rest continues, or *TERMINAL the vertex it all belongs to (the
  // construct's call was contracted into computation).
  VertexId terminal = kNoVertex;
  auto restart = [&](uint64_t id, int32_t *copy) {
    if (!restart_allowed(id))
      return false;
    int32_t g = m.FnOfId(id);
    Impl::Start s = start_in(g);
    *copy = s.copy;
    terminal = s.terminal;
    return s.copy >= 0 || s.terminal != kNoVertex;
  };
  int32_t f0 = m.FnOfId(ctx[first]);
  if (f0 < 0)
    return kNoVertex;
  Impl::Start s0 = start_in(f0);
  if (s0.terminal != kNoVertex)
    return s0.terminal;
  int32_t copy = s0.copy;
  for (size_t i = first; i < last; ++i) {
    uint64_t id = ctx[i];
    if (scalana_id_function(id) != m.fns[m.copies[copy].fn].hash && !restart(id, &copy))
      return kNoVertex;
    if (terminal != kNoVertex)
      return terminal;
    const Impl::Copy &c = m.copies[copy];
    const LocalPsg &fn = m.fns[c.fn];
    uint32_t local = scalana_id_local(id);
    if (scalana_id_function(id) != fn.hash || local >= fn.vertices.size() ||
        fn.vertices[local].kind != VertexKind::Call)
      return kNoVertex;
    VertexId x = c.local_map[local];
    const Vertex &xv = m.verts[x];
    if (!(xv.kind == VertexKind::Call && xv.function == c.fn && xv.local == local)) {
      // The call is part of a Comp: all below is in it, unless the context
      // later enters a callback-only function (an OpenMP region in a callee
      // with no structure of its own), which has vertices of its own.
      size_t j = i + 1;
      while (j <= last && !restart_allowed(ctx[j]))
        ++j;
      if (j > last)
        return x;
      if (!restart(ctx[j], &copy))
        return kNoVertex;
      if (terminal != kNoVertex)
        return terminal;
      i = j - 1; // continue with ctx[j] in its copy
      continue;
    }
    if (xv.indirect && !xv.recursive) {
      int32_t target = m.FnOfId(ctx[i + 1]);
      if (target < 0)
        return kNoVertex;
      x = m.BindIndirect(x, target);
    }
    copy = m.CopyBelow(x);
    if (copy < 0)
      return kNoVertex; // callee without a record
  }
  uint64_t id = ctx[last];
  if (scalana_id_function(id) != m.fns[m.copies[copy].fn].hash && !restart(id, &copy))
    return kNoVertex;
  if (terminal != kNoVertex)
    return terminal;
  const Impl::Copy &c = m.copies[copy];
  const LocalPsg &fn = m.fns[c.fn];
  uint32_t local = scalana_id_local(id);
  if (scalana_id_function(id) != fn.hash || local >= fn.vertices.size())
    return kNoVertex;
  return c.local_map[local];
}

VertexId Psg::ResolveNearest(const Context &ctx, size_t *cut) {
  *cut = 0;
  if (VertexId v = Resolve(ctx); v != kNoVertex || ctx.empty())
    return v;
  const size_t n = ctx.size();
  // The inner part on its own, where its first function starts (an extra
  // root when nothing calls it once): keeps the line the time is spent on.
  VertexId inner = kNoVertex;
  size_t inner_kept = 0;
  for (size_t from = 1; from < n && inner == kNoVertex; ++from)
    if ((inner = Resolve(Context(ctx.begin() + long(from), ctx.end()))) != kNoVertex)
      inner_kept = n - from;
  // The outer call sites, the rest of the chain cut: the last kept call
  // site's vertex, as for a callee without a record. Keeps the calling
  // context; taken only where it keeps more of the context.
  for (size_t keep = n - 1; keep > inner_kept; --keep) {
    Context prefix(ctx.begin(), ctx.begin() + long(keep));
    prefix.push_back(ctx[keep - 1]);
    if (VertexId v = Resolve(prefix); v != kNoVertex) {
      *cut = n - keep;
      return v;
    }
  }
  if (inner != kNoVertex)
    *cut = n - inner_kept;
  return inner;
}

void Psg::ExpandAll() {
  Impl &m = *impl_;
  if (m.main_fn < 0)
    return; // an empty Psg (default-constructed)
  Counts c = m.CountProgram(m.opts.contract);
  uint64_t need = SatAdd(c.total, c.expanded);
  if (need > m.opts.max_vertices)
    throw Error((m.binary.empty() ? std::string("the program") : m.binary) +
                ": the whole-program PSG would have " + std::to_string(need) +
                " vertices, more than the limit of " + std::to_string(m.opts.max_vertices) +
                ": lower --max-loop-depth (contraction shrinks it) or raise --max-vertices");
  // A shared object's functions that no call reaches (loaded with dlopen and
  // called through dlsym's pointer) start graphs of their own, as Resolve
  // starts them when their code runs.
  for (size_t f = 0; f < m.fns.size(); ++f)
    if (!m.fns[f].object.empty() && m.fns[f].object != m.binary && m.callers[f].empty() &&
        m.fns[f].linkage != "internal" && !m.starts.count(int32_t(f))) {
      std::vector<uint8_t> visiting(m.fns.size(), 0);
      m.StartOf(int32_t(f), visiting);
    }
  for (size_t i = 0; i < m.verts.size(); ++i)
    if (m.call_callee[i] >= 0 && !m.verts[i].expanded)
      m.Expand(VertexId(i));
}

PsgStats Psg::Stats() const {
  Impl &m = *impl_;
  PsgStats s;
  s.functions = m.fns.size();
  if (m.main_fn < 0)
    return s;
  Counts before = m.CountProgram(false);
  Counts after = m.opts.contract ? m.CountProgram(true) : before;
  s.vertices_before = before.total;
  s.vertices_after = after.total;
  s.loops = after.loops;
  s.branches = after.branches;
  s.comps = after.comps;
  s.mpis = after.mpis;
  s.calls = after.calls;
  s.regions = after.regions;
  s.expanded_calls = after.expanded;
  return s;
}

std::vector<CallSite> Psg::CallSites(VertexId v) const {
  const Impl &m = *impl_;
  std::vector<std::pair<int32_t, VertexId>> copies; // (function, vertex), innermost first
  for (VertexId x = v; x != kNoVertex; x = m.verts.at(size_t(x)).parent)
    if (int32_t c = m.copy_of[size_t(x)]; c >= 0)
      copies.emplace_back(m.copies[size_t(c)].fn, x);
  std::vector<CallSite> sites;
  for (auto it = copies.rbegin(); it != copies.rend(); ++it) {
    auto [f, x] = *it;
    // The program unit called from a main of its own: one program for the
    // reader, not two entries.
    if (f == m.fortran_program && !sites.empty() && sites.back().function == "main")
      continue;
    const Vertex &at = m.verts[size_t(x)];
    // An OpenMP construct's entry calling its body (clang's
    // `main.omp_outlined` calling `main.omp_outlined_debug__`, a task entry
    // its `.omp_outlined.`): one construct for the reader.
    if (at.kind == VertexKind::Call && at.region == OmpRegion::None && at.function >= 0 &&
        m.fns[size_t(f)].outlined != OmpRegion::None &&
        m.fns[size_t(at.function)].outlined != OmpRegion::None && !sites.empty())
      continue;
    CallSite s;
    s.function = at.region != OmpRegion::None ? omp::StepName(at.region) : m.DisplayName(f);
    s.vertex = x;
    if (at.kind == VertexKind::Call) { // the root has no call site
      s.loc = at.loc;
      if (s.loc.file.empty() && at.function >= 0)
        s.loc.file = m.fns[size_t(at.function)].loc.file;
    }
    sites.push_back(std::move(s));
  }
  return sites;
}

std::string Psg::FunctionName(VertexId v) const {
  int32_t f = vertex(v).function;
  return f < 0 ? std::string() : impl_->DisplayName(f);
}

std::vector<std::string> Psg::CallPath(VertexId v) const {
  std::vector<std::string> path;
  for (CallSite &s : CallSites(v))
    path.push_back(std::move(s.function));
  return path;
}

const LocalPsg &Psg::FunctionOf(VertexId v) const {
  return impl_->fns.at(size_t(vertex(v).function));
}

std::vector<std::string> Psg::CandidatesOf(VertexId v) const {
  const Impl &m = *impl_;
  const Vertex &x = m.verts.at(size_t(v));
  if (x.kind != VertexKind::Call || !x.indirect || x.function < 0)
    return {};
  // A target bound under the site (BindIndirect) has the site's function
  // and local index: it is not a site of its own.
  if (x.parent != kNoVertex) {
    const Vertex &p = m.verts[size_t(x.parent)];
    if (p.kind == VertexKind::Call && p.indirect && p.function == x.function && p.local == x.local)
      return {};
  }
  std::vector<std::string> names;
  for (const std::string &key : m.fns[size_t(x.function)].vertices[x.local].candidates) {
    auto it = m.by_key.find(key);
    names.push_back(it == m.by_key.end() ? key : m.fns[size_t(it->second)].name);
  }
  return names;
}

// --- writers ---------------------------------------------------------------

namespace {

std::string Join(const std::vector<std::string> &items, const char *sep) {
  std::string out;
  for (const std::string &s : items)
    out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string LocText(const SourceLoc &l) {
  std::string s = l.file + ":" + std::to_string(l.line);
  if (l.end_line != 0 && l.end_line != l.line)
    s += "-" + std::to_string(l.end_line);
  return s;
}

std::string Basename(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string Psg::ToText() const {
  const Impl &m = *impl_;
  std::ostringstream out;
  out << "PSG of " << EscapeControls(m.binary.empty() ? std::string("<memory>") : m.binary) << " ("
      << m.fns.size() << " functions, psg " << (m.psg_id.empty() ? "-" : m.psg_id) << ")\n";
  for (const std::string &lib : m.libraries) {
    size_t n = 0;
    for (const LocalPsg &f : m.fns)
      n += f.object == lib;
    out << "with " << EscapeControls(lib) << " (" << n << " functions)\n";
  }
  // Expanded calls are not shown: the callee's children take their place
  // (paper Fig. 4(b)), inheriting the call's arm. Targets bound under an
  // indirect call are shown, since there can be several.
  struct Item {
    VertexId v;
    int indent;
    int32_t arm;
  };
  auto print_tree = [&](VertexId top) {
    std::vector<Item> st{{top, 0, -1}};
    while (!st.empty()) {
      Item it = st.back();
      st.pop_back();
      const Vertex &v = m.verts[it.v];
      // A bound target sits under the indirect call site (itself unexpanded).
      bool parent_indirect =
          v.parent != kNoVertex && m.verts[v.parent].indirect && !m.verts[v.parent].expanded;
      // An OpenMP construct is shown: its body is not the code around it.
      bool hidden = v.kind == VertexKind::Call && v.expanded && !parent_indirect &&
                    v.region == OmpRegion::None;
      int32_t arm = v.arm >= 0 ? v.arm : it.arm;
      int child_indent = it.indent + 1;
      if (hidden) {
        child_indent = it.indent;
      } else {
        std::string line(size_t(it.indent) * 2, ' ');
        switch (v.kind) {
        case VertexKind::Function:
          line += "Root " + v.label;
          break;
        case VertexKind::Loop:
          line += "Loop";
          break;
        case VertexKind::Branch:
          line += "Branch";
          break;
        case VertexKind::Comp:
          line += "Comp";
          break;
        case VertexKind::Mpi:
          line += "MPI " + v.label;
          break;
        case VertexKind::Call:
          line += v.region != OmpRegion::None ? omp::Label(v.region) : "Call " + v.label;
          break;
        }
        line += " " + LocText(v.loc);
        if (v.function >= 0)
          line += omp::LoopNote(v.worksharing, m.fns[size_t(v.function)].language);
        if (arm >= 0 && v.kind != VertexKind::Function)
          line += " (arm " + std::to_string(arm) + ")";
        if (v.recursive)
          line += " (recursive)";
        if (v.indirect)
          line += " (indirect)";
        if (std::vector<std::string> c = CandidatesOf(it.v); !c.empty())
          line += " (candidates " + Join(c, ", ") + "; resolved at run time)";
        if (v.kind != VertexKind::Function && v.function >= 0 && !m.IsProgram(v.function))
          line += " (in " + m.SourceName(v.function) + ")";
        // Which shared object the code is in, where the parent's is another.
        if (v.function >= 0 && !m.libraries.empty()) {
          const std::string &object = m.fns[size_t(v.function)].object;
          const std::string &outer = v.parent == kNoVertex || m.verts[v.parent].function < 0
                                         ? m.binary
                                         : m.fns[size_t(m.verts[v.parent].function)].object;
          if (object != outer)
            line += " [" + Basename(object) + "]";
        }
        // Names come from the binary: a control character in one (a newline
        // forging a line, an escape sequence) is shown, not obeyed.
        out << EscapeControls(line) << "\n";
      }
      // Children inherit an arm only through hidden calls.
      int32_t pass_arm = hidden ? arm : -1;
      for (auto c = v.children.rbegin(); c != v.children.rend(); ++c)
        st.push_back({*c, child_indent, pass_arm});
    }
  };
  if (m.root != kNoVertex)
    print_tree(m.root);
  for (VertexId r : m.extra_roots)
    print_tree(r);
  PsgStats s = Stats();
  out << "summary: " << s.vertices_before << " vertices before contraction, " << s.vertices_after
      << " after; loop " << s.loops << ", branch " << s.branches << ", comp " << s.comps << ", mpi "
      << s.mpis << ", call " << s.calls;
  if (s.regions)
    out << ", region " << s.regions;
  out << "\n";
  return out.str();
}

std::string Psg::ToJson() const {
  const Impl &m = *impl_;
  json j;
  j["binary"] = m.binary;
  j["psg_id"] = m.psg_id;
  j["build_id"] = m.build_id;
  j["max_loop_depth"] = m.opts.max_loop_depth;
  j["contract"] = m.opts.contract;
  json fns = json::array();
  for (const LocalPsg &f : m.fns)
    fns.push_back({{"key", f.key},
                   {"name", f.name},
                   {"module", f.module},
                   {"object", f.object.empty() ? m.binary : f.object},
                   {"hash", FormatId(f.hash)}});
  for (size_t f = 0; f < m.fns.size(); ++f)
    if (m.fns[f].outlined != OmpRegion::None)
      fns[f]["outlined"] = ToString(m.fns[f].outlined);
  j["functions"] = std::move(fns);
  j["libraries"] = m.libraries;
  j["root"] = m.root;
  j["extra_roots"] = m.extra_roots;
  json vs = json::array();
  for (size_t i = 0; i < m.verts.size(); ++i) {
    const Vertex &v = m.verts[i];
    json jv = {{"id", i},
               {"kind", ToString(v.kind)},
               {"parent", v.parent},
               {"children", v.children},
               {"file", v.loc.file},
               {"line", v.loc.line},
               {"end_line", v.loc.end_line},
               {"function", v.function},
               {"local", v.local}};
    if (v.arm >= 0)
      jv["arm"] = v.arm;
    if (!v.label.empty())
      jv["label"] = v.label;
    if (v.kind == VertexKind::Mpi)
      jv["class"] = ToString(v.mpi_class);
    if (v.recursive) {
      jv["recursive"] = true;
      jv["recursion_target"] = v.recursion_target;
    }
    if (v.indirect)
      jv["indirect"] = true;
    if (std::vector<std::string> c = CandidatesOf(VertexId(i)); !c.empty())
      jv["candidates"] = std::move(c);
    if (v.expanded)
      jv["expanded"] = true;
    if (v.region != OmpRegion::None)
      jv["region"] = ToString(v.region);
    if (v.worksharing != Worksharing::None)
      jv["worksharing"] = ToString(v.worksharing);
    vs.push_back(std::move(jv));
  }
  j["vertices"] = std::move(vs);
  PsgStats s = Stats();
  j["summary"] = {{"vertices_before", s.vertices_before},
                  {"vertices_after", s.vertices_after},
                  {"loop", s.loops},
                  {"branch", s.branches},
                  {"comp", s.comps},
                  {"mpi", s.mpis},
                  {"call", s.calls},
                  {"region", s.regions},
                  {"functions", s.functions}};
  return j.dump(1) + "\n";
}

std::string Psg::ToDot() const {
  const Impl &m = *impl_;
  auto esc = [](const std::string &s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\')
        o += '\\';
      o += c;
    }
    return o;
  };
  std::ostringstream out;
  out << "digraph psg {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < m.verts.size(); ++i) {
    const Vertex &v = m.verts[i];
    std::string label = std::string(ToString(v.kind));
    if (v.region != OmpRegion::None)
      label = omp::StepName(v.region);
    else if (!v.label.empty())
      label += " " + v.label;
    label += "\\n" + LocText(v.loc);
    if (v.function >= 0)
      label += omp::LoopNote(v.worksharing, m.fns[size_t(v.function)].language);
    if (v.function >= 0 && !m.IsProgram(v.function))
      label += "\\n(in " + m.SourceName(v.function) + ")";
    if (std::vector<std::string> c = CandidatesOf(VertexId(i)); !c.empty())
      label += "\\ncandidates " + Join(c, ", ") + "\\n(resolved at run time)";
    const char *shape = v.kind == VertexKind::Loop     ? "ellipse"
                        : v.kind == VertexKind::Branch ? "diamond"
                        : v.kind == VertexKind::Mpi    ? "box, style=filled, fillcolor=lightblue"
                        : v.kind == VertexKind::Comp   ? "box, style=dashed"
                                                       : "box";
    out << "  v" << i << " [label=\"" << esc(label) << "\", shape=" << shape << "];\n";
    for (VertexId c : v.children) {
      out << "  v" << i << " -> v" << c;
      if (m.verts[c].arm >= 0)
        out << " [label=\"arm " << m.verts[c].arm << "\"]";
      out << ";\n";
    }
    if (v.recursive && v.recursion_target != kNoVertex)
      out << "  v" << i << " -> v" << v.recursion_target
          << " [style=dashed, label=\"recursion\"];\n";
  }
  out << "}\n";
  return out.str();
}

std::string Psg::Write(PsgFormat format) const {
  switch (format) {
  case PsgFormat::Text:
    return ToText();
  case PsgFormat::Json:
    return ToJson();
  case PsgFormat::Dot:
    return ToDot();
  }
  return ToText();
}

} // namespace scalana
