// Printing text that came from files (profiles, PSG records, source files,
// names of directories and binaries): a control character in it must not
// reach a terminal, where ESC sequences retitle or clear the screen and a
// CR or LF forges lines of output. Header-only so every tool shares it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace scalana {

namespace text_escape_detail {

// Length of the valid UTF-8 sequence at S[I] and its code point; 0 when the
// bytes there are not one (stray continuation byte, overlong form, surrogate,
// beyond U+10FFFF, cut short).
inline size_t Utf8At(std::string_view s, size_t i, uint32_t *cp) {
  const auto b = [&](size_t k) { return uint8_t(s[i + k]); };
  uint8_t c = b(0);
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || c > 0xf4 || i + n > s.size())
    return 0;
  uint32_t v = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80)
      return 0;
    v = v << 6 | (b(k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return n;
}

// C1 controls (U+0080..U+009F: some terminals act on them as on ESC
// sequences) and the bidirectional overrides, which reorder what is shown.
inline bool HiddenCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

inline void Hex(std::string &out, uint8_t c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

} // namespace text_escape_detail

// S with every C0 control (other than those listed in KEEP), DEL, C1 control,
// bidirectional override and byte that is not valid UTF-8 written as \xNN
// (one per byte). Printable text, valid UTF-8 included, is unchanged. Use it
// on each field of a text output; KEEP = "\n" only where S is a whole
// output whose lines are the program's own.
inline std::string EscapeControls(std::string_view s, std::string_view keep = {}) {
  using namespace text_escape_detail;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      ++i;
    } else if (c < 0x80) {
      if (keep.find(char(c)) != std::string_view::npos)
        out += char(c);
      else
        Hex(out, c);
      ++i;
    } else {
      uint32_t cp = 0;
      size_t n = Utf8At(s, i, &cp);
      if (n == 0) {
        Hex(out, c);
        ++i;
        continue;
      }
      for (size_t k = 0; k < n; ++k) {
        if (HiddenCodePoint(cp))
          Hex(out, uint8_t(s[i + k]));
        else
          out += s[i + k];
      }
      i += n;
    }
  }
  return out;
}

// JSON text (as nlohmann::json::dump writes it) with every non-ASCII
// character and DEL written as \uXXXX: the same document, but nothing in it
// a terminal acts on. Outside strings JSON is ASCII, so only strings change.
// Invalid UTF-8 (which dump never writes) becomes U+FFFD.
inline std::string AsciiJson(std::string_view s) {
  using namespace text_escape_detail;
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto unit = [&](uint32_t u) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4)
      out += kHex[(u >> shift) & 15];
  };
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    if (c < 0x7f) {
      out += char(c);
      ++i;
      continue;
    }
    uint32_t cp = 0xfffd;
    size_t n = c == 0x7f ? 0 : Utf8At(s, i, &cp);
    if (c == 0x7f)
      cp = 0x7f;
    i += n ? n : 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      unit(0xd800 + (cp >> 10));
      unit(0xdc00 + (cp & 0x3ff));
    } else {
      unit(cp);
    }
  }
  return out;
}

} // namespace scalana
