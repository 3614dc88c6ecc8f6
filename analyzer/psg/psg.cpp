// Whole-program PSG: building it from the parsed functions, Resolve and the
// queries. docs/psg.md describes the rules; docs/formats.md section 2 the
// records. The parts: psg_section.cpp (the section's records),
// psg_templates.cpp (analysis, contraction), psg_expand.cpp (materialising),
// psg_write.cpp (writers); psg_impl.h the state they share.
#include "psg_impl.h"

#include "scalana/elf_section.h"
#include "scalana/ids.h"

#include <algorithm>
#include <limits>

namespace scalana {

using namespace psg_internal;

namespace {

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

} // namespace

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
  Psg p = BuildFromSections(binary, sections, opts,
                            " has an empty scalana_psg section: rebuild it with scalana-cc, "
                            "scalana-cxx or scalana-fc");
  p.impl_->psg_id = exe_psg_id;
  p.impl_->build_id = exe_build_id;
  p.impl_->libraries = libraries;
  p.impl_->library_ids = std::move(library_ids);
  return p;
}

Psg Psg::LoadFromRecords(const std::string &binary, const std::string &build_id,
                         const std::vector<uint8_t> &records, const std::string &source,
                         const PsgOptions &opts) {
  Psg p = BuildFromSections(binary, {PsgSection{binary, records}}, opts,
                            ": no function with line tables: its structure cannot be "
                            "recovered; rebuild it with -g, or with scalana-cc, scalana-cxx or "
                            "scalana-fc");
  p.impl_->build_id = build_id;
  p.impl_->structure_source = source;
  return p;
}

Psg Psg::BuildFromSections(const std::string &binary, const std::vector<PsgSection> &sections,
                           const PsgOptions &opts, const char *when_empty) {
  std::vector<std::string> warnings;
  std::vector<LocalPsg> fns = ParsePsgSections(sections, &warnings); // errors name the object
  if (fns.empty())
    throw Error(binary + when_empty);
  Psg p;
  try {
    p = Build(std::move(fns), opts);
  } catch (const Error &e) {
    throw Error(binary + ": " + e.what());
  }
  p.impl_->binary = binary;
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
const std::string &Psg::structure_source() const { return impl_->structure_source; }
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

} // namespace scalana
