#include "engine/core/fact.h"

#include <fmt/format.h>

namespace oomdx {

std::string provenance::location() const {
    if (!rule_id.empty()) return fmt::format("rule {}", rule_id);
    if (file.empty()) return producer;
    if (line > 0) return fmt::format("{}:{}", file, line);
    if (offset >= 0) return fmt::format("{}@{}", file, offset);
    return file;
}

}  // namespace oomdx
