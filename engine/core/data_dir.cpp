#include "engine/core/data_dir.h"

#include <cstdlib>
#include <filesystem>

namespace oomdx {

std::string data_dir() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("OOMDX_DATA_DIR"); env && *env) return env;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path share = exe.parent_path().parent_path() / "share" / "oomdx";
        if (fs::exists(share / "knowledge", ec)) return share.string();
    }
    return OOMDX_SOURCE_DIR;
}

std::string data_path(const std::string& rel) {
    return (std::filesystem::path(data_dir()) / rel).string();
}

}  // namespace oomdx
