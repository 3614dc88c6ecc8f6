// Small records between the processes of a sharded analysis (shard_link.h):
// numbers and strings appended to a byte string and read back in the same
// order, by processes of one build on one kind of machine (so numbers go as
// their bytes). A short record is an internal error, not a file's fault.
#pragma once

#include "scalana/profile.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace scalana::shard {

struct Out {
  std::string b;
  template <class T> void Put(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    b.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  void Str(const std::string &s) {
    Put(uint64_t(s.size()));
    b += s;
  }
};

struct In {
  const std::string &b;
  size_t at = 0;
  explicit In(const std::string &bytes) : b(bytes) {}
  void Need(size_t n) const {
    if (n > b.size() - at)
      throw Error("sharded analysis: a record from another analysis process ends early");
  }
  template <class T> T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    Need(sizeof(T));
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string Str() {
    uint64_t n = Get<uint64_t>();
    Need(size_t(n));
    std::string s = b.substr(at, size_t(n));
    at += size_t(n);
    return s;
  }
};

} // namespace scalana::shard
