// The recovered structure written as the pass writes its records
// (docs/formats.md section 2), so that ParsePsgSections reads it as any PSG.
#include "structure_internal.h"

#include "scalana/ids.h"

#include <llvm/Demangle/Demangle.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <tuple>

namespace scalana::structure {
namespace {

// KEY demangled, without the suffixes GCC gives the clones it makes
// (foo.constprop.0, foo.isra.0, foo.part.0, foo.cold): the reader wrote foo.
std::string ReadableName(const std::string &key) {
  std::string k = key;
  for (bool cut = true; cut;) {
    cut = false;
    for (const char *suffix : {".constprop", ".isra", ".part", ".cold", ".lto_priv"}) {
      size_t at = k.rfind(suffix);
      if (at == std::string::npos || at == 0)
        continue;
      size_t end = at + std::strlen(suffix);
      while (end < k.size() && (k[end] == '.' || std::isdigit(static_cast<unsigned char>(k[end]))))
        ++end;
      if (end == k.size()) {
        k.resize(at);
        cut = true;
      }
    }
  }
  return llvm::demangle(k);
}

} // namespace

void WriteRecords(std::map<std::string, Record> &records, const std::string &object,
                  RecoveredStructure *out) {
  using nlohmann::json;
  json functions = json::array();
  for (auto &[key, r] : records) {
    // Children in source order: the closest to the execution order the
    // machine code's layout does not give.
    for (RecVertex &v : r.v)
      std::sort(v.children.begin(), v.children.end(), [&](int a, int b) {
        const RecVertex &x = r.v[size_t(a)], &y = r.v[size_t(b)];
        return std::tie(x.line, x.column, a) < std::tie(y.line, y.column, b);
      });
    const auto [file, range] = r.lines.Own();
    json vertices = json::array();
    for (size_t i = 0; i < r.v.size(); ++i) {
      const RecVertex &v = r.v[i];
      json j = {{"id", i}, {"kind", std::string(ToString(v.kind))}};
      if (v.parent >= 0)
        j["parent"] = v.parent;
      j["line"] = i == 0 ? range.first : v.line;
      if (v.kind == VertexKind::Function || v.kind == VertexKind::Loop)
        j["end_line"] = i == 0 ? range.last : v.end_line;
      if (v.kind == VertexKind::Loop)
        j["depth"] = v.depth;
      if (v.kind == VertexKind::Call || v.kind == VertexKind::Mpi)
        j["col"] = v.column;
      if (!v.callee.empty())
        j["callee"] = v.callee;
      if (v.indirect)
        j["indirect"] = true;
      if (v.kind == VertexKind::Mpi) {
        j["op"] = v.op;
        j["class"] = std::string(ToString(v.cls));
      }
      if (!v.children.empty())
        j["children"] = v.children;
      vertices.push_back(std::move(j));
    }
    const uint64_t hash = scalana_function_hash(key.data(), key.size());
    char hex[19];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(hash));
    functions.push_back({{"key", key},
                         {"name", ReadableName(key)},
                         {"hash", hex},
                         {"linkage", "external"},
                         {"file", file},
                         {"line", range.first},
                         {"end_line", range.last},
                         {"vertices", std::move(vertices)}});
    ++out->functions;
  }
  // One record per language, as the pass writes one per translation unit.
  std::map<std::string, json> by_language;
  size_t f = 0;
  for (auto &[key, r] : records) {
    json &rec = by_language[r.language];
    if (rec.is_null())
      rec = {{"scalana_psg", kPsgSchemaVersion},
             {"producer", "scalana structure from the binary"},
             {"module", object},
             {"comp_dir", ""},
             {"language", r.language},
             {"opt_level", 2},
             {"functions", json::array()}};
    rec["functions"].push_back(std::move(functions[f++]));
  }
  for (auto &[lang, rec] : by_language) {
    std::string text = rec.dump();
    out->records.insert(out->records.end(), text.begin(), text.end());
    out->records.push_back(0);
  }
}

} // namespace scalana::structure
