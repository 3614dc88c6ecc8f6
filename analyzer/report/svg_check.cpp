#include "report/svg_check.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace scalana {
namespace {

// What Graphviz's SVG renderer (plugin/core/gvrender_core_svg.c) writes, and
// nothing that can run code, load a resource or embed another document.
const std::set<std::string_view> kElements = {
    "svg",     "g",    "title", "a",    "polygon",        "polyline",      "path",
    "ellipse", "text", "defs",  "stop", "linearGradient", "radialGradient"};
const std::set<std::string_view> kAttributes = {
    // the root
    "width", "height", "viewBox", "xmlns", "xmlns:xlink", "version",
    // groups, links and their tooltips
    "id", "class", "transform", "xlink:href", "xlink:title", "href", "target",
    // shapes
    "fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
    "points", "d", "cx", "cy", "rx", "ry", "r", "fx", "fy", "x", "y", "x1", "y1", "x2", "y2",
    // text
    "text-anchor", "font-family", "font-size", "font-weight", "font-style", "font-stretch",
    "text-decoration", "baseline-shift",
    // gradients
    "offset", "style", "gradientUnits", "gradientTransform"};
constexpr size_t kMaxDepth = 256;

bool NameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }
bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void PutUtf8(uint32_t cp, std::string &out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | cp >> 6);
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | cp >> 12);
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | cp >> 18);
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

// Escaped for HTML text and double-quoted attribute values alike; the
// whitespace controls as character references in attributes (a tooltip's
// line breaks).
std::string Escape(const std::string &s, bool attribute) {
  std::string o;
  for (char c : s) {
    switch (c) {
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '&':
      o += "&amp;";
      break;
    case '"':
      o += "&quot;";
      break;
    case '\'':
      o += "&#39;";
      break;
    case '\n':
    case '\r':
    case '\t':
      if (attribute) {
        o += "&#" + std::to_string(int(c)) + ";";
        break;
      }
      [[fallthrough]];
    default:
      o += c;
    }
  }
  return o;
}

std::string Shown(std::string_view name) {
  return std::string(name.substr(0, 40)) + (name.size() > 40 ? "..." : "");
}

class Parser {
public:
  Parser(const std::string &s, std::string *out) : s_(s), out_(out) {}

  bool Run(std::string *why) {
    bool ok = Document();
    if (!ok)
      *why = why_;
    return ok;
  }

private:
  bool Fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  bool At(const char *lit) const { return s_.compare(i_, std::strlen(lit), lit) == 0; }
  void SkipSpace() {
    while (i_ < s_.size() && Space(s_[i_]))
      ++i_;
  }
  bool SkipPast(const char *end, const char *what) {
    size_t e = s_.find(end, i_);
    if (e == std::string::npos)
      return Fail(std::string("an unterminated ") + what);
    i_ = e + std::strlen(end);
    return true;
  }

  // Comments, a declaration and a DOCTYPE without internal subset may
  // stand around the root element; only white space besides.
  bool Misc(bool prolog) {
    for (;;) {
      SkipSpace();
      if (At("<!--")) {
        if (!Comment())
          return false;
      } else if (prolog && At("<?xml")) {
        if (!SkipPast("?>", "XML declaration"))
          return false;
      } else if (prolog && At("<!DOCTYPE")) {
        size_t e = s_.find('>', i_);
        if (e == std::string::npos)
          return Fail("an unterminated DOCTYPE");
        if (s_.find('[', i_) < e)
          return Fail("a DOCTYPE with an internal subset (entity definitions)");
        i_ = e + 1;
      } else {
        return true;
      }
    }
  }

  bool Comment() {
    size_t e = s_.find("--", i_ + 4);
    if (e == std::string::npos || s_.compare(e, 3, "-->") != 0)
      return Fail("a malformed comment");
    i_ = e + 3;
    return true;
  }

  bool Name(std::string_view *name) {
    size_t start = i_;
    if (i_ >= s_.size() || !NameStart(s_[i_]))
      return Fail("a malformed element or attribute name");
    while (i_ < s_.size() && NameChar(s_[i_]))
      ++i_;
    *name = std::string_view(s_).substr(start, i_ - start);
    return true;
  }

  // Character data up to END ('<' for text, the quote for a value),
  // entities decoded.
  bool Chars(char end, std::string *text) {
    for (; i_ < s_.size() && s_[i_] != end; ++i_) {
      char c = s_[i_];
      if (c == '<')
        return Fail("'<' inside an attribute value");
      if (static_cast<unsigned char>(c) < 0x20 && !Space(c))
        return Fail("a control character");
      if (c != '&') {
        *text += c;
        continue;
      }
      size_t semi = s_.find(';', i_);
      if (semi == std::string::npos || semi - i_ > 12)
        return Fail("a malformed entity");
      std::string_view ent = std::string_view(s_).substr(i_ + 1, semi - i_ - 1);
      static const std::pair<const char *, char> named[] = {
          {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      bool known = false;
      for (const auto &[n, ch] : named)
        if (ent == n) {
          *text += ch;
          known = true;
        }
      if (!known) {
        if (ent.size() < 2 || ent[0] != '#')
          return Fail("an unknown entity &" + Shown(ent) + ";");
        bool hex = ent[1] == 'x' || ent[1] == 'X';
        uint32_t cp = 0;
        std::string_view digits = ent.substr(hex ? 2 : 1);
        if (digits.empty())
          return Fail("a malformed character reference");
        for (char d : digits) {
          int v = d >= '0' && d <= '9'          ? d - '0'
                  : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                  : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                : -1;
          if (v < 0 || cp > 0x10ffff)
            return Fail("a malformed character reference");
          cp = cp * (hex ? 16 : 10) + uint32_t(v);
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
            (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r'))
          return Fail("a character reference to a control or invalid character");
        PutUtf8(cp, *text);
      }
      i_ = semi;
    }
    return true;
  }

  // A link may only lead to a fragment of the page; url() only of one.
  bool CheckValue(std::string_view attr, const std::string &value) {
    if (attr == "href" || attr == "xlink:href") {
      if (value.empty() || value[0] != '#')
        return Fail("a link to something other than the page (" + Shown(attr) + ")");
    } else if (attr == "target") {
      for (char c : value)
        if (!NameChar(c) || c == ':')
          return Fail("a malformed link target");
    }
    for (size_t p = 0; (p = value.find("url(", p)) != std::string::npos; p += 4)
      if (p + 4 >= value.size() || value[p + 4] != '#')
        return Fail("url() of something other than the page (" + Shown(attr) + ")");
    if (attr == "style")
      for (char c : value)
        if (c == '\\' || c == '@' || c == '"' || c == '\'' || c == '<' || c == '>')
          return Fail("a style attribute Graphviz does not write");
    return true;
  }

  bool Element(std::vector<std::string_view> *open) {
    ++i_; // '<'
    std::string_view name;
    if (!Name(&name))
      return false;
    if (!kElements.count(name))
      return Fail("element <" + Shown(name) + "> (not one Graphviz writes)");
    if (open->empty() && name != "svg")
      return Fail("a root element <" + Shown(name) + "> instead of <svg>");
    *out_ += '<';
    out_->append(name);
    std::set<std::string_view> seen;
    for (;;) {
      bool spaced = i_ < s_.size() && Space(s_[i_]);
      SkipSpace();
      if (i_ >= s_.size())
        return Fail("an unterminated element <" + Shown(name) + ">");
      if (At("/>")) {
        i_ += 2;
        *out_ += "/>";
        return true;
      }
      if (s_[i_] == '>') {
        ++i_;
        *out_ += '>';
        open->push_back(name);
        return true;
      }
      std::string_view attr;
      if (!spaced || !Name(&attr))
        return Fail("a malformed attribute in <" + Shown(name) + ">");
      if (attr.size() > 2 && (attr[0] == 'o' || attr[0] == 'O') &&
          (attr[1] == 'n' || attr[1] == 'N'))
        return Fail("an event-handler attribute " + Shown(attr) + " in <" + Shown(name) + ">");
      if (!kAttributes.count(attr))
        return Fail("attribute " + Shown(attr) + " in <" + Shown(name) +
                    "> (not one Graphviz writes)");
      if (!seen.insert(attr).second)
        return Fail("attribute " + Shown(attr) + " twice in <" + Shown(name) + ">");
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=')
        return Fail("an attribute without a value in <" + Shown(name) + ">");
      ++i_;
      SkipSpace();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
        return Fail("an unquoted attribute value in <" + Shown(name) + ">");
      char quote = s_[i_++];
      std::string value;
      if (!Chars(quote, &value))
        return false;
      if (i_ >= s_.size())
        return Fail("an unterminated attribute value in <" + Shown(name) + ">");
      ++i_;
      if (!CheckValue(attr, value))
        return false;
      // Namespace declarations name external documents: HTML needs none.
      if (attr == "xmlns" || attr == "xmlns:xlink" || attr == "version")
        continue;
      *out_ += ' ';
      out_->append(attr);
      *out_ += "=\"" + Escape(value, true) + '"';
    }
  }

  bool Document() {
    if (At("\xef\xbb\xbf"))
      i_ += 3;
    if (!Misc(true))
      return false;
    if (i_ >= s_.size() || s_[i_] != '<' || At("<!") || At("<?") || At("</"))
      return Fail("no <svg> element");
    std::vector<std::string_view> open;
    if (!Element(&open))
      return false;
    while (!open.empty()) {
      if (open.size() > kMaxDepth)
        return Fail("elements nested deeper than " + std::to_string(kMaxDepth));
      if (i_ >= s_.size())
        return Fail("an unterminated element <" + Shown(open.back()) + ">");
      if (At("<!--")) {
        if (!Comment())
          return false;
      } else if (At("<![CDATA[")) {
        return Fail("a CDATA section");
      } else if (At("<?") || At("<!")) {
        return Fail("a processing instruction or declaration inside <svg>");
      } else if (At("</")) {
        i_ += 2;
        std::string_view name;
        if (!Name(&name))
          return false;
        SkipSpace();
        if (name != open.back() || i_ >= s_.size() || s_[i_] != '>')
          return Fail("a mismatched end tag </" + Shown(name) + ">");
        ++i_;
        *out_ += "</";
        out_->append(name);
        *out_ += '>';
        open.pop_back();
      } else if (s_[i_] == '<') {
        if (!Element(&open))
          return false;
      } else {
        std::string text;
        if (!Chars('<', &text))
          return false;
        *out_ += Escape(text, false);
      }
    }
    if (!Misc(false))
      return false;
    if (i_ != s_.size())
      return Fail("content after the </svg> end tag");
    return true;
  }

  const std::string &s_;
  std::string *out_;
  size_t i_ = 0;
  std::string why_;
};

} // namespace

bool CheckGraphvizSvg(const std::string &svg, std::string *inline_svg, std::string *why) {
  std::string out;
  Parser p(svg, &out);
  if (!p.Run(why))
    return false;
  *inline_svg = std::move(out);
  return true;
}

} // namespace scalana
