// Reading the `scalana_psg` section: its records, checked one by one, joined
// over the sections of a program's modules, with the indirect calls'
// candidates of the whole program. docs/formats.md section 2.
#include "omp.h"
#include "psg.h"

#include "scalana/elf_section.h"
#include "scalana/ids.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace scalana {

namespace {

using json = nlohmann::json;

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

} // namespace scalana
