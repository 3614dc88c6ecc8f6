// Reading a JSON document field by field with every value checked: the
// type, the range, finiteness; a failure is a scalana::Error naming where
// the value sits ("ranks[3].vertices[7][1] (samples) is negative"). Used by
// the profile reader (format 2 and format 3's meta section).
#pragma once

#include "scalana/profile.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scalana::detail {

using json = nlohmann::json;

// Where a value sits in the document ("ranks[3].vertices[7][1] (samples)"),
// spelled out only when a message needs it.
struct Path {
  const Path *parent = nullptr;
  const char *key = nullptr; // member name, or nullptr for an array index
  size_t index = 0;
  const char *label = nullptr; // what an array element means
  std::string Str() const {
    if (!parent && !key)
      return ""; // the document
    std::string s = parent ? parent->Str() : "";
    if (key)
      s += (s.empty() ? "" : ".") + std::string(key);
    else
      s += "[" + std::to_string(index) + "]";
    return label ? s + " (" + label + ")" : s;
  }
};

inline Path Member(const Path &p, const char *key) { return {&p, key}; }
inline Path Element(const Path &p, size_t i, const char *label = nullptr) {
  return {&p, nullptr, i, label};
}

[[noreturn]] inline void Bad(const Path &p, const std::string &what) {
  throw Error(p.Str() + " " + what);
}

inline std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The member KEY of OBJ, or nullptr when absent or null (optional fields:
// hand-written files may omit them).
inline const json *Opt(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

inline const json &Req(const json &obj, const char *key, const Path &p) {
  const json *v = Opt(obj, key);
  if (!v)
    Bad(Member(p, key), "is missing");
  return *v;
}

inline const json &Obj(const json &v, const Path &p) {
  if (!v.is_object())
    Bad(p, std::string("is not an object (") + v.type_name() + ")");
  return v;
}

inline const json &Arr(const json &v, const Path &p) {
  if (!v.is_array())
    Bad(p, std::string("is not an array (") + v.type_name() + ")");
  return v;
}

inline std::string Str(const json &v, const Path &p) {
  if (!v.is_string())
    Bad(p, std::string("is not a string (") + v.type_name() + ")");
  return v.get<std::string>();
}

inline bool Bool(const json &v, const Path &p) {
  if (!v.is_boolean())
    Bad(p, std::string("is not true or false (") + v.type_name() + ")");
  return v.get<bool>();
}

// An integer in [LO, HI]. Floats are refused: converting 1e300 to an integer
// is undefined, and no writer puts a fraction in an integer field.
inline int64_t Int(const json &v, const Path &p, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi))
    Bad(p, std::to_string(v.get<uint64_t>()) + " is larger than " + std::to_string(hi));
  if (!v.is_number_integer())
    Bad(p, "is not an integer (" + (v.is_number() ? Num(v.get<double>()) : v.type_name()) + ")");
  int64_t x = v.get<int64_t>();
  if (x < lo)
    Bad(p, std::to_string(x) + (lo == 0 ? " is negative" : " is less than " + std::to_string(lo)));
  if (x > hi)
    Bad(p, std::to_string(x) + " is larger than " + std::to_string(hi));
  return x;
}

// A count: a non-negative 64-bit integer (a negative one would wrap).
inline uint64_t Count(const json &v, const Path &p) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>();
  return uint64_t(Int(v, p, 0, INT64_MAX));
}

// A finite number in [LO, HI].
inline double Real(const json &v, const Path &p, double lo, double hi) {
  if (!v.is_number())
    Bad(p, std::string("is not a number (") + v.type_name() + ")");
  double x = v.get<double>();
  if (!std::isfinite(x))
    Bad(p, "is not finite");
  if (x < lo)
    Bad(p, Num(x) + (lo == 0 ? " is negative" : " is less than " + Num(lo)));
  if (x > hi)
    Bad(p, Num(x) + " is larger than " + Num(hi));
  return x;
}

// Any time field: non-negative, finite and below a bound that keeps every
// sum of them finite, also in float.
inline double Seconds(const json &v, const Path &p) { return Real(v, p, 0, kMaxSeconds); }

inline std::vector<std::string> Strings(const json &v, const Path &p) {
  std::vector<std::string> out;
  for (size_t i = 0; i < Arr(v, p).size(); ++i)
    out.push_back(Str(v[i], Element(p, i)));
  return out;
}

// A row [a, b, c, ...] of exactly N elements.
inline const json &Row(const json &v, const Path &p, size_t n) {
  if (Arr(v, p).size() != n)
    Bad(p, "has " + std::to_string(v.size()) + " elements, expected " + std::to_string(n));
  return v;
}

} // namespace scalana::detail
