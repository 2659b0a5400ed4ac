#include "engine/core/cache_key.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#if defined(__linux__)
#include <link.h>
#endif

namespace oomdx {

std::uint64_t cache_hash(std::string_view s) {
    // Eight bytes a step, multiplied and folded (a 64-bit variant of FNV); the length and the
    // tail bytes are mixed in last.
    constexpr std::uint64_t k_prime = 0x100000001b3ULL;
    std::uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * k_prime;
        h ^= h >> 29;
    }
    for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * k_prime;
    return h ^ (h >> 32);
}

#if defined(__linux__)
namespace {

// The executable's GNU build id note (the first object dl_iterate_phdr reports).
int build_id_of_executable(dl_phdr_info* info, size_t, void* data) {
    auto* out = static_cast<std::string*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
        const char* end = p + ph.p_memsz;
        while (end - p >= static_cast<std::ptrdiff_t>(sizeof(ElfW(Nhdr)))) {
            ElfW(Nhdr) nh;
            std::memcpy(&nh, p, sizeof nh);
            const std::size_t name_sz = (nh.n_namesz + 3) & ~3u, desc_sz = (nh.n_descsz + 3) & ~3u;
            const char* name = p + sizeof nh;
            const char* desc = name + name_sz;
            if (desc + desc_sz > end) break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                for (std::size_t k = 0; k < nh.n_descsz; ++k)
                    *out += fmt::format("{:02x}", static_cast<unsigned char>(desc[k]));
                return 1;
            }
            p = desc + desc_sz;
        }
    }
    return 1;
}

}  // namespace
#endif

const std::string& build_identity() {
    static const std::string id = [] {
        std::string s;
#if defined(__linux__)
        dl_iterate_phdr(build_id_of_executable, &s);
        if (!s.empty()) return "build-id " + s;
        std::error_code ec;
        namespace fs = std::filesystem;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        if (ec) return std::string();
        const auto size = fs::file_size(exe, ec);
        if (ec) return std::string();
        const auto mtime = fs::last_write_time(exe, ec);
        if (ec) return std::string();
        s = fmt::format("exe {} {} {}", exe.string(), size, mtime.time_since_epoch().count());
#endif
        return s;
    }();
    return id;
}

}  // namespace oomdx
