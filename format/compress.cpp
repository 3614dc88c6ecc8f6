// See compress.h.
#include "compress.h"
#include "scalana/profile.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <new>

namespace scalana::detail {

uint64_t InflateLimit(uint64_t in_size) {
  return std::min(kMaxProfileBytes, std::max(kInflateFloor, kInflateRatio * in_size));
}

// "16 MiB", "95.5 MiB", "1 GiB", "512 bytes".
std::string Size(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t(1) << 30) && bytes % (uint64_t(1) << 30) == 0)
    std::snprintf(buf, sizeof buf, "%llu GiB", (unsigned long long)(bytes >> 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.4g MiB", double(bytes) / double(1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes", (unsigned long long)bytes);
  return buf;
}

// Inflates gzip data (one member, or several concatenated) a bounded step
// at a time: the output may not pass the limit, so a gzip bomb costs at most
// that much memory and is refused as soon as it passes it.
std::string Gunzip(const std::string &in, const std::string &origin) {
  const auto byte = [&](size_t i) { return uint8_t(in[i]); };
  if (in.empty())
    throw Error(origin + ": empty file; the run was probably interrupted while writing: re-run it");
  if (in.size() < 2 || byte(0) != 0x1f || byte(1) != 0x8b) {
    std::string what = "not gzip data (no 1f 8b magic bytes at the start)";
    if (in.size() >= 2 && (byte(0) & 0x0f) == 8 && (byte(0) * 256 + byte(1)) % 31 == 0)
      what = "zlib data, not gzip (a profile is gzip-compressed JSON, as gzip writes it)";
    else if (byte(0) == '{')
      what = "not gzip data: uncompressed JSON? (a profile is gzip-compressed JSON)";
    throw Error(origin + ": " + what);
  }
  if (in.size() > kMaxProfileBytes)
    throw Error(origin + ": " + std::to_string(in.size()) +
                " bytes, larger than any profile (at most " + Size(kMaxProfileBytes) +
                " compressed)");
  const uint64_t limit = InflateLimit(in.size());
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) // 16: gzip only
    throw std::bad_alloc();
  struct End {
    z_stream *z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  // zlib never writes through next_in; its type is not const only for history.
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  zs.avail_in = uInt(in.size()); // at most kMaxProfileBytes: fits
  std::string out;
  char buf[1 << 16];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef *>(buf);
    zs.avail_out = sizeof buf;
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t got = sizeof buf - zs.avail_out;
    if (got > limit - out.size())
      throw Error(origin + ": inflates to more than " + Size(limit) +
                  " (a profile may inflate to " + std::to_string(kInflateRatio) +
                  " times its compressed size, to at least " + Size(kInflateFloor) +
                  " and at most " + Size(kMaxProfileBytes) +
                  "): not a profile written by `scalana prof`");
    out.append(buf, got);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0)
        return out;
      // Another gzip member may follow (cat a.gz b.gz); nothing else may.
      if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b)
        throw Error(origin + ": " + std::to_string(zs.avail_in) +
                    " bytes of other data after the gzip data; the file is corrupt: re-run");
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      throw Error(origin + ": truncated gzip data (corrupt: the file ends inside the compressed "
                           "stream); the run was probably interrupted while writing: re-run it");
    if (rc == Z_MEM_ERROR)
      throw std::bad_alloc();
    throw Error(origin + ": corrupt gzip data (" + std::string(zs.msg ? zs.msg : "inflate error") +
                "); the file was damaged: re-run");
  }
}

namespace {

std::string Compress(const std::string &data, int level, int window_bits) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::bad_alloc();
  std::string out(deflateBound(&zs, uLong(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  zs.avail_in = uInt(data.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = uInt(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw Error("compressing " + Size(data.size()) + ": zlib error " + std::to_string(rc));
  return out;
}

} // namespace

std::string Gzip(const std::string &text, int level) {
  return Compress(text, level, 16 + MAX_WBITS);
}

std::string Deflate(const std::string &data, int level) { return Compress(data, level, MAX_WBITS); }

// As Gunzip, for the one zlib stream of a columnar block.
std::string Inflate(const std::string &in, const std::string &origin) {
  if (in.size() > kMaxProfileBytes)
    throw Error(origin + ": " + std::to_string(in.size()) +
                " bytes, larger than any block (at most " + Size(kMaxProfileBytes) + ")");
  const uint64_t limit = InflateLimit(in.size());
  z_stream zs{};
  if (inflateInit2(&zs, MAX_WBITS) != Z_OK)
    throw std::bad_alloc();
  struct End {
    z_stream *z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  zs.avail_in = uInt(in.size());
  std::string out;
  char buf[1 << 16];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef *>(buf);
    zs.avail_out = sizeof buf;
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t got = sizeof buf - zs.avail_out;
    if (got > limit - out.size())
      throw Error(origin + ": inflates to more than " + Size(limit) + " (a block may inflate to " +
                  std::to_string(kInflateRatio) + " times its size, to at least " +
                  Size(kInflateFloor) + " and at most " + Size(kMaxProfileBytes) +
                  "): not written by ScalAna");
    out.append(buf, got);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in != 0)
        throw Error(origin + ": " + std::to_string(zs.avail_in) +
                    " bytes of other data after the compressed data; the file is damaged");
      return out;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      throw Error(origin + ": truncated compressed data (the block ends inside its stream); the "
                           "file is damaged");
    if (rc == Z_MEM_ERROR)
      throw std::bad_alloc();
    throw Error(origin + ": corrupt compressed data (" +
                std::string(zs.msg ? zs.msg : "inflate error") + "); the file is damaged");
  }
}

} // namespace scalana::detail
