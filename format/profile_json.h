// Format 2's document (docs/formats.md section 3) as JSON values: the
// writer's and the checked reader's, for profile.cpp and format 3's meta
// section. Inside format/ only.
#pragma once

#include "scalana/profile.h"

#include <nlohmann/json.hpp>

namespace scalana::detail {

inline constexpr const char *kProfileFormatName = "scalana-profile";
inline constexpr int kProfileFormatVersion = 2; // 2: contexts are frames, not instrumentation ids

nlohmann::json MetaToJson(const ProfileMeta &m);
nlohmann::json ProfileToJsonValue(const Profile &p);

// Reads and checks the document (profile_json_read.cpp). Throws Error
// naming the field.
Profile ProfileFromJsonValue(const nlohmann::json &j);

} // namespace scalana::detail
