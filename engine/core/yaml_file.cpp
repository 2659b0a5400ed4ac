#include "engine/core/yaml_file.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string_view>

#include <dirent.h>

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

// readdir, not std::filesystem::directory_iterator: the same names (a name whose extension, as
// std::filesystem::path::extension gives it, is ".yaml"; "." and ".." skipped; the path joined
// as operator/ joins it) for a sixth of the instructions, on every snapshot run (snap34).
std::vector<std::string> yaml_files_in(const std::string& dir, std::error_code& ec) {
    ec.clear();
    std::vector<std::string> files;
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        ec = std::error_code(errno, std::generic_category());
        return files;
    }
    const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        // ".yaml" alone is a hidden file's name with no extension (as path::extension says).
        if (name.size() > 5 && name.ends_with(".yaml")) files.push_back(prefix + e->d_name);
    }
    if (errno != 0) ec = std::error_code(errno, std::generic_category());
    ::closedir(d);
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace oomdx
