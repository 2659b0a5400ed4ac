// A software release version read from a fact ("2.9.1", "4.48.0+cu121", "v1.10", or a number a
// config wrote unquoted): major, minor and patch, the parts the estimator and the syntax choice depend on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oomdx {

class fact_store;

struct release_version {
    int major = 0;
    int minor = -1;  // -1: not given ("2")
    int patch = 0;   // 0 when not given ("2.9")
    std::string text;  // as written, for messages

    bool at_least(int maj, int min, int pat = 0) const {
        return major > maj || (major == maj && (minor > min || (minor == min && patch >= pat)));
    }
};

// Leading digits, then optionally "." and digits, twice; an optional "v" before. Anything else: nullopt.
std::optional<release_version> parse_release_version(std::string_view text);

// The fact `name` as a version; a numeric value is formatted first (1.1 -> "1.1").
std::optional<release_version> version_fact(const fact_store& facts, const std::string& name);

}  // namespace oomdx
