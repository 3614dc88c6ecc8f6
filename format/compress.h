// Compression shared by the profile formats: gzip for format 2 and the
// JSON parts of format 3, zlib for the columnar blocks. Inflation is always
// bounded (docs/formats.md section 3, "Sizes"): a bomb costs at most the
// limit in memory and is refused as soon as it passes it.
#pragma once

#include <cstdint>
#include <string>

namespace scalana::detail {

// "16 MiB", "95.5 MiB", "1 GiB", "512 bytes".
std::string Size(uint64_t bytes);
// How far IN_SIZE compressed bytes may inflate: kInflateRatio times, at
// least kInflateFloor, at most kMaxProfileBytes.
uint64_t InflateLimit(uint64_t in_size);

// A gzip member of TEXT.
std::string Gzip(const std::string &text, int level = 6);
// Gzip data (one member, or several concatenated) inflated; throws Error
// "<ORIGIN>: ..." for anything else.
std::string Gunzip(const std::string &in, const std::string &origin);

// One zlib stream of DATA, and back (exactly one stream, nothing after it).
std::string Deflate(const std::string &data, int level = 9);
std::string Inflate(const std::string &in, const std::string &origin);

} // namespace scalana::detail
