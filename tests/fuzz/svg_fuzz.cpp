// libFuzzer target: the check of the SVG the HTML report's dot program
// prints (analyzer/report/svg_check.cpp, docs/report.md) on arbitrary bytes.
// What it accepts it writes anew; that must be accepted again, unchanged
// (so the page holds exactly what was checked), and hold no markup the
// check exists to keep out.
#include "report/svg_check.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string svg(reinterpret_cast<const char *>(data), size);
  std::string out, why;
  if (!scalana::CheckGraphvizSvg(svg, &out, &why)) {
    if (why.empty())
      std::abort(); // refused without saying why
    return 0;
  }
  if (out.rfind("<svg", 0) != 0)
    std::abort(); // the page would get something before the root
  // Text and values are escaped: no '<' but the elements' own.
  for (const char *never : {"<!", "<?", "<script", "<foreignObject", "<image", "<iframe"})
    if (out.find(never) != std::string::npos)
      std::abort();
  std::string again, why_again;
  if (!scalana::CheckGraphvizSvg(out, &again, &why_again) || again != out)
    std::abort(); // what it wrote is not what it would accept
  return 0;
}
