#include "engine/core/yaml_file.h"

#include <algorithm>
#include <filesystem>

#include "engine/core/errors.h"

namespace oomdx {

YAML::Node load_yaml_file(const std::string& file) {
    try {
        return YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
        throw input_error::at_line(file, e.mark.line + 1, e.msg);
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
