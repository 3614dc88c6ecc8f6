// `rt_read_profile RUN_DIR`: the profile a run directory holds, as one
// format-2 JSON document on stdout, whichever file the runtime wrote
// (profile.scalana, profile.json.gz or per-rank files: ReadProfile takes
// them in that order), so the runtime's tests check the same content
// whatever the format. Exit 1 with the error.
#include "scalana/profile.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: rt_read_profile RUN_DIR\n");
    return 2;
  }
  try {
    std::printf("%s\n", scalana::ProfileToJson(scalana::ReadProfile(argv[1])).c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rt_read_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
