// How the collective writer encodes one group's block and the run's meta
// section of profile.scalana (docs/formats.md section 4). One place, so the
// codec the runtime writes is chosen here and nowhere else.
//
// Codec 1 (JsonGzip): a gzip member of the format-2 document of the group's
// ranks; the meta section a gzip member of {"meta": {...}} without
// "modules", which every block carries for its own ranks.
#include "final_profile.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cstring>
#include <stdexcept>

namespace scalana::rt {

namespace {

// A gzip member of TEXT, of any size (zlib counts in uInt: fed in pieces).
// Level 6 as WriteProfileFile: written once per group, at the end.
std::string GzipMember(const std::string &text) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out;
  const size_t kPiece = size_t(1) << 30;
  size_t in = 0;
  char buf[1 << 16];
  int rc = Z_OK;
  do {
    size_t take = std::min(kPiece, text.size() - in);
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data() + in));
    zs.avail_in = uInt(take);
    in += take;
    int flush = in == text.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = reinterpret_cast<Bytef *>(buf);
      zs.avail_out = sizeof buf;
      rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        throw std::runtime_error("deflate failed");
      }
      out.append(buf, sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0);
  } while (in < text.size());
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw std::runtime_error("deflate failed");
  return out;
}

} // namespace

std::string EncodeBlockForFile(const Profile &group, container::Codec *codec) {
  *codec = container::Codec::JsonGzip;
  return GzipMember(ProfileToJson(group));
}

std::string EncodeMetaForFile(const ProfileMeta &meta) {
  Profile only;
  only.meta = meta;
  nlohmann::json doc = nlohmann::json::parse(ProfileToJson(only));
  nlohmann::json m = std::move(doc["meta"]);
  m.erase("modules");
  return GzipMember(nlohmann::json{{"meta", std::move(m)}}.dump());
}

} // namespace scalana::rt
