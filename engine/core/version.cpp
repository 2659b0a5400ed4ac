#include "engine/core/version.h"

#include <cctype>

#include <fmt/format.h>

#include "engine/core/fact_store.h"

namespace oomdx {
namespace {

// Digits at s[i...]; nullopt when none or more than fit an int comfortably.
std::optional<int> read_version_part(std::string_view s, std::size_t& i) {
    const std::size_t start = i;
    int n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (i - start >= 6) return std::nullopt;
        n = n * 10 + (s[i] - '0');
        ++i;
    }
    if (i == start) return std::nullopt;
    return n;
}

}  // namespace

std::optional<release_version> parse_release_version(std::string_view text) {
    std::size_t i = 0;
    if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
    release_version v;
    const auto major = read_version_part(text, i);
    if (!major) return std::nullopt;
    v.major = *major;
    if (i < text.size() && text[i] == '.') {
        ++i;
        if (const auto minor = read_version_part(text, i)) {
            v.minor = *minor;
            if (i < text.size() && text[i] == '.') {
                ++i;
                if (const auto patch = read_version_part(text, i)) v.patch = *patch;
            }
        }
    }
    v.text = std::string(text);
    return v;
}

std::optional<release_version> version_fact(const fact_store& facts, const std::string& name) {
    const fact* f = facts.get(name);
    if (!f) return std::nullopt;
    if (f->val.is_numeric()) return parse_release_version(fmt::format("{:g}", f->val.as_number()));
    if (f->val.is_string()) return parse_release_version(f->val.as_string());
    return std::nullopt;
}

}  // namespace oomdx
