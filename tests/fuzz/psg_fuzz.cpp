// libFuzzer target: the `scalana_psg` section reader on arbitrary bytes, then
// the whole-program PSG built from what it accepts, expanded (within a vertex
// budget) and written as text. Bad input must end in a scalana::Error.
#include "psg.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  try {
    std::vector<std::string> warnings;
    std::vector<scalana::LocalPsg> fns = scalana::ParsePsgSection(bytes, &warnings);
    scalana::PsgOptions opts;
    opts.max_vertices = 100000; // ExpandAll's own guard, kept small for speed
    scalana::Psg psg = scalana::Psg::Build(std::move(fns), opts);
    psg.Stats();
    psg.ExpandAll();
    psg.ToText();
  } catch (const scalana::Error &) {
  }
  return 0;
}
