#include "export/export.h"

#include "report/report_common.h"
#include "scalana/profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace scalana {

using json = nlohmann::json;

namespace {

std::string Base(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Per-slot values of one vertex in one run.
struct Values {
  std::vector<double> exc, inc, cpu, off_cpu, mpi, wait, samples;
};

Values ValuesOf(const Psg &psg, const Run &run, VertexId v) {
  Values x;
  const int n = run.nslots();
  for (auto *vec : {&x.exc, &x.inc, &x.cpu, &x.off_cpu, &x.mpi, &x.wait, &x.samples})
    vec->assign(n, 0);
  const VertexSeries *s = run.Find(v);
  if (!s)
    return x;
  for (int i = 0; i < n; ++i) {
    x.exc[i] = ExclusiveTime(psg, *s, i);
    x.inc[i] = InclusiveTime(*s, i);
    x.cpu[i] = s->cpu.empty() ? 0 : s->cpu[i];
    x.off_cpu[i] = s->off_cpu.empty() ? 0 : s->off_cpu[i];
    x.mpi[i] = s->mpi.empty() ? 0 : s->mpi[i];
    x.samples[i] = std::round(x.cpu[i] * run.sample_rate);
  }
  for (const DepEdge &e : s->edges) {
    int slot = run.SlotOf(e.rank);
    if (slot >= 0)
      x.wait[slot] += e.wait;
  }
  return x;
}

double Max(const std::vector<double> &v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}
double Mean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / double(v.size());
}
double Sum(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

std::string XmlEscape(const std::string &s) {
  std::string o;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else if (u < 0x20 && c != '\t' && c != '\n')
      o += ' '; // XML 1.0 has no way to write other controls
    else
      o += c;
  }
  return o;
}

void WriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    throw Error(path + ": cannot write here (" + std::strerror(errno) + "); check -o");
  f.write(bytes.data(), std::streamsize(bytes.size()));
  f.flush();
  if (!f)
    throw Error(path + ": write failed");
}

void MakeDir(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error(dir + ": cannot create the output directory (" +
                (ec ? ec.message() : std::string("a file of that name exists")) + "); check -o");
}

} // namespace

std::string ExportNodeName(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  if (x.kind == VertexKind::Function)
    return report_common::FunctionName(psg, v);
  std::string what = x.kind == VertexKind::Mpi || x.kind == VertexKind::Call
                         ? report_common::VertexName(psg, v)
                         : std::string(ToString(x.kind));
  return what + " at " + Base(report_common::FileOf(psg, v)) + ":" + std::to_string(x.loc.line);
}

std::string ExportName(const Psg &psg, VertexId v) {
  std::string name = ExportNodeName(psg, v);
  VertexId parent = psg.vertex(v).parent;
  if (parent == kNoVertex)
    return name;
  const Vertex &x = psg.vertex(v);
  int k = 1;
  for (VertexId s : psg.vertex(parent).children) {
    if (s == v)
      break;
    const Vertex &y = psg.vertex(s);
    // The name holds the kind and, but for functions, the line: compare
    // those first (a parent may have thousands of children).
    if (y.kind == x.kind && (x.kind == VertexKind::Function || y.loc.line == x.loc.line))
      k += ExportNodeName(psg, s) == name;
  }
  return k > 1 ? name + "#" + std::to_string(k) : name;
}

std::string ExtrapName(const Psg &psg, VertexId v) {
  std::string name = ExportName(psg, v);
  for (size_t p; (p = name.find("->")) != std::string::npos;)
    name.replace(p, 2, "-_");
  return name;
}

std::vector<VertexId> ExportTree(const Psg &psg, const Run &run) {
  std::vector<VertexId> out;
  if (psg.root() == kNoVertex)
    return out;
  std::vector<VertexId> stack{psg.root()};
  while (!stack.empty()) {
    VertexId v = stack.back();
    stack.pop_back();
    if (v != psg.root() && !run.Find(v))
      continue;
    out.push_back(v);
    const auto &ch = psg.vertex(v).children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it)
      stack.push_back(*it);
  }
  return out;
}

std::string ExportRunName(const std::vector<Run> &runs, size_t run) {
  int rep = 1;
  for (size_t i = 0; i < run; ++i)
    rep += runs[i].world_size == runs[run].world_size;
  return "scalana.p" + std::to_string(runs[run].world_size) + ".r" + std::to_string(rep);
}

// ------------------------------------------------------------------ Extra-P

void WriteExtrapJson(const ExportInput &in, std::ostream &out) {
  // callpath -> metric -> ranks -> values (runs with one rank count are
  // repetitions of one point).
  std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>> m;
  std::vector<std::string> order;
  std::map<int, size_t> reps;
  for (const Run &run : in.runs)
    ++reps[run.world_size];
  for (const Run &run : in.runs) {
    std::map<VertexId, std::string> path;
    for (VertexId v : ExportTree(in.psg, run)) {
      VertexId parent = in.psg.vertex(v).parent;
      std::string name = ExtrapName(in.psg, v);
      std::string cp = path.count(parent) ? path[parent] + "->" + name : name;
      path[v] = cp;
      if (!m.count(cp))
        order.push_back(cp);
      Values x = ValuesOf(in.psg, run, v);
      m[cp]["time"][run.world_size].push_back(Max(x.exc));
      m[cp]["time_mean"][run.world_size].push_back(Mean(x.exc));
      m[cp]["time_incl"][run.world_size].push_back(Max(x.inc));
    }
  }
  json meas = json::object();
  for (const std::string &cp : order) {
    json metrics = json::object();
    for (auto &[metric, points] : m[cp]) {
      json list = json::array();
      for (auto &[p, n] : reps) {
        // A vertex a run did not reach measured 0 there.
        std::vector<double> v = points.count(p) ? points[p] : std::vector<double>();
        v.resize(std::max(v.size(), n), 0.0);
        list.push_back({{"point", {p}}, {"values", v}});
      }
      metrics[metric] = list;
    }
    meas[cp] = metrics;
  }
  json doc = {{"parameters", {"p"}}, {"measurements", meas}};
  out << doc.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
}

// ------------------------------------------------------------------ Hatchet

void WriteHatchetLiteral(const ExportInput &in, size_t r, std::ostream &out) {
  const Run &run = in.runs[r];
  std::vector<VertexId> tree = ExportTree(in.psg, run);
  std::map<VertexId, json> nodes;
  // Children before parents: the reverse of pre-order.
  for (auto it = tree.rbegin(); it != tree.rend(); ++it) {
    VertexId v = *it;
    const Vertex &x = in.psg.vertex(v);
    Values val = ValuesOf(in.psg, run, v);
    int ranks = 0;
    for (double t : val.inc)
      ranks += t > 0;
    json node = {{"frame",
                  {{"name", ExportName(in.psg, v)},
                   {"type", ToString(x.kind)},
                   {"file", report_common::FileOf(in.psg, v)},
                   {"line", x.loc.line}}},
                 {"metrics",
                  {{"time (inc)", Max(val.inc)},
                   {"time", Max(val.exc)},
                   {"time (mean)", Mean(val.exc)},
                   {"cpu", Max(val.cpu)},
                   {"off cpu", Max(val.off_cpu)},
                   {"mpi", Max(val.mpi)},
                   {"mpi wait", Sum(val.wait)},
                   {"samples", Sum(val.samples)},
                   {"ranks", ranks}}},
                 {"children", json::array()}};
    for (VertexId c : x.children)
      if (nodes.count(c))
        node["children"].push_back(std::move(nodes[c]));
    nodes[v] = std::move(node);
  }
  json doc = json::array();
  if (!tree.empty())
    doc.push_back(std::move(nodes[tree.front()]));
  out << doc.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
}

// ------------------------------------------------------------------ CUBE4

std::string TarArchive(const std::vector<std::pair<std::string, std::string>> &files) {
  std::string tar;
  for (const auto &[name, content] : files) {
    if (name.size() > 99)
      throw Error("tar member name too long: " + name);
    char h[512] = {};
    std::memcpy(h, name.data(), name.size());
    std::snprintf(h + 100, 8, "%07o", 0644);
    std::snprintf(h + 108, 8, "%07o", 0);
    std::snprintf(h + 116, 8, "%07o", 0);
    std::snprintf(h + 124, 12, "%011llo", (unsigned long long)content.size());
    std::snprintf(h + 136, 12, "%011o", 0);
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memset(h + 148, ' ', 8); // the checksum counts its own field as spaces
    unsigned sum = 0;
    for (unsigned char c : h)
      sum += c;
    std::snprintf(h + 148, 8, "%06o", sum);
    h[155] = ' ';
    tar.append(h, 512);
    tar += content;
    tar.append((512 - content.size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');
  return tar;
}

std::string CubexArchive(const ExportInput &in, size_t r) {
  const Run &run = in.runs[r];
  const std::vector<VertexId> tree = ExportTree(in.psg, run);
  std::map<VertexId, size_t> cnode; // pre-order position = cnode id (pycubexr's enumeration)
  for (size_t i = 0; i < tree.size(); ++i)
    cnode[tree[i]] = i;
  struct Metric {
    const char *uniq, *disp, *uom, *descr;
    std::vector<double> Values::*field;
  };
  const Metric metrics[] = {
      {"time", "Time", "sec", "exclusive time (CPU and blocked, or MPI wall time)", &Values::exc},
      {"cpu_time", "CPU time", "sec", "sampled CPU time", &Values::cpu},
      {"off_cpu_time", "Off-CPU time", "sec", "time blocked off the CPU outside calls",
       &Values::off_cpu},
      {"mpi_time", "MPI time", "sec", "wall time in MPI calls", &Values::mpi},
      {"mpi_wait", "MPI wait", "sec", "time blocked on other ranks", &Values::wait},
      {"samples", "Samples", "occ", "CPU samples", &Values::samples},
  };
  const auto &counters = run.meta.sampling.counters;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cube version=\"4.4\">\n"
    << " <attr key=\"Creator\" value=\"ScalAna\"/>\n <attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n"
    << " <doc><mirrors></mirrors></doc>\n <metrics>\n";
  size_t id = 0;
  for (const Metric &m : metrics)
    x << "  <metric id=\"" << id++ << "\" type=\"EXCLUSIVE\">\n   <disp_name>" << m.disp
      << "</disp_name>\n   <uniq_name>" << m.uniq << "</uniq_name>\n   <dtype>DOUBLE</dtype>\n"
      << "   <uom>" << m.uom << "</uom>\n   <url></url>\n   <descr>" << m.descr
      << "</descr>\n  </metric>\n";
  for (const std::string &c : counters)
    x << "  <metric id=\"" << id++ << "\" type=\"EXCLUSIVE\">\n   <disp_name>" << XmlEscape(c)
      << "</disp_name>\n   <uniq_name>" << XmlEscape(c)
      << "</uniq_name>\n   <dtype>DOUBLE</dtype>\n   <uom>occ</uom>\n   <url></url>\n"
      << "   <descr>hardware counter</descr>\n  </metric>\n";
  x << " </metrics>\n <program>\n";
  // One region per cnode: the vertices are distinct program points.
  for (size_t i = 0; i < tree.size(); ++i) {
    VertexId v = tree[i];
    const Vertex &vx = in.psg.vertex(v);
    std::string fn = in.psg.vertex(v).function >= 0 ? in.psg.FunctionOf(v).key : "";
    x << "  <region id=\"" << i << "\" mod=\"" << XmlEscape(report_common::FileOf(in.psg, v))
      << "\" begin=\"" << vx.loc.line << "\" end=\"" << vx.loc.line << "\">\n   <name>"
      << XmlEscape(ExtrapName(in.psg, v)) << "</name>\n   <mangled_name>"
      << XmlEscape(vx.kind == VertexKind::Function ? fn : ExportNodeName(in.psg, v))
      << "</mangled_name>\n   <paradigm>" << (vx.kind == VertexKind::Mpi ? "mpi" : "compiler")
      << "</paradigm>\n   <role>"
      << (vx.kind == VertexKind::Function ? "function" : ToString(vx.kind))
      << "</role>\n   <url></url>\n   <descr></descr>\n  </region>\n";
  }
  // Nested cnodes, closing each when the walk leaves its subtree.
  std::vector<VertexId> open;
  auto close_to = [&](VertexId parent) {
    while (!open.empty() && open.back() != parent) {
      x << std::string(2 + open.size(), ' ') << "</cnode>\n";
      open.pop_back();
    }
  };
  for (size_t i = 0; i < tree.size(); ++i) {
    close_to(i == 0 ? kNoVertex : in.psg.vertex(tree[i]).parent);
    x << std::string(3 + open.size(), ' ') << "<cnode id=\"" << i << "\" calleeId=\"" << i
      << "\">\n";
    open.push_back(tree[i]);
  }
  close_to(kNoVertex);
  x << " </program>\n <system>\n  <systemtreenode Id=\"0\">\n   <name>machine</name>\n"
    << "   <class>machine</class>\n   <systemtreenode Id=\"1\">\n    <name>node</name>\n"
    << "    <class>node</class>\n";
  for (int s = 0; s < run.nslots(); ++s)
    x << "    <locationgroup Id=\"" << s << "\">\n     <name>rank " << run.ranks[s]
      << "</name>\n     <rank>" << run.ranks[s] << "</rank>\n     <type>process</type>\n"
      << "     <location Id=\"" << s << "\">\n      <name>rank " << run.ranks[s]
      << "</name>\n      <rank>0</rank>\n      <type>thread</type>\n     </location>\n"
      << "    </locationgroup>\n";
  x << "   </systemtreenode>\n  </systemtreenode>\n </system>\n</cube>\n";

  std::vector<std::pair<std::string, std::string>> files{{"anchor.xml", x.str()}};
  // Index: every cnode, dense. Data: cnode by cnode, each with one value per
  // location, little-endian doubles (this writer runs little-endian hosts only).
  std::string index = "CUBEX.INDEX";
  auto put32 = [](std::string &s, uint32_t v) {
    for (int b = 0; b < 4; ++b)
      s += char((v >> (8 * b)) & 0xff);
  };
  put32(index, 1);
  index += std::string("\0\0", 2); // version
  index += char(1);                // sparse index type: the list of cnodes below
  put32(index, uint32_t(tree.size()));
  for (size_t i = 0; i < tree.size(); ++i)
    put32(index, uint32_t(i));
  std::vector<Values> vals;
  for (VertexId v : tree)
    vals.push_back(ValuesOf(in.psg, run, v));
  auto data_of = [&](const std::function<double(size_t, int)> &value) {
    std::string d = "CUBEX.DATA";
    for (size_t i = 0; i < tree.size(); ++i)
      for (int s = 0; s < run.nslots(); ++s) {
        double v = value(i, s);
        char b[8];
        std::memcpy(b, &v, 8);
        d.append(b, 8);
      }
    return d;
  };
  id = 0;
  for (const Metric &m : metrics) {
    files.push_back({std::to_string(id) + ".index", index});
    files.push_back({std::to_string(id) + ".data",
                     data_of([&](size_t i, int s) { return (vals[i].*m.field)[s]; })});
    ++id;
  }
  for (size_t c = 0; c < counters.size(); ++c) {
    files.push_back({std::to_string(id) + ".index", index});
    files.push_back({std::to_string(id) + ".data", data_of([&](size_t i, int s) {
                       const VertexSeries *vs = run.Find(tree[i]);
                       if (!vs || vs->counters.size() != counters.size() * run.nslots())
                         return 0.0;
                       return double(vs->counters[size_t(s) * counters.size() + c]);
                     })});
    ++id;
  }
  return TarArchive(files);
}

std::vector<std::string> Export(const ExportInput &in, const std::string &format,
                                const std::string &out) {
  std::vector<std::string> written;
  if (format == "extrap") {
    std::ostringstream s;
    WriteExtrapJson(in, s);
    WriteFile(out, s.str());
    written.push_back(out);
  } else if (format == "hatchet" || format == "cube") {
    MakeDir(out);
    for (size_t r = 0; r < in.runs.size(); ++r) {
      std::string name = ExportRunName(in.runs, r);
      if (format == "hatchet") {
        std::ostringstream s;
        WriteHatchetLiteral(in, r, s);
        written.push_back(out + "/" + name + ".json");
        WriteFile(written.back(), s.str());
      } else {
        MakeDir(out + "/" + name);
        written.push_back(out + "/" + name + "/profile.cubex");
        WriteFile(written.back(), CubexArchive(in, r));
      }
    }
  } else {
    throw Error("unknown export format '" + format + "' (extrap, hatchet, cube, ppg-dot)");
  }
  return written;
}

} // namespace scalana
