// Format 2's document written as JSON (docs/formats.md section 3), and
// format 3's meta section.
#include "profile_internal.h"
#include "profile_json.h"

namespace scalana::detail {
namespace {

using json = nlohmann::json;

// Format 2 lists every member.
json CommsJson(const std::vector<CommMembers> &comms) {
  json out = json::array();
  for (const CommMembers &m : comms)
    out.push_back(m.ToVector());
  return out;
}

} // namespace

json MetaToJson(const ProfileMeta &m) {
  json s = {{"source", m.sampling.source},
            {"hz", m.sampling.hz},
            {"clock", m.sampling.clock},
            {"counters", m.sampling.counters},
            {"counters_real", m.sampling.counters_real},
            {"note", m.sampling.note}};
  json modules = json::array();
  for (const ModuleInfo &mod : m.modules)
    modules.push_back({{"path", mod.path}, {"build_id", mod.build_id}, {"psg_id", mod.psg_id}});
  return {{"complete", m.complete}, {"world_size", m.world_size},   {"binary", m.binary},
          {"build_id", m.build_id}, {"psg_id", m.psg_id},           {"modules", std::move(modules)},
          {"args", m.args},         {"mpi_library", m.mpi_library}, {"start_time", m.start_time},
          {"run_id", m.run_id},     {"wall_time", m.wall_time},     {"sampling", s},
          {"config", m.config}};
}

json ProfileToJsonValue(const Profile &p) {
  json contexts = json::array();
  for (const Context &c : p.contexts) {
    json ids = json::array();
    for (uint64_t id : c)
      ids.push_back(FormatId(id));
    contexts.push_back(std::move(ids));
  }
  json ranks = json::array();
  for (const RankData &r : p.ranks) {
    json vertices = json::array(), mpi = json::array(), deps = json::array();
    for (const VertexRow &v : r.vertices)
      vertices.push_back({v.ctx, v.samples, v.cpu_seconds, v.counters});
    for (const MpiRow &m : r.mpi) {
      mpi.push_back({m.ctx, m.calls, m.seconds, m.bytes});
      if (!m.op.empty())
        mpi.back().push_back(m.op);
    }
    for (const DepRow &d : r.deps) {
      deps.push_back(
          {d.ctx, ToString(d.kind), d.peer, d.tag, d.comm, d.count, d.bytes, d.wait_seconds});
      if (!d.seqs.empty()) {
        json seqs = json::array();
        for (const SeqRange &q : d.seqs)
          seqs.push_back({q.first, q.last});
        deps.back().push_back(std::move(seqs));
      }
    }
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"pid", r.pid},
                     {"threads", r.threads},
                     {"wall_time", r.wall_time},
                     {"samples", r.samples},
                     {"samples_dropped", r.samples_dropped},
                     {"errors", r.errors},
                     {"vertices", std::move(vertices)},
                     {"mpi", std::move(mpi)},
                     {"deps", std::move(deps)}});
    // How the rank ended (optional): only in files of runs that did not
    // reach a complete profile.
    if (r.snapshot)
      ranks.back()["snapshot"] = true;
    if (r.end_signal)
      ranks.back()["end_signal"] = r.end_signal;
    if (r.cpu_time > 0)
      ranks.back()["cpu_time"] = r.cpu_time;
    if (r.sampling_blocked > 0)
      ranks.back()["sampling_blocked"] = r.sampling_blocked;
    if (r.on_cpu > 0 || r.run_delay > 0) {
      ranks.back()["on_cpu"] = r.on_cpu;
      ranks.back()["run_delay"] = r.run_delay;
    }
    if (r.cores > 0)
      ranks.back()["cores"] = r.cores;
    if (!r.off_cpu.empty()) {
      json rows = json::array();
      for (const OffCpuRow &o : r.off_cpu)
        rows.push_back({o.ctx, o.thread, o.switches, o.blocked, o.run_delay});
      ranks.back()["off_cpu"] = std::move(rows);
    }
    // The thread dimension (optional): only where the rank had threads.
    if (!r.thread_info.empty()) {
      json info = json::array(), rows = json::array(), omp = json::array();
      for (const ThreadInfo &t : r.thread_info)
        info.push_back(
            {t.index, t.omp_thread, t.samples, t.cpu_seconds, t.run_delay, t.wall_seconds});
      for (const ThreadRow &t : r.thread_vertices)
        rows.push_back({t.ctx, t.thread, t.samples, t.cpu_seconds});
      for (const OmpRow &o : r.omp)
        omp.push_back(
            {o.ctx, o.thread, o.kind, o.count, o.seconds, o.samples, o.cpu_seconds, o.iterations});
      ranks.back()["thread_info"] = std::move(info);
      ranks.back()["thread_vertices"] = std::move(rows);
      ranks.back()["omp"] = std::move(omp);
    }
  }
  return {{"format", kProfileFormatName}, {"version", kProfileFormatVersion},
          {"meta", MetaToJson(p.meta)},   {"contexts", std::move(contexts)},
          {"comms", CommsJson(p.comms)},  {"ranks", std::move(ranks)}};
}

std::string MetaSectionJson(const ProfileMeta &meta) {
  json m = MetaToJson(meta);
  m.erase("modules");
  return json{{"meta", std::move(m)}}.dump();
}

} // namespace scalana::detail
