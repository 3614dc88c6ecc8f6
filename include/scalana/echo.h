// Echoing a value the user (or a file) gave back in a message: escaped as
// EscapeControls does (ESC, CR, LF... as \xNN, so no value forges a line of
// output or reaches the terminal as a sequence) and cut to a bounded length,
// the full length stated, so a 10 KB value does not fill the screen. Every
// tool's messages quote values through EchoValue, or EchoInMessage for a
// message some library built (CLI11, the readers) with values inside it.
#pragma once

#include "scalana/text_escape.h"

#include <string>
#include <string_view>
#include <vector>

namespace scalana {

inline constexpr size_t kEchoMaxBytes = 200;
// A whole message (values from files in it, lists of files) is cut too, at
// a bound no useful message reaches.
inline constexpr size_t kMessageMaxBytes = 8192;

// V escaped; past MAX bytes of escaped text, cut (never inside an escape or
// a UTF-8 character) and followed by "... (N bytes)", N the length of V.
inline std::string EchoValue(std::string_view v, size_t max = kEchoMaxBytes) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    // One character at a time: an escape or a UTF-8 sequence is never split.
    size_t n = 1;
    uint32_t cp = 0;
    if (uint8_t(v[i]) >= 0x80)
      n = text_escape_detail::Utf8At(v, i, &cp);
    n = n ? n : 1;
    std::string piece = EscapeControls(v.substr(i, n));
    if (out.size() + piece.size() > max)
      return out + "... (" + std::to_string(v.size()) + " bytes)";
    out += piece;
    i += n;
  }
  return out;
}

// MESSAGE (built elsewhere, quoting some of VALUES) escaped, each of VALUES
// in it echoed as EchoValue echoes it. Values EchoValue leaves unchanged are
// not looked for: the rest of the message is escaped all the same, but for
// KEEP ("\n" where the message's own lines end inside it).
inline std::string EchoInMessage(std::string_view message, const std::vector<std::string> &values,
                                 std::string_view keep = {}, size_t max = kEchoMaxBytes) {
  std::vector<std::pair<std::string, std::string>> subst; // value, its echo
  for (const std::string &v : values) {
    std::string echo = EchoValue(v, max);
    if (!v.empty() && echo != v)
      subst.emplace_back(v, std::move(echo));
  }
  std::string out, plain;
  for (size_t i = 0; i < message.size();) {
    const std::pair<std::string, std::string> *best = nullptr;
    for (const auto &s : subst) // the longest value found here wins
      if (message.compare(i, s.first.size(), s.first) == 0 &&
          (!best || s.first.size() > best->first.size()))
        best = &s;
    if (!best) {
      plain += message[i++];
      continue;
    }
    out += EscapeControls(plain, keep) + best->second;
    plain.clear();
    i += best->first.size();
  }
  out += EscapeControls(plain, keep);
  // Escaped already: only the cut applies (escapes are printable; kept
  // line ends would not be).
  return out.size() > kMessageMaxBytes && keep.empty() ? EchoValue(out, kMessageMaxBytes) : out;
}

// The arguments of a command line, for EchoInMessage.
inline std::vector<std::string> ArgValues(int argc, char **argv) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    values.push_back(a);
    // "--name=value": the value too, as CLI11 quotes it alone.
    if (size_t eq = a.find('='); a.compare(0, 1, "-") == 0 && eq != std::string::npos)
      values.push_back(a.substr(eq + 1));
  }
  return values;
}

} // namespace scalana
