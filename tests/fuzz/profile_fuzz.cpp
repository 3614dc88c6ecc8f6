// libFuzzer target: the profile reader on arbitrary bytes. Gzip data (1f 8b)
// goes through ProfileFromGzip, the path of every profile file; anything else
// is JSON text for ProfileFromJson, the path of the runtime's gather. A
// rejected input must be a scalana::Error; an accepted one must survive the
// writer and read back to the same document.
#include "scalana/profile.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  scalana::Profile p;
  try {
    p = size >= 2 && data[0] == 0x1f && data[1] == 0x8b ? scalana::ProfileFromGzip(bytes, "input")
                                                        : scalana::ProfileFromJson(bytes, "input");
  } catch (const scalana::Error &) {
    return 0; // refused with a message: what the reader must do
  }
  const std::string text = scalana::ProfileToJson(p);
  scalana::Profile q;
  try {
    q = scalana::ProfileFromJson(text, "written");
  } catch (const scalana::Error &) {
    std::abort(); // the reader refuses what the writer wrote
  }
  if (scalana::ProfileToJson(q) != text)
    std::abort(); // the round trip changed the document
  scalana::MergeProfiles({std::move(p), std::move(q)});
  return 0;
}
