// libFuzzer target: the format-3 readers on arbitrary bytes. Input with the
// SCALANA3 magic is a whole file (header, meta, index, blocks) for
// ReadProfileGroupsFromBytes; anything else is one group block, its first
// byte choosing the codec (odd: columns, even: gzip JSON). A rejected input
// must be a scalana::Error; every accepted part must encode to a columnar
// block that decodes to the same part, its times rounded to nanoseconds.
#include "scalana/profile_v3.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void Survives(scalana::Profile &&part) {
  using scalana::container::Codec;
  scalana::RoundTimesToNanos(part);
  const std::string text = scalana::ProfileToJson(part);
  scalana::Profile back;
  try {
    back = scalana::DecodeGroupBlock(scalana::EncodeGroupBlock(part, Codec::Columns),
                                     Codec::Columns, "written", &part.meta);
  } catch (const scalana::Error &) {
    std::abort(); // the reader refuses what the writer wrote
  }
  if (scalana::ProfileToJson(back) != text)
    std::abort(); // the round trip changed the part
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  try {
    if (size >= 8 && std::memcmp(data, scalana::container::kMagic, 8) == 0) {
      scalana::ReadProfileGroupsFromBytes(bytes, "input", Survives);
    } else if (size >= 1) {
      auto codec =
          data[0] & 1 ? scalana::container::Codec::Columns : scalana::container::Codec::JsonGzip;
      Survives(scalana::DecodeGroupBlock(bytes.substr(1), codec, "input"));
    }
  } catch (const scalana::Error &) {
    return 0; // refused with a message: what the reader must do
  }
  return 0;
}
