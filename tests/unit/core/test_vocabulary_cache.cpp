#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary_cache.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

void same_vocabulary(const vocabulary& a, const vocabulary& b) {
    REQUIRE(a.all().size() == b.all().size());
    for (std::size_t i = 0; i < a.all().size(); ++i) {
        const fact_decl& x = a.all()[i];
        const fact_decl& y = b.all()[i];
        INFO(x.name);
        CHECK(x.name == y.name);
        CHECK(x.kind == y.kind);
        CHECK(x.unit == y.unit);
        CHECK(x.desc == y.desc);
        CHECK(x.values == y.values);
        CHECK(x.phrases == y.phrases);
        CHECK(x.is_override == y.is_override);
        CHECK(x.file == y.file);
        CHECK(x.line == y.line);
        CHECK(b.find(x.name) != nullptr);
    }
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("oomdx_vocab_cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::size_t entries_in(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().starts_with("vocab-")) ++n;
    return n;
}

}  // namespace

TEST_CASE("vocabulary cache: the shipped vocabulary comes back declaration for declaration") {
    const fs::path cache = temp_dir("shipped");
    const std::string dir = data_path("knowledge/facts");
    const vocabulary direct = vocabulary::load_dir(dir);
    same_vocabulary(direct, load_vocabulary_cached(dir, cache.string()));  // stores
    REQUIRE(entries_in(cache) == 1);
    same_vocabulary(direct, load_vocabulary_cached(dir, cache.string()));  // reads back
    same_vocabulary(direct, load_vocabulary_cached(dir, ""));              // no cache
    fs::remove_all(cache);
}

TEST_CASE("vocabulary cache: a damaged or foreign copy is refused") {
    const vocabulary v = vocabulary::load_dir(data_path("knowledge/facts"));
    const std::string stored = encode_vocabulary(v, "key");
    REQUIRE(decode_vocabulary(stored, "key"));
    CHECK_FALSE(decode_vocabulary(stored, "other key"));
    CHECK_FALSE(decode_vocabulary(stored.substr(0, stored.size() - 1), "key"));
    std::string flipped = stored;
    flipped[flipped.size() / 2] ^= 1;
    CHECK_FALSE(decode_vocabulary(flipped, "key"));
    CHECK_FALSE(decode_vocabulary("", "key"));
}

TEST_CASE("vocabulary cache: an edited, added or broken file is loaded again with its checks") {
    const fs::path cache = temp_dir("edits");
    const fs::path dir = temp_dir("facts");
    std::ofstream(dir / "a.yaml") << "- name: x.size\n  type: bytes\n";
    CHECK(load_vocabulary_cached(dir.string(), cache.string()).find("x.size")->kind == fact_kind::bytes);
    CHECK(load_vocabulary_cached(dir.string(), cache.string()).find("x.size")->kind == fact_kind::bytes);
    std::ofstream(dir / "a.yaml") << "- name: x.size\n  type: integer\n";
    CHECK(load_vocabulary_cached(dir.string(), cache.string()).find("x.size")->kind == fact_kind::integer);
    std::ofstream(dir / "b.yaml") << "- name: y.flag\n  type: bool\n";
    const vocabulary both = load_vocabulary_cached(dir.string(), cache.string());
    CHECK(both.find("y.flag") != nullptr);
    CHECK(both.find("x.size")->kind == fact_kind::integer);
    std::ofstream(dir / "b.yaml") << "- name: y.flag\n  type: nope\n";
    CHECK_THROWS_AS(load_vocabulary_cached(dir.string(), cache.string()), input_error);
    CHECK_THROWS_AS(load_vocabulary_cached(dir.string(), cache.string()), input_error);  // never stored
    CHECK(entries_in(cache) == 1);
    fs::remove_all(cache);
    fs::remove_all(dir);
}
