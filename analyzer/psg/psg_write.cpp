// The PSG's writers: text, JSON and DOT (`scalana psg`).
#include "psg_impl.h"

#include "scalana/text_escape.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace scalana {

using namespace psg_internal;
using json = nlohmann::json;

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
