// Building a run's PPG from its profile one part (group of ranks) at a time,
// so that no whole-run Profile is ever held: each part's rows are folded into
// the per-vertex arrays as it arrives and the part is dropped. Parts carry
// their own contexts and communicators (profile format 3's groups); contexts
// are resolved once per distinct context, communicators numbered run-wide.
#pragma once

#include "ppg/ppg.h"
#include "ppg/shard_link.h"

#include <memory>

namespace scalana {

class RunBuilder {
public:
  RunBuilder(Psg &psg, const std::string &label, const ProgressFn &progress = {});
  ~RunBuilder();
  RunBuilder(const RunBuilder &) = delete;
  RunBuilder &operator=(const RunBuilder &) = delete;

  // Folds PART's ranks in. Parts may come in any order; a rank in two parts
  // (or twice in one) is kept where first met. Throws Error on a world size
  // or rank outside the limits.
  void Add(const Profile &part);
  // Matches point-to-point rows across parts, computes inclusive times and
  // the warnings; the builder is spent.
  Run Finish();

  // A build split among processes (docs/detect.md section 9): each adds its
  // parts, the others send what they folded to process TO, which receives it
  // from each in the order of their parts (ReceiveFrom 1, 2, ...) and then
  // finishes. The result is the PPG one builder given every part in that
  // order makes: contexts resolved, series, communicators and edges
  // numbered in the same order. SendTo spends the builder.
  void SendTo(ShardLink &link, int to);
  void ReceiveFrom(ShardLink &link, int from);

private:
  struct State;
  std::unique_ptr<State> st_;
};

} // namespace scalana
