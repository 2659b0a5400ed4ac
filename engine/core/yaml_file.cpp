#include "engine/core/yaml_file.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/limits.h"

namespace oomdx {

std::string yaml_error_text(const YAML::Exception& e) {
    if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
        return fmt::format("nested deeper than the YAML reader allows ({} levels)", deep->depth());
    return e.msg;
}

void check_text_file_size(const std::string& file) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    const auto limit = current_limits().text_file_bytes;
    if (!ec && size > static_cast<std::uintmax_t>(limit))
        throw input_error::in_file(file, fmt::format("file of {} is larger than {} (limit text_file_bytes)",
                                                     format_bytes(static_cast<std::int64_t>(size)),
                                                     format_bytes(limit)));
}

YAML::Node load_yaml_file(const std::string& file) {
    check_text_file_size(file);
    try {
        return YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
        throw input_error::at_line(file, e.mark.line + 1, yaml_error_text(e));
    }
}

std::vector<std::string> yaml_files_in(const std::string& dir, std::error_code& ec) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace oomdx
