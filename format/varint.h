// The bytes of a columnar block (docs/formats.md section 4.3): unsigned
// LEB128 varints, zigzag for signed values, length-prefixed strings and
// columns. The reader never reads past its end: every value is checked
// against the bytes left, and a failure names the block and the column.
#pragma once

#include "scalana/profile.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace scalana::detail {

inline uint64_t Zig(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
inline int64_t Unzig(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

// Seconds as integer nanoseconds, rounded to nearest (times are at most
// kMaxSeconds = 1e9 s, so at most 1e18 ns: they fit).
inline uint64_t Nanos(double seconds) { return uint64_t(std::llround(seconds * 1e9)); }
inline constexpr uint64_t kMaxNanos = uint64_t(1e18);

struct ByteWriter {
  std::string out;
  void Var(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    out.push_back(char(v));
  }
  void Signed(int64_t v) { Var(Zig(v)); }
  void Str(const std::string &s) {
    Var(s.size());
    out += s;
  }
  void Raw64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out.push_back(char(uint8_t(v >> (8 * i))));
  }
  // A column: its byte length, then its bytes.
  void Column(const ByteWriter &c) {
    Var(c.out.size());
    out += c.out;
  }
};

class ByteReader {
public:
  ByteReader() = default;
  ByteReader(const char *data, size_t size, std::string where)
      : p_(reinterpret_cast<const unsigned char *>(data)), end_(p_ + size),
        where_(std::move(where)) {}

  bool AtEnd() const { return p_ == end_; }
  size_t Left() const { return size_t(end_ - p_); }
  const std::string &Where() const { return where_; }

  [[noreturn]] void Fail(const std::string &what) const { throw Error(where_ + ": " + what); }

  uint64_t Var() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        Fail("ends inside a number (truncated)");
      uint8_t b = *p_++;
      if (shift == 63 && b > 1)
        Fail("a number does not fit in 64 bits");
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return v;
    }
    Fail("a number does not fit in 64 bits");
  }
  // A varint at most MAX, refused naming WHAT.
  uint64_t Var(uint64_t max, const char *what) {
    uint64_t v = Var();
    if (v > max)
      Fail(std::string(what) + " " + std::to_string(v) + " is larger than " + std::to_string(max));
    return v;
  }
  int64_t Signed() { return Unzig(Var()); }
  uint64_t Raw64() {
    if (Left() < 8)
      Fail("ends inside a number (truncated)");
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
      v = (v << 8) | p_[i];
    p_ += 8;
    return v;
  }
  std::string Str(const char *what) {
    uint64_t n = Var();
    if (n > Left())
      Fail(std::string(what) + ": a string of " + std::to_string(n) + " bytes, only " +
           std::to_string(Left()) + " left (truncated)");
    std::string s(reinterpret_cast<const char *>(p_), size_t(n));
    p_ += n;
    return s;
  }
  // The next column, named NAME in messages.
  ByteReader Column(const std::string &name) {
    uint64_t n = Var();
    if (n > Left())
      Fail("column " + name + ": " + std::to_string(n) + " bytes, only " + std::to_string(Left()) +
           " left (truncated)");
    ByteReader c(reinterpret_cast<const char *>(p_), size_t(n), where_ + ": " + name);
    p_ += n;
    return c;
  }
  // A column must hold exactly its values.
  void ExpectEnd() const {
    if (!AtEnd())
      Fail(std::to_string(Left()) + " bytes left over after its values");
  }

private:
  const unsigned char *p_ = nullptr, *end_ = nullptr;
  std::string where_;
};

} // namespace scalana::detail
