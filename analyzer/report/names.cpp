#include "report/names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>

namespace scalana {

namespace {

const char kEllipsis[] = "\xE2\x80\xA6"; // U+2026, one column wide

// Characters as displayed: UTF-8 continuation bytes do not count.
size_t Width(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::string Demangle(const std::string &s) {
  if (s.size() < 3 || s.compare(0, 2, "_Z") != 0)
    return s;
  int status = 0;
  char *d = abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr)
    return s;
  std::string out(d);
  std::free(d);
  return out;
}

// flang's unique names: "_Q" then tagged parts, each an upper-case tag and a
// lower-case name (Fortran names are folded to lower case): M module,
// S submodule, F procedure scope of a local entity, P procedure, B block
// data, C common block, E entity, Q main program ("_QQmain").
bool FortranName(const std::string &s, std::string *out) {
  if (s.size() < 3 || s.compare(0, 2, "_Q") != 0)
    return false;
  std::string r;
  size_t i = 2;
  while (i < s.size()) {
    char tag = s[i];
    if (!std::isupper(static_cast<unsigned char>(tag)))
      return false;
    size_t j = i + 1;
    while (j < s.size() && !std::isupper(static_cast<unsigned char>(s[j])))
      ++j;
    std::string part = s.substr(i + 1, j - i - 1);
    if (tag == 'Q' && part == "main")
      part = "program";
    else if (std::string("MSFPBCEQ").find(tag) == std::string::npos || part.empty())
      return false;
    r += (r.empty() ? "" : "::") + part;
    i = j;
  }
  if (r.empty())
    return false;
  *out = r;
  return true;
}

// Length of the operator token at S[I] ("operator<<", "operator()"), so its
// brackets are not taken for template or parameter lists; 0 when none.
size_t OperatorAt(const std::string &s, size_t i) {
  static const char kOp[] = "operator";
  if (s.compare(i, sizeof kOp - 1, kOp) != 0)
    return 0;
  if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))
    return 0;
  size_t j = i + sizeof kOp - 1;
  if (s.compare(j, 2, "()") == 0)
    return j + 2 - i;
  if (s.compare(j, 2, "[]") == 0)
    return j + 2 - i;
  while (j < s.size() && std::string("<>=!+-*/%&|^~,").find(s[j]) != std::string::npos)
    ++j;
  return j - i;
}

// Replaces the contents of every outermost OPEN...CLOSE pair with "…";
// "(anonymous namespace)" is a name and stays.
std::string ElideOutermost(const std::string &s, char open, char close) {
  static const std::string kAnon = "(anonymous namespace)";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (size_t op = OperatorAt(s, i)) {
      if (depth == 0)
        out += s.substr(i, op);
      i += op - 1;
      continue;
    }
    if (s.compare(i, kAnon.size(), kAnon) == 0) {
      if (depth == 0)
        out += kAnon;
      i += kAnon.size() - 1;
      continue;
    }
    char c = s[i];
    if (c == open) {
      if (depth++ == 0)
        out += c + std::string(kEllipsis);
    } else if (c == close && depth > 0) {
      if (--depth == 0)
        out += c;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

// Drops the return type a demangled template function carries ("void
// RAJA::forall<...>(...)"): a space outside every bracket that comes before
// the parameter list.
std::string DropReturnType(const std::string &s) {
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (size_t op = OperatorAt(s, i)) {
      i += op - 1;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(')
      ++depth;
    else if ((c == '>' || c == ')') && depth > 0)
      --depth;
    if (c == '(' && depth == 1)
      break; // the parameter list (or "(anonymous namespace)")
    if (c == ' ' && depth == 0)
      cut = i;
  }
  if (cut == std::string::npos || s.compare(cut + 1, 10, "(anonymous") == 0)
    return s;
  return s.substr(cut + 1);
}

std::string Truncate(const std::string &s, size_t max_len) {
  if (Width(s) <= max_len)
    return s;
  size_t keep = max_len > 0 ? max_len - 1 : 0, n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == keep)
      break;
  }
  return s.substr(0, i) + kEllipsis;
}

} // namespace

std::string ReadableName(const std::string &symbol_or_demangled, size_t max_len) {
  std::string name;
  if (FortranName(symbol_or_demangled, &name))
    return Truncate(name, max_len);
  name = Demangle(symbol_or_demangled);
  if (Width(name) <= max_len)
    return name;
  // Shorten in the order that loses the least: the return type, template
  // arguments, then the parameter list, then the tail.
  name = DropReturnType(name);
  if (Width(name) > max_len)
    name = ElideOutermost(name, '<', '>');
  if (Width(name) > max_len)
    name = ElideOutermost(name, '(', ')');
  return Truncate(name, max_len);
}

} // namespace scalana
