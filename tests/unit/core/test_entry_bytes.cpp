// bin::entry_bytes (binary_io.h): the same bytes as read_bytes, without zeroing a buffer first.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/core/binary_io.h"

using namespace oomdx;
namespace fs = std::filesystem;

TEST_CASE("entry_bytes: a file's bytes whole, as read_bytes reads them; nothing for a missing file") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_entry_bytes_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string big;
    for (int i = 0; i < 70000; ++i) big += static_cast<char>(i * 7 + (i >> 8));  // NUL bytes included
    const std::string p = (dir / "entry.bin").string();
    std::ofstream(p, std::ios::binary) << big;
    CHECK(bin::entry_bytes(p).view() == big);
    CHECK(bin::entry_bytes(p).view() == *bin::read_bytes(p));

    const std::string empty = (dir / "empty.bin").string();
    std::ofstream(empty, std::ios::binary) << "";
    CHECK(bin::entry_bytes(empty).view().empty());
    CHECK(bin::entry_bytes((dir / "missing.bin").string()).view().empty());
    CHECK(bin::entry_bytes(dir.string()).view().empty());  // a folder
    // Not a regular file (its size reads as 0): read to its end all the same.
    const auto status = bin::read_bytes("/proc/self/cmdline");
    if (status && !status->empty()) CHECK_FALSE(bin::entry_bytes("/proc/self/cmdline").view().empty());
    fs::remove_all(dir);
}
