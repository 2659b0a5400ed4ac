// The shipped category rules' stored copy (categories.cpp, snap34): the same rules back, a damaged
// or truncated copy refused (parsed again), regular expressions and ignore_case kept.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/core/binary_io.h"
#include "engine/core/data_dir.h"
#include "engine/core/file_stamps.h"
#include "engine/core/text_file.h"
#include "parsers/snapshot/categories.h"

using namespace oomdx;
using namespace oomdx::snap;
namespace fs = std::filesystem;

namespace {

// Each frame's category under `r`: the innermost-frame rules, the any-frame mask, the site test.
std::vector<long long> store_verdicts(const category_rules& r) {
    static const frame_text frames[] = {
        {"forward", "/home/u/model.py", 3},
        {"hccl_alloc", "/x/torch_npu/distributed/hccl_utils.py", 5},
        {"Step", "/usr/lib/python3.11/site-packages/torch/optim/adam.py", 9},
        {"_flash_attn_forward", "flash_attn/flash_attn_interface.py", 1},
        {"backward", "/opt/torch/autograd/__init__.py", 2},
        {"cudaMalloc", "??", 0},
        {"KV_Update", "/Pkg/Mod/cache.py", 4},
        {"STEP", "/a/b.py", 6},
        {"hccl_wait", "??", 0},
    };
    std::vector<long long> out;
    for (const auto& f : frames) {
        out.push_back(r.frame_category(f));
        out.push_back(static_cast<long long>(r.any_mask(f)));
        out.push_back(r.site_candidate(f));
    }
    out.push_back(static_cast<long long>(r.names().size()));
    return out;
}

struct store_env {
    std::string old;
    bool had = false;
    explicit store_env(const std::string& v) {
        if (const char* o = std::getenv("OOMDX_CACHE_DIR")) {
            had = true;
            old = o;
        }
        ::setenv("OOMDX_CACHE_DIR", v.c_str(), 1);
    }
    ~store_env() {
        if (had) ::setenv("OOMDX_CACHE_DIR", old.c_str(), 1);
        else ::unsetenv("OOMDX_CACHE_DIR");
    }
};

std::vector<fs::path> category_entries(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().starts_with("categories-")) out.push_back(e.path());
    return out;
}

}  // namespace

TEST_CASE("category rules: encode and decode give the same rules, ignore_case and regular expressions included") {
    const std::string path = data_path("knowledge/snapshot_categories.yaml");
    const category_rules yaml = category_rules::parse(read_text_file(path, "category rules (YAML)"), path);
    const auto back = category_rules::decode(yaml.encode());
    REQUIRE(back);
    CHECK(back->encode() == yaml.encode());
    CHECK(store_verdicts(*back) == store_verdicts(yaml));

    auto user = category_rules::parse("{hccl_buffers: 'hccl|HCCL', attn: 'FLASH_attn'}", "profile.yaml");
    auto own = category_rules::parse(
        "frame:\n"
        "  - {category: eq, name_equals: [Step], ignore_case: true}\n"
        "  - {category: re, name_regex: 'kv_(update|cache)', ignore_case: true}\n"
        "  - {category: fre, filename_regex: '/Pkg/', cpp: true}\n"
        "  - {category: cppr, name_contains: [cudaMalloc], cpp: true}\n"
        "site_skip: [/home/lib/]\n",
        "x.yaml");
    own.prepend(user);
    const auto own_back = category_rules::decode(own.encode());
    REQUIRE(own_back);
    CHECK(store_verdicts(*own_back) == store_verdicts(own));
    CHECK(own_back->rule_count() == own.rule_count());

    // Every truncation, and a category index past the names, is refused (the caller parses again).
    const std::string payload = own.encode();
    for (std::size_t n = 0; n < payload.size(); ++n) CHECK_FALSE(category_rules::decode(payload.substr(0, n)));
    category_rules one = category_rules::parse("frame:\n  - {category: kv, name_contains: [kv]}\n", "y.yaml");
    std::string bad = one.encode();
    const std::size_t names_end = 4 + [&] {
        std::size_t at = 0;
        for (const auto& s : one.names()) at += 4 + s.size();
        return at;
    }();
    const std::size_t cat_at = names_end + 4 /* site_skip */ + 4 /* any */ + 4 /* frame count */;
    bin::reader check(std::string_view(bad).substr(cat_at));
    int cat = -1;
    REQUIRE(check.small(cat));
    CHECK(cat == one.find("kv"));
    std::string past;
    bin::put_int(past, static_cast<int>(one.names().size()));
    bad.replace(cat_at, 8, past);
    CHECK_FALSE(category_rules::decode(bad));
}

TEST_CASE("shipped category rules: stored once, read back, a damaged copy parsed and stored again") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_category_store_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    store_env env(dir.string());
    const std::string path = data_path("knowledge/snapshot_categories.yaml");
    const auto want = store_verdicts(category_rules::parse(read_text_file(path, "category rules (YAML)"), path));

    CHECK(category_entries(dir).empty());
    CHECK(store_verdicts(category_rules::shipped()) == want);  // parsed, then stored
    const auto entries = category_entries(dir);
    REQUIRE(entries.size() == 1);
    const std::string stored = bin::read_all(entries[0].string());
    CHECK(store_verdicts(category_rules::shipped()) == want);  // read back
    CHECK(bin::read_all(entries[0].string()) == stored);

    std::string damaged = stored;
    damaged[damaged.size() / 2] ^= 0x5a;
    std::ofstream(entries[0], std::ios::binary) << damaged;
    CHECK(store_verdicts(category_rules::shipped()) == want);  // refused, parsed again
    // and stored again (the file's stamp ahead of the rules taken anew: file_stamps.h)
    CHECK(file_stamps::split(bin::read_all(entries[0].string())).second == file_stamps::split(stored).second);
    CHECK_FALSE(file_stamps::split(stored).second.empty());
    fs::remove_all(dir);
}
