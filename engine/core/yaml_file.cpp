#include "engine/core/yaml_file.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include "engine/core/errors.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"

namespace oomdx {

std::string yaml_error_text(const YAML::Exception& e) {
    if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
        return fmt::format("nested deeper than the YAML reader allows ({} levels)", deep->depth());
    return e.msg;
}

YAML::Node load_yaml_file(const std::string& file) {
    const std::string text = read_text_file(file, "a YAML file", /*allow_empty=*/true);
    try {
        return load_yaml_cached(file, text);
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
