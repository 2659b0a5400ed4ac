// The stored log signatures (parsers/log/signature_cache.h): a stored set equals a fresh load
// field for field; a damaged, truncated or foreign entry is ignored and written again; an edited
// signature file loads the directory again.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "engine/core/binary_io.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "parsers/log/signature_cache.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

void same_regex(const sig_regex* a, const sig_regex* b) {
    REQUIRE((a == nullptr) == (b == nullptr));
    if (!a) return;
    CHECK(a->pattern() == b->pattern());
    CHECK(a->where() == b->where());
    CHECK(a->min_groups() == b->min_groups());
}

void same_signatures(const signature_set& a, const signature_set& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const signature& x = a.all()[i];
        const signature& y = b.all()[i];
        INFO(x.id);
        CHECK(x.id == y.id);
        CHECK(x.file == y.file);
        CHECK(x.line == y.line);
        CHECK(x.kind == y.kind);
        CHECK(x.literals == y.literals);
        same_regex(x.regex.get(), y.regex.get());
        same_regex(x.unless.get(), y.unless.get());
        CHECK(x.source == y.source);
        CHECK(x.device_kind == y.device_kind);
        CHECK(x.framework == y.framework);
        CHECK(x.phase == y.phase);
        CHECK(x.statistic == y.statistic);
        CHECK(x.applies_to == y.applies_to);
        CHECK(x.weak == y.weak);
        CHECK(x.fallback == y.fallback);
        CHECK(x.per_step == y.per_step);
        CHECK(x.at_start == y.at_start);
        CHECK(x.multiples == y.multiples);
        CHECK(x.by_total == y.by_total);
        CHECK(x.unit_advance == y.unit_advance);
        CHECK(x.eval_counter == y.eval_counter);
        CHECK(x.run_start == y.run_start);
        CHECK(x.exclusive == y.exclusive);
        CHECK(x.prefix_rank == y.prefix_rank);
        CHECK(x.priority == y.priority);
        CHECK(x.weight == y.weight);
        CHECK(x.window == y.window);
        CHECK(x.fact == y.fact);
        CHECK(x.needs_report == y.needs_report);  // rev27: a cached set lost it, and every switch read as a setting
        CHECK(x.values == y.values);
        REQUIRE(x.fields.size() == y.fields.size());
        for (std::size_t f = 0; f < x.fields.size(); ++f) {
            CHECK(x.fields[f].name == y.fields[f].name);
            CHECK(x.fields[f].unit == y.fields[f].unit);
            REQUIRE(x.fields[f].patterns.size() == y.fields[f].patterns.size());
            for (std::size_t p = 0; p < x.fields[f].patterns.size(); ++p)
                same_regex(x.fields[f].patterns[p].get(), y.fields[f].patterns[p].get());
        }
    }
}

// The prefilter of the stored set finds what the loaded one finds.
void same_candidates(const signature_set& a, const signature_set& b, const std::string& text) {
    std::vector<int> ha, hb;
    std::vector<char> ma(a.size(), 0), mb(b.size(), 0);
    a.candidates(text, ha, ma);
    b.candidates(text, hb, mb);
    CHECK(ha == hb);
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("oomdx_sig_cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string read(const std::string& path) { return bin::read_all(path); }

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("signature cache: the shipped set comes back signature for signature") {
    const fs::path cache = temp_dir("shipped");
    const std::vector<std::string> dirs{data_path("knowledge/log_signatures")};
    const signature_set fresh = signature_set::load(dirs, signature_set::patterns::lazy);
    const std::string entry = signature_cache_entry(dirs, cache.string());
    same_signatures(fresh, load_signatures_cached(dirs, cache.string()));  // stores
    REQUIRE(fs::exists(entry));
    const std::string stored = read(entry);
    REQUIRE(decode_signatures(stored, signature_cache_key(dirs)));
    const signature_set back = load_signatures_cached(dirs, cache.string());  // reads back
    same_signatures(fresh, back);
    CHECK(read(entry) == stored);
    same_signatures(fresh, load_signatures_cached(dirs, ""));  // no cache
    for (const char* line : {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                             "[rank3]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp, unhandled system error",
                             "{'loss': 1.23, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}",
                             "iteration      100/    1000 | consumed samples: 3200 | elapsed time per iteration (ms)"})
        same_candidates(fresh, back, line);
    // A stored pattern compiles on first use as the loaded one does.
    for (std::size_t i = 0; i < fresh.size(); ++i)
        if (fresh.all()[i].regex) {
            CHECK(back.all()[i].regex->compile() == fresh.all()[i].regex->compile());
            break;
        }
    fs::remove_all(cache);
}

TEST_CASE("signature cache: a damaged, truncated or foreign entry is ignored and written again") {
    const fs::path cache = temp_dir("damaged");
    const std::vector<std::string> dirs{data_path("knowledge/log_signatures")};
    const signature_set fresh = signature_set::load(dirs, signature_set::patterns::lazy);
    const std::string key = signature_cache_key(dirs);
    REQUIRE(!key.empty());
    const std::string good = encode_signatures(fresh, key);
    CHECK_FALSE(decode_signatures(good, key + "x"));
    CHECK_FALSE(decode_signatures("", key));
    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 1;
    std::string bad_magic = good;
    bad_magic[0] = 'x';
    const std::string entry = signature_cache_entry(dirs, cache.string());
    for (const std::string& bad : {good.substr(0, good.size() - 1), good.substr(0, good.size() / 3),
                                   good.substr(0, 10), flipped, bad_magic, encode_signatures(fresh, "a stale key"),
                                   good + "trailing", std::string()}) {
        CHECK_FALSE(decode_signatures(bad, key));
        write(entry, bad);
        same_signatures(fresh, load_signatures_cached(dirs, cache.string()));
        CHECK(read(entry) == good);  // written again
    }
    fs::remove_all(cache);
}

TEST_CASE("signature cache: an edited, added or broken file loads the directory again") {
    const fs::path cache = temp_dir("edits");
    const fs::path dir = temp_dir("sigs");
    const std::vector<std::string> dirs{dir.string()};
    const std::string one =
        "signatures:\n  - id: a_oom\n    kind: oom\n    source: caching_allocator\n    literal: \"out of memory\"\n";
    write((dir / "a.yaml").string(), one);
    CHECK(load_signatures_cached(dirs, cache.string()).all().at(0).literals.at(0) == "out of memory");
    const std::string entry = signature_cache_entry(dirs, cache.string());
    REQUIRE(fs::exists(entry));
    // The same size, another text: the key holds the content's hash, not only the size.
    std::string edited = one;
    edited.replace(edited.find("out of memory"), 13, "OUT OF MEMORY");
    write((dir / "a.yaml").string(), edited);
    CHECK(load_signatures_cached(dirs, cache.string()).all().at(0).literals.at(0) == "OUT OF MEMORY");
    CHECK(decode_signatures(read(entry), signature_cache_key(dirs)));
    // An added file, and a test file beside it (not a signature file: not in the key).
    write((dir / "b.yaml").string(),
          "signatures:\n  - id: b_crash\n    kind: crash\n    literal: \"Traceback (most recent call last)\"\n");
    const std::string key_two = signature_cache_key(dirs);
    CHECK(load_signatures_cached(dirs, cache.string()).size() == 2);
    write((dir / "b.test.yaml").string(), "examples: []\n");
    CHECK(signature_cache_key(dirs) == key_two);
    // A broken file throws as the plain load does, every run, and the stored copy stays unused.
    write((dir / "b.yaml").string(), "signatures:\n  - id: b_crash\n    kind: nonsense\n    literal: \"Traceback\"\n");
    CHECK_THROWS_AS(load_signatures_cached(dirs, cache.string()), input_error);
    CHECK_THROWS_AS(load_signatures_cached(dirs, cache.string()), input_error);
    fs::remove(dir / "b.yaml");
    CHECK(load_signatures_cached(dirs, cache.string()).size() == 1);
    fs::remove_all(dir);
    fs::remove_all(cache);
}
