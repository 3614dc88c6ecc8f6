// Building a run's PPG from its profile one part (group of ranks) at a time,
// so that no whole-run Profile is ever held: each part's rows are folded into
// the per-vertex arrays as it arrives and the part is dropped. Parts carry
// their own contexts and communicators (profile format 3's groups); contexts
// are resolved once per distinct context, communicators numbered run-wide.
#pragma once

#include "detect/ppg.h"

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

private:
  struct State;
  std::unique_ptr<State> st_;
};

} // namespace scalana
