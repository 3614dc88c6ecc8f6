// libFuzzer target: the reader of a node's snapshot container
// (format/snapshot_read.cpp, docs/formats.md section 5) on arbitrary bytes,
// then each record it accepts read as the one-rank profile it should hold.
// A rejected container or record must be a scalana::Error; a record the
// reader accepts must have passed its CRCs and fit its slot.
#include "scalana/profile.h"
#include "scalana/snapshot_container.h"
#include "snapshot_read.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  scalana::detail::ReadAt read = [&](uint64_t at, uint64_t n, std::string *out) {
    if (at > bytes.size() || n > bytes.size() - at)
      return false;
    *out = bytes.substr(size_t(at), size_t(n));
    return true;
  };
  try {
    scalana::detail::ContainerContents c =
        scalana::detail::ParseSnapshotContainer(read, bytes.size(), "fuzz.scs");
    for (const auto &rank : c.ranks)
      for (const auto &rec : rank.records) {
        if (rec.payload.empty() ||
            rec.payload.size() > c.header.slot - scalana::snapshots::kRecordHeader)
          std::abort(); // accepted a record that does not fit its slot
        try {
          scalana::ProfileFromGzip(rec.payload, "fuzz.scs record");
        } catch (const scalana::Error &) {
        }
      }
  } catch (const scalana::Error &) {
  }
  return 0;
}
