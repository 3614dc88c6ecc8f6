// See group_split.h.
#include "group_split.h"

#include <vector>

namespace scalana::detail {

namespace {

// Old index -> new index, assigned on first use.
struct Renumber {
  std::vector<uint32_t> map;
  std::vector<uint32_t> order; // new -> old
  explicit Renumber(size_t n) : map(n, UINT32_MAX) {}
  uint32_t operator()(uint32_t old) {
    if (old >= map.size())
      throw Error("splitting a profile into groups: index " + std::to_string(old) +
                  " out of range (" + std::to_string(map.size()) + " entries)");
    if (map[old] == UINT32_MAX) {
      map[old] = uint32_t(order.size());
      order.push_back(old);
    }
    return map[old];
  }
};

} // namespace

Profile GroupOf(const Profile &p, size_t begin, size_t end) {
  Profile g;
  g.meta = p.meta;
  g.meta.modules.clear();
  Renumber ctx(p.contexts.size()), comm(p.comms.size());
  g.ranks.assign(p.ranks.begin() + long(begin), p.ranks.begin() + long(end));
  for (RankData &r : g.ranks) {
    for (VertexRow &v : r.vertices)
      v.ctx = ctx(v.ctx);
    for (MpiRow &m : r.mpi)
      m.ctx = ctx(m.ctx);
    for (DepRow &d : r.deps) {
      d.ctx = ctx(d.ctx);
      // Index 0 of an empty comms list is the reader's "no communicator".
      if (!(p.comms.empty() && d.comm == 0))
        d.comm = comm(d.comm);
    }
    for (ThreadRow &t : r.thread_vertices)
      t.ctx = ctx(t.ctx);
    for (OmpRow &o : r.omp)
      o.ctx = ctx(o.ctx);
    for (OffCpuRow &o : r.off_cpu)
      o.ctx = ctx(o.ctx);
  }
  for (uint32_t old : comm.order)
    g.comms.push_back(p.comms[old]);
  // Modules: those the group's frames name, in P's order.
  std::vector<uint32_t> module_map(p.meta.modules.size() + 1, 0);
  for (uint32_t old : ctx.order)
    for (uint64_t f : p.contexts[old])
      if (f != kFramesTruncated) {
        uint32_t k = FrameModule(f);
        if (k > p.meta.modules.size())
          throw Error("splitting a profile into groups: frame of module " + std::to_string(k) +
                      " out of range");
        if (k)
          module_map[k] = 1;
      }
  for (size_t k = 1; k < module_map.size(); ++k)
    if (module_map[k]) {
      g.meta.modules.push_back(p.meta.modules[k - 1]);
      module_map[k] = uint32_t(g.meta.modules.size());
    }
  for (uint32_t old : ctx.order) {
    Context c = p.contexts[old];
    for (uint64_t &f : c)
      if (f != kFramesTruncated && FrameModule(f))
        f = WithFrameModule(f, module_map[FrameModule(f)]);
    g.contexts.push_back(std::move(c));
  }
  return g;
}

} // namespace scalana::detail
