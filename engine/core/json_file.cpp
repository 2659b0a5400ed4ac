#include "engine/core/json_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.h"

namespace oomdx {

namespace fs = std::filesystem;

nlohmann::json read_json_file(const std::string& path, const char* what, std::uintmax_t max_bytes) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw input_error::in_file(path, "missing summary: no such file");
    const auto size = fs::file_size(path, ec);
    if (ec) throw input_error::in_file(path, "cannot read: " + ec.message());
    if (size > max_bytes)
        throw input_error::in_file(path, fmt::format("{} bytes: too large for {} (at most {} MiB)", size, what, max_bytes >> 20));
    std::ifstream in(path, std::ios::binary);
    std::string text(static_cast<std::size_t>(size), '\0');
    if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) throw input_error::in_file(path, "cannot read");
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw input_error::at_offset(path, static_cast<std::int64_t>(e.byte), std::string("invalid JSON: ") + e.what());
    }
}

std::optional<std::string> json_file_text(const std::string& path, std::uintmax_t max_bytes) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::error_code ec;
    if (ext != ".json" || !fs::is_regular_file(path, ec)) return std::nullopt;
    const auto size = fs::file_size(path, ec);
    if (ec || size > max_bytes) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    std::string text(static_cast<std::size_t>(size), '\0');
    if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) return std::nullopt;
    return text;
}

}  // namespace oomdx
