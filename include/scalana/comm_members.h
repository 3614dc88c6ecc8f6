// The members of a communicator as world ranks, kept as arithmetic runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace scalana {

// The world ranks of a communicator's members, in the communicator's order,
// as runs (first, stride, count). MPI_COMM_WORLD of a million ranks is one
// run of 12 bytes: expanded, every group of a format-3 profile carried it
// again as 4 MB, and reading a run grew as p^2 / group size. The runs are
// canonical, greedy from the first member as format 3 writes them (a run
// takes the next member while the step stays the same; a lone member has
// stride 0), so two lists are equal exactly when their runs are.
class CommMembers {
public:
  struct Run {
    int first = 0;
    int stride = 0;
    uint32_t count = 0;
    bool operator==(const Run &o) const {
      return first == o.first && stride == o.stride && count == o.count;
    }
    bool operator<(const Run &o) const {
      return first != o.first     ? first < o.first
             : stride != o.stride ? stride < o.stride
                                  : count < o.count;
    }
  };

  class const_iterator {
  public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using pointer = const int *;
    using reference = int;
    using iterator_category = std::forward_iterator_tag;
    const_iterator(const std::vector<Run> *runs, size_t run) : runs_(runs), run_(run) {}
    int operator*() const {
      const Run &r = (*runs_)[run_];
      return int(int64_t(r.first) + int64_t(r.stride) * k_);
    }
    const_iterator &operator++() {
      if (++k_ == (*runs_)[run_].count)
        ++run_, k_ = 0;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator &o) const { return run_ == o.run_ && k_ == o.k_; }
    bool operator!=(const const_iterator &o) const { return !(*this == o); }

  private:
    const std::vector<Run> *runs_;
    size_t run_;
    uint32_t k_ = 0;
  };
  using iterator = const_iterator;
  using value_type = int;

  CommMembers() = default;
  // A list of members is a list of members: both convert.
  CommMembers(std::initializer_list<int> members) {
    for (int m : members)
      push_back(m);
  }
  CommMembers(const std::vector<int> &members) { // NOLINT(google-explicit-constructor)
    for (int m : members)
      push_back(m);
  }

  void push_back(int member) {
    ++size_;
    if (!runs_.empty()) {
      Run &r = runs_.back();
      if (r.count == 1) {
        r.stride = int(int64_t(member) - r.first);
        r.count = 2;
        return;
      }
      if (int64_t(r.first) + int64_t(r.stride) * r.count == member) {
        ++r.count;
        return;
      }
    }
    runs_.push_back({member, 0, 1});
  }
  // FIRST, FIRST + STRIDE, ... COUNT members, which the caller has checked
  // are ints. In O(1) but for its first two members: once the last run has
  // this stride, the rest extend it as one by one they would.
  void AppendRun(int first, int stride, uint32_t count) {
    for (uint32_t done = 0; done < count;) {
      push_back(int(int64_t(first) + int64_t(stride) * done));
      ++done;
      Run &r = runs_.back();
      if (r.count >= 2 && r.stride == stride) {
        r.count += count - done;
        size_ += count - done;
        return;
      }
    }
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<Run> &runs() const { return runs_; }
  const_iterator begin() const { return {&runs_, 0}; }
  const_iterator end() const { return {&runs_, runs_.size()}; }
  int front() const { return runs_.front().first; }
  int back() const {
    const Run &r = runs_.back();
    return int(int64_t(r.first) + int64_t(r.stride) * (r.count - 1));
  }
  // The I-th member (I below size()), in O(runs).
  int operator[](size_t i) const {
    for (const Run &r : runs_) {
      if (i < r.count)
        return int(int64_t(r.first) + int64_t(r.stride) * int64_t(i));
      i -= r.count;
    }
    return -1;
  }
  std::vector<int> ToVector() const { return std::vector<int>(begin(), end()); }
  uint64_t Hash() const {
    uint64_t h = size_ * 0x9e3779b97f4a7c15ull;
    for (const Run &r : runs_)
      for (uint64_t x :
           {uint64_t(uint32_t(r.first)), uint64_t(uint32_t(r.stride)), uint64_t(r.count)})
        h = (h ^ x) * 1099511628211ull;
    return h;
  }

  bool operator==(const CommMembers &o) const { return size_ == o.size_ && runs_ == o.runs_; }
  bool operator!=(const CommMembers &o) const { return !(*this == o); }
  bool operator<(const CommMembers &o) const { return runs_ < o.runs_; }

private:
  std::vector<Run> runs_;
  size_t size_ = 0;
};

} // namespace scalana
