#include "engine/core/data_dir.h"

#include <cstdlib>
#include <filesystem>

namespace oomdx {

namespace {

// The installed data beside the binary, else the source tree. Looked up once: the binary does
// not move while it runs, and a run reads some fifty data files.
std::string installed_or_source_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path share = exe.parent_path().parent_path() / "share" / "oomdx";
        if (fs::exists(share / "knowledge", ec)) return share.string();
    }
    return OOMDX_SOURCE_DIR;
}

}  // namespace

std::string data_dir() {
    if (const char* env = std::getenv("OOMDX_DATA_DIR"); env && *env) return env;
    static const std::string dir = installed_or_source_dir();
    return dir;
}

std::string data_path(const std::string& rel) {
    return (std::filesystem::path(data_dir()) / rel).string();
}

}  // namespace oomdx
