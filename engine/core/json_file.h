// Reading a whole JSON document that oomdx wrote (a per-rank summary) with the checks every such
// file gets: it exists, it is small, it parses (errors name the byte offset).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace oomdx {

constexpr std::uintmax_t k_summary_max_bytes = std::uintmax_t(64) << 20;  // summaries are kilobytes

// The document; `what` names it in messages ("a log summary"). Throws input_error.
nlohmann::json read_json_file(const std::string& path, const char* what, std::uintmax_t max_bytes = k_summary_max_bytes);
// The text of a `.json` file of at most max_bytes, or nothing (for telling summaries from other inputs).
std::optional<std::string> json_file_text(const std::string& path, std::uintmax_t max_bytes = k_summary_max_bytes);

}  // namespace oomdx
