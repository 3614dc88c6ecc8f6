// How the collective writer encodes one group's block and the run's meta
// section of profile.scalana (docs/formats.md section 4). One place, so the
// codec the runtime writes is chosen here and nowhere else.
//
// Codec 2 (Columns): the columnar block of the format's own encoder, about
// a kilobyte per rank where the JSON codec needs several; the meta section
// a gzip member of {"meta": {...}} without "modules", which every block
// carries for its own ranks.
#include "final_profile.h"

#include "scalana/profile_v3.h"

namespace scalana::rt {

std::string EncodeBlockForFile(const Profile &group, container::Codec *codec) {
  *codec = container::Codec::Columns;
  return EncodeGroupBlock(group, *codec);
}

std::string EncodeMetaForFile(const ProfileMeta &meta) { return EncodeMetaSection(meta); }

} // namespace scalana::rt
