// A run directory's profile rewritten as format 3, for the command-line
// tests: scalana_write_v3 SRC_RUN_DIR DST_DIR [GROUP_RANKS [json|columns]]
// writes DST_DIR/profile.scalana and nothing else.
#include "scalana/profile_v3.h"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SRC_RUN_DIR DST_DIR [GROUP_RANKS [json|columns]]\n", argv[0]);
    return 2;
  }
  try {
    uint32_t group = argc > 3 ? uint32_t(std::atoi(argv[3])) : 128;
    auto codec = argc > 4 && std::string(argv[4]) == "json" ? scalana::container::Codec::JsonGzip
                                                            : scalana::container::Codec::Columns;
    scalana::WriteProfileV3(std::string(argv[2]) + "/" + scalana::container::kFileName,
                            scalana::ReadProfile(argv[1]), group, codec);
  } catch (const scalana::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
