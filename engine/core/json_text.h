// JSON text of a nlohmann::json value, the same bytes as `j.dump(indent)` (indent >= 0,
// spaces, no ASCII escaping, strict UTF-8), written straight into one string: nlohmann's
// serializer goes through an output adapter a character at a time and decodes every string
// byte by byte (docs/snapshot.md, snap12). Strings that need escaping or are not plain ASCII
// are handed to nlohmann's own serializer, so its escapes and errors stay.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace oomdx {

std::string json_text(const nlohmann::json& j, int indent);

}  // namespace oomdx
