#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "engine/core/data_dir.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

// Everything a loader can read from a node: type, mark, tag, style, scalar, children in order.
void same_tree(const YAML::Node& a, const YAML::Node& b, const std::string& where) {
    INFO(where << " line " << a.Mark().line + 1);
    REQUIRE(a.Type() == b.Type());
    CHECK(a.Mark().line == b.Mark().line);
    CHECK(a.Mark().column == b.Mark().column);
    CHECK(a.Mark().pos == b.Mark().pos);
    CHECK(a.Tag() == b.Tag());
    CHECK(a.Style() == b.Style());
    if (a.IsScalar()) CHECK(a.Scalar() == b.Scalar());
    if (!a.IsSequence() && !a.IsMap()) return;
    REQUIRE(a.size() == b.size());
    auto ib = b.begin();
    for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        if (a.IsSequence()) {
            same_tree(*ia, *ib, where);
        } else {
            same_tree(ia->first, ib->first, where);
            same_tree(ia->second, ib->second, where);
        }
    }
}

std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("oomdx_yaml_cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

const char* k_sample = R"(# a pack
- rule: a
  quoted: "yes"
  plain: yes
  empty:
  tilde: ~
  flow: [1, 2, {x: y}]
  text: >
    folded
    prose
- - nested
  - list
)";

}  // namespace

TEST_CASE("yaml cache: every shipped YAML file comes back as the tree yaml-cpp parses") {
    int files = 0;
    for (const char* sub : {"rules", "knowledge"}) {
        for (const auto& e : fs::recursive_directory_iterator(data_path(sub))) {
            if (e.path().extension() != ".yaml") continue;
            const std::string text = slurp(e.path().string());
            const YAML::Node parsed = YAML::Load(text);
            const auto back = decode_yaml_tree(encode_yaml_tree(parsed, text), text);
            REQUIRE(back.has_value());
            same_tree(parsed, *back, e.path().string());
            ++files;
        }
    }
    CHECK(files > 50);
}

TEST_CASE("yaml cache: a stored tree is refused for other text and when damaged") {
    const std::string text = k_sample;
    const std::string stored = encode_yaml_tree(YAML::Load(text), text);
    CHECK(decode_yaml_tree(stored, text).has_value());
    CHECK_FALSE(decode_yaml_tree(stored, text + " ").has_value());        // the file grew
    std::string edited = text;
    edited[edited.find("folded")] = 'F';
    CHECK_FALSE(decode_yaml_tree(stored, edited).has_value());           // same size, other text
    CHECK_FALSE(decode_yaml_tree("", text).has_value());
    for (size_t cut = 0; cut < stored.size(); cut += 7)                  // truncated anywhere
        CHECK_FALSE(decode_yaml_tree(stored.substr(0, cut), text).has_value());
    for (size_t at = 0; at < stored.size(); at += 5) {                   // any flipped byte
        std::string bad = stored;
        bad[at] = static_cast<char>(bad[at] ^ 0x5a);
        CHECK_FALSE(decode_yaml_tree(bad, text).has_value());
    }
}

TEST_CASE("yaml cache: a payload that passes the checksums but lies is refused, not trusted") {
    // A hand-made payload: a sequence that claims 1,000,000 children in a few bytes.
    const std::string text = "x";
    std::string payload;
    payload += static_cast<char>(3);  // sequence
    payload += static_cast<char>(0);
    payload.append(12, '\0');         // mark
    payload.append(4, '\0');          // empty tag
    const std::uint32_t count = 1000000;
    payload.append(reinterpret_cast<const char*>(&count), 4);
    std::string stored = "oomdxyc1";
    auto put64 = [&](std::uint64_t v) { stored.append(reinterpret_cast<const char*>(&v), 8); };
    put64(text.size());
    put64(text_hash(text));
    put64(payload.size());
    put64(text_hash(payload));
    CHECK_FALSE(decode_yaml_tree(stored + payload, text).has_value());
}

TEST_CASE("yaml cache: the folder gets one entry per file, reused, replaced when the file changes") {
    const fs::path dir = temp_dir("entries");
    const std::string file = (dir / "pack.yaml").string();
    const std::string text = k_sample;
    same_tree(YAML::Load(text), load_yaml_cached_in(dir.string(), file, text), "first");
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
    REQUIRE(entries.size() == 1);
    const std::string first = slurp(entries[0].string());
    same_tree(YAML::Load(text), load_yaml_cached_in(dir.string(), file, text), "second");
    CHECK(slurp(entries[0].string()) == first);

    std::ofstream(entries[0], std::ios::binary) << "garbage";  // a damaged entry is rewritten
    same_tree(YAML::Load(text), load_yaml_cached_in(dir.string(), file, text), "damaged");
    CHECK(slurp(entries[0].string()) == first);

    const std::string edited = text + "- added\n";
    same_tree(YAML::Load(edited), load_yaml_cached_in(dir.string(), file, edited), "edited");
    CHECK(slurp(entries[0].string()) != first);
    size_t count = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++count;
    CHECK(count == 1);
    fs::remove_all(dir);
}

TEST_CASE("yaml cache: a syntax error is the parser's error, cached or not; no folder, no cache") {
    const fs::path dir = temp_dir("errors");
    CHECK_THROWS_AS(load_yaml_cached_in(dir.string(), (dir / "bad.yaml").string(), "a: [1, 2"), YAML::Exception);
    CHECK(fs::is_empty(dir));
    const std::string text = k_sample;
    same_tree(YAML::Load(text), load_yaml_cached_in("", (dir / "p.yaml").string(), text), "no cache");
    CHECK(fs::is_empty(dir));
    fs::remove_all(dir);
}

TEST_CASE("yaml cache: the folder keeps the newest entries only") {
    const fs::path dir = temp_dir("prune");
    const std::string text = k_sample;
    for (int i = 0; i < 6; ++i)
        (void)load_yaml_cached_in(dir.string(), (dir / ("p" + std::to_string(i) + ".yaml")).string(), text);
    std::ofstream(dir / "other.txt") << "not an entry";
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".bin") entries.push_back(e.path());
    REQUIRE(entries.size() == 6);
    // age two entries by a day: they are the ones to go
    for (size_t i = 0; i < 2; ++i) fs::last_write_time(entries[i], fs::file_time_type::clock::now() - std::chrono::hours(24));
    prune_yaml_cache(dir.string(), 4);
    size_t left = 0;
    for (const auto& e : fs::directory_iterator(dir)) left += e.path().extension() == ".bin";
    CHECK(left == 4);
    CHECK_FALSE(fs::exists(entries[0]));
    CHECK_FALSE(fs::exists(entries[1]));
    CHECK(fs::exists(dir / "other.txt"));  // only entries are removed
    prune_yaml_cache(dir.string(), 4);       // nothing beyond the limit: nothing removed
    left = 0;
    for (const auto& e : fs::directory_iterator(dir)) left += e.path().extension() == ".bin";
    CHECK(left == 4);
    fs::remove_all(dir);
}
