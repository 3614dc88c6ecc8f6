// What the reader tests share: a temporary directory, gzip, and the message
// a reader gives for a document or a run directory ("" when it accepts it).
#pragma once

#include "scalana/profile.h"

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace scalana::test {

#define EXPECT_HAS(text, part)                                                                     \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/scalana-robust-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string &name) const { return path + "/" + name; }
};

inline std::string Gzip(const std::string &text, int window_bits = 16 + MAX_WBITS) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, uLong(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void WriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message ProfileFromJson gives for TEXT.
inline std::string ErrorOfText(const std::string &text) {
  try {
    ProfileFromJson(text, "p.json");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// The message ReadProfile gives for the run directory DIR.
inline std::string ReadError(const std::string &dir) {
  try {
    ReadProfile(dir);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace scalana::test
