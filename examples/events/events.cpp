// An event-processing loop whose cost grows with the rank count, after the
// SST study of the ScalAna paper.
//
// Each rank owns --components simulated components (weak scaling: the number
// per rank and the events per rank do not change with the rank count). Every
// step, each rank processes the events in its inbox; processing an event
// schedules a new one for a pseudo-random component anywhere in the job, whose
// owning rank is looked up in a routing table of components x ranks entries.
// The events then travel with MPI_Alltoall/MPI_Alltoallv, and the ranks agree
// on the next simulated time with MPI_Allreduce.
//
// With --inject the routing table is searched linearly, so each lookup costs
// time proportional to the number of ranks: the non-scalable root cause is
// that scan, marked in the code. Without it the table is indexed directly.
//
// usage: events [--inject|-i] [--steps N] [--events N] [--components N]
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

int my_rank = 0, num_ranks = 1;
// Model cost of one event (iterations of its recurrence).
constexpr int kWorkPerEvent = 300;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

struct Event {
  int64_t time;
  int32_t component; // global id of the component the event is for
  int32_t hops;
  double payload;
};

// Routing table from a key to a value, stored as (key, value) pairs in key
// order. Both lookups are kept free of calls in their loops so that the time
// lands on this source, not on library code.
template <typename Key, typename Value> class RoutingTable {
public:
  void Add(Key key, Value value) { entries_.push_back({key, value}); }

  // What a careful implementation does: keys are dense, index them.
  Value FindDirect(Key key) const { return entries_[static_cast<size_t>(key)].value; }

  // The injected non-scalable lookup: cost grows with the table, i.e. with
  // the number of ranks.
  Value FindLinear(Key key) const {
    const Entry *entry = entries_.data();
    size_t count = entries_.size();
    for (size_t i = 0; i < count; ++i) // ROOT CAUSE: linear scan over all ranks' components
      if (entry[i].key == key)
        return entry[i].value;
    return Value{-1};
  }

  size_t size() const { return entries_.size(); }

private:
  struct Entry {
    Key key;
    Value value;
  };
  std::vector<Entry> entries_;
};

class Simulator {
public:
  Simulator(int components_per_rank, int events_per_rank, bool linear_lookup)
      : components_per_rank_(components_per_rank), linear_lookup_(linear_lookup),
        seed_(0x9e3779b9u * static_cast<uint32_t>(my_rank + 1)) {
    for (int32_t c = 0; c < components_per_rank * num_ranks; ++c)
      route_.Add(c, c / components_per_rank);
    for (int e = 0; e < events_per_rank; ++e)
      inbox_.push_back({0, my_rank * components_per_rank + e % components_per_rank, 0, 1.0});
  }

  // Processes the inbox and delivers the new events; returns the earliest
  // next event time over all ranks.
  int64_t Step() {
    std::vector<std::vector<Event>> outbox(num_ranks);
    int64_t next_time = INT64_MAX;
    for (const Event &event : inbox_) {
      Event spawned = Process(event);
      int32_t owner = linear_lookup_ ? route_.FindLinear(spawned.component)
                                     : route_.FindDirect(spawned.component);
      outbox[owner].push_back(spawned);
      if (spawned.time < next_time)
        next_time = spawned.time;
    }
    Deliver(outbox);
    int64_t global_next;
    MPI_Allreduce(&next_time, &global_next, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    return global_next;
  }

  size_t inbox_size() const { return inbox_.size(); }
  size_t table_size() const { return route_.size(); }
  double checksum() const { return checksum_; }

private:
  // The model's work per event: a short recurrence, the same on every rank.
  Event Process(const Event &event) {
    double x = event.payload;
    for (int k = 0; k < kWorkPerEvent; ++k)
      x = x * 0.999 + 0.001 * (k & 3);
    checksum_ += x;
    seed_ = seed_ * 1664525u + 1013904223u;
    int32_t target = static_cast<int32_t>((seed_ >> 8) % (components_per_rank_ * num_ranks));
    return {event.time + 1 + (seed_ & 7), target, event.hops + 1, x};
  }

  void Deliver(const std::vector<std::vector<Event>> &outbox) {
    std::vector<int> send_counts(num_ranks), recv_counts(num_ranks);
    std::vector<int> send_displs(num_ranks), recv_displs(num_ranks);
    std::vector<Event> send_buffer;
    for (int r = 0; r < num_ranks; ++r) {
      send_displs[r] = static_cast<int>(send_buffer.size() * sizeof(Event));
      send_counts[r] = static_cast<int>(outbox[r].size() * sizeof(Event));
      send_buffer.insert(send_buffer.end(), outbox[r].begin(), outbox[r].end());
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < num_ranks; ++r)
      recv_displs[r] = total, total += recv_counts[r];
    inbox_.assign(total / sizeof(Event), Event{});
    MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_displs.data(), MPI_BYTE,
                  inbox_.data(), recv_counts.data(), recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  }

  int components_per_rank_;
  bool linear_lookup_;
  uint32_t seed_;
  double checksum_ = 0.0;
  RoutingTable<int32_t, int32_t> route_;
  std::vector<Event> inbox_;
};

long ParseLong(const char *text) {
  // -1 when TEXT is not a non-negative integer; main reports it.
  char *end;
  long v = std::strtol(text ? text : "", &end, 10);
  return (!text || !*text || *end || v < 0) ? -1 : v;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  bool inject = false, bad_usage = false;
  long steps = 30, events = 4000, components = 1024;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--inject") || !std::strcmp(argv[a], "-i"))
      inject = true;
    else if (!std::strcmp(argv[a], "--steps"))
      steps = ParseLong(argv[a + 1]), ++a;
    else if (!std::strcmp(argv[a], "--events"))
      events = ParseLong(argv[a + 1]), ++a;
    else if (!std::strcmp(argv[a], "--components"))
      components = ParseLong(argv[a + 1]), ++a;
    else
      bad_usage = true;
  }
  if (bad_usage || steps < 1 || events < 1 || components < 1) {
    if (my_rank == 0)
      std::fprintf(stderr,
                   "usage: events [--inject|-i] [--steps N] [--events N] [--components N]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  Simulator sim(static_cast<int>(components), static_cast<int>(events), inject);
  double t0 = CpuSeconds();
  int64_t now = 0;
  for (long s = 0; s < steps; ++s)
    now = sim.Step();
  double cpu = CpuSeconds() - t0, cpu_max;

  // In-program check of the effect, in CPU time.
  MPI_Reduce(&cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (my_rank == 0)
    std::printf("events: np=%d inject=%d table %zu entries, sim time %lld, "
                "step loop cpu max %.3f s (%g)\n",
                num_ranks, inject ? 1 : 0, sim.table_size(), static_cast<long long>(now), cpu_max,
                sim.checksum());
  MPI_Finalize();
  return 0;
}
