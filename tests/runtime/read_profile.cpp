// `rt_read_profile RUN_DIR`: the profile a run directory holds, as one
// format-2 JSON document on stdout, whichever file the runtime wrote
// (profile.scalana, profile.json.gz or per-rank files), so the runtime's
// tests check the same content whatever the format. Exit 1 with the error.
#include "v3_read_min.h"

#include "scalana/container_format.h"

#include <sys/stat.h>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: rt_read_profile RUN_DIR\n");
    return 2;
  }
  try {
    std::string dir = argv[1], v3 = dir + "/" + scalana::container::kFileName;
    struct stat st;
    scalana::Profile p = stat(v3.c_str(), &st) == 0 ? scalana::test::ReadProfileV3Min(v3)
                                                    : scalana::ReadProfile(dir);
    std::printf("%s\n", scalana::ProfileToJson(p).c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rt_read_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
