// Graphviz's SVG, checked before the HTML report inlines it: what the dot
// program prints is input like any file (SCALANA_DOT may name anything).
#pragma once

#include <string>

namespace scalana {

// Parses SVG as XML and accepts it only when it has one <svg> root and holds
// nothing but the elements and attributes Graphviz's SVG renderer writes:
// no <script>, <foreignObject>, <image> or animation, no event-handler
// (on*) attribute, links only to fragments of the page (#id), url() only
// of #id, no DOCTYPE internal subset, CDATA or unknown entity. Then writes
// it anew from what was parsed (every text and attribute value escaped,
// comments, prolog and namespace declarations dropped) into *INLINE, ready
// for an HTML page. Returns false with *WHY (a short phrase) otherwise.
bool CheckGraphvizSvg(const std::string &svg, std::string *inline_svg, std::string *why);

} // namespace scalana
