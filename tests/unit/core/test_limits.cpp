#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/limits.h"
#include "engine/core/text_file.h"
#include "engine/core/utf8.h"

using namespace oomdx;

namespace {

std::string write_temp(const std::string& name, const std::string& data) {
    const auto dir = std::filesystem::temp_directory_path() / ("oomdx_core_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << data;
    return p;
}

std::string error_of(const std::string& path, const char* kind = "a config") {
    try {
        (void)read_text_file(path, kind);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

// Restores the process limits a test changed.
struct limits_guard {
    input_limits saved = current_limits();
    ~limits_guard() { current_limits() = saved; }
};

}  // namespace

TEST_CASE("limits: defaults, NAME=VALUE with units, clear errors") {
    limits_guard g;
    CHECK(current_limits().text_file_bytes == 4LL << 20);
    set_limit("text_file_bytes=64MiB");
    CHECK(current_limits().text_file_bytes == 64LL << 20);
    set_limits_from_list("snapshot_memo=1000,config_depth=8");
    CHECK(current_limits().snapshot_memo == 1000);
    CHECK(current_limits().config_depth == 8);
    CHECK_THROWS_WITH_AS(set_limit("bogus=1"), doctest::Contains("unknown limit 'bogus'"), usage_error);
    CHECK_THROWS_WITH_AS(set_limit("snapshot_memo"), doctest::Contains("needs a value"), usage_error);
    CHECK_THROWS_WITH_AS(set_limit("snapshot_memo=-3"), doctest::Contains("not a positive"), usage_error);
    CHECK_THROWS_WITH_AS(set_limit("log_file_bytes=1e30GiB"), doctest::Contains("not a positive"), usage_error);
    CHECK(describe_limits().find("snapshot_containers") != std::string::npos);
}

TEST_CASE("sizes: overflow is not a size, doubles saturate") {
    CHECK_FALSE(parse_size("99999999999999999999 TiB").has_value());
    CHECK(parse_size("8 EiB") == std::nullopt);  // unknown unit
    CHECK(saturate_to_int64(1e300) == INT64_MAX);
    CHECK(saturate_to_int64(-1e300) == INT64_MIN);
    CHECK(saturate_to_int64(0.0 / 0.0) == 0);
    CHECK(saturate_to_int64(42.9) == 42);
}

TEST_CASE("UTF-8: first invalid byte, replacement") {
    CHECK(first_invalid_utf8("plain ascii") == std::string_view::npos);
    CHECK(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac") == std::string_view::npos);
    CHECK(first_invalid_utf8("ab\xc3\x28") == 2);
    CHECK(first_invalid_utf8("\xe0\x80\x80") == 0);   // overlong
    CHECK(first_invalid_utf8("\xf4\x90\x80\x80") == 0);  // above U+10FFFF
    CHECK(first_invalid_utf8("x\xe2\x82") == 1);       // truncated sequence
    CHECK(to_valid_utf8("a\xffz") == "a\xef\xbf\xbdz");
    CHECK(to_valid_utf8("a\x01z", true) == "a\xef\xbf\xbdz");
    CHECK(to_valid_utf8("a\tz", true) == "a\tz");
}

TEST_CASE("UTF-8: a prefix never ends inside a character") {
    const std::string zh = "\xe6\x98\xbe\xe5\xad\x98";  // two 3-byte characters
    CHECK(utf8_prefix(zh, 6) == zh);
    CHECK(utf8_prefix(zh, 5) == zh.substr(0, 3));
    CHECK(utf8_prefix(zh, 4) == zh.substr(0, 3));
    CHECK(utf8_prefix(zh, 3) == zh.substr(0, 3));
    CHECK(utf8_prefix(zh, 2).empty());
    CHECK(utf8_prefix("ascii", 3) == "asc");
    CHECK(utf8_prefix("ab\xf0\x9f\x98\x80", 5) == "ab");  // 4-byte emoji cut after 3 of its bytes
    CHECK(utf8_prefix("\x80\x80\x80\x80\x80z", 4) == "\x80");  // invalid input: at most 3 steps back
}

TEST_CASE("text files: NUL, UTF-8, empty, size and item limits each name file and line") {
    limits_guard g;
    CHECK(read_text_file(write_temp("ok.toml", "a = 1\n"), "a config") == "a = 1\n");
    CHECK(error_of(write_temp("nul.toml", std::string("a = 1\nb\0c\n", 10))).find("nul.toml:2: binary data (NUL byte at byte 7)") !=
          std::string::npos);
    CHECK(error_of(write_temp("bad.toml", "a = 1\n\nb = \"\xff\"\n")).find("bad.toml:3: invalid UTF-8 at byte 12") !=
          std::string::npos);
    CHECK(error_of(write_temp("empty.toml", " \n\t\n")).find("empty file, expected a config") != std::string::npos);
    CHECK(read_text_file(write_temp("empty.yaml", ""), "a YAML file", true).empty());
    set_limit("text_file_bytes=10");
    CHECK(error_of(write_temp("big.toml", "a = 12345678901\n")).find("limit text_file_bytes") != std::string::npos);
    set_limit("text_file_bytes=1MiB");
    set_limit("text_items=2");
    CHECK(error_of(write_temp("items.toml", "a = [1,2,3]\nb = 2\n")).find("items.toml:1: more than 2") !=
          std::string::npos);
}

TEST_CASE("line_of_offset counts lines up to the offset") {
    CHECK(line_of_offset("a\nb\nc", 0) == 1);
    CHECK(line_of_offset("a\nb\nc", 2) == 2);
    CHECK(line_of_offset("a\nb\nc", 100) == 3);
}
