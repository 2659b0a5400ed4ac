// The stored compiled rule set (engine/rules/rule_set_cache.h): the same rules back, the same
// verdicts, and a new compilation whenever what it was compiled from changes or the copy is
// damaged.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "engine/core/binary_io.h"
#include "engine/core/data_dir.h"
#include "engine/core/file_stamps.h"
#include "engine/report/snapshot_verdicts.h"
#include "engine/rules/rule_loader.h"
#include "engine/rules/rule_set_cache.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/snapshot_analysis.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("oomdx_rule_cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Sets an environment variable for the scope of a test.
struct scoped_env {
    std::string name;
    std::string old;
    bool had = false;
    scoped_env(const std::string& n, const std::string& v) : name(n) {
        if (const char* o = std::getenv(n.c_str())) {
            had = true;
            old = o;
        }
        ::setenv(n.c_str(), v.c_str(), 1);
    }
    ~scoped_env() {
        if (had) ::setenv(name.c_str(), old.c_str(), 1);
        else ::unsetenv(name.c_str());
    }
};

std::vector<fs::path> stored_entries(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().starts_with("rules-")) out.push_back(e.path());
    return out;
}

std::string read_bytes(const fs::path& p) { return bin::read_all(p.string()); }

load_result compiled_evidence() {
    scoped_env off("OOMDX_CACHE_DIR", "off");
    return load_shipped_rules({"evidence"});
}

}  // namespace

TEST_CASE("rule set cache: the evidence set comes back rule for rule, byte for byte") {
    const load_result lr = compiled_evidence();
    REQUIRE(lr.ok());
    const std::string stored = encode_rule_set(lr.rules, "key");
    auto back = decode_rule_set(stored, "key");
    REQUIRE(back.has_value());
    CHECK(back->rules.size() == lr.rules.rules.size());
    CHECK(back->steps.size() == lr.rules.steps.size());
    CHECK(back->macro_text == lr.rules.macro_text);
    CHECK(back->lists == lr.rules.lists);
    CHECK(back->contradicts == lr.rules.contradicts);
    CHECK(back->files == lr.rules.files);
    CHECK(encode_rule_set(*back, "key") == stored);  // every field written is read back
    for (std::size_t i = 0; i < back->rules.size(); ++i) {
        const rule_def& a = *lr.rules.rules[i];
        const rule_def& b = *back->rules[i];
        INFO(a.id);
        CHECK(a.id == b.id);
        CHECK(a.condition->text == b.condition->text);
        CHECK(a.facts == b.facts);
        CHECK(a.where.line == b.where.line);
    }
}

TEST_CASE("rule set cache: a copy made for another key, or damaged, is not used") {
    const load_result lr = compiled_evidence();
    const std::string stored = encode_rule_set(lr.rules, "key");
    CHECK_FALSE(decode_rule_set(stored, "other key").has_value());
    CHECK_FALSE(decode_rule_set("", "key").has_value());
    CHECK_FALSE(decode_rule_set(stored.substr(0, stored.size() - 1), "key").has_value());
    for (std::size_t at : {std::size_t(3), std::size_t(40), stored.size() / 2, stored.size() - 1}) {
        std::string bad = stored;
        bad[at] = static_cast<char>(bad[at] ^ 0x20);
        CHECK_FALSE(decode_rule_set(bad, "key").has_value());
    }
}

TEST_CASE("rule set cache: stored, read back, and compiled again when a pack, the vocabulary or the copy changes") {
    // A copy of the data folder, so that a pack can be edited.
    const fs::path data = temp_dir("data");
    const fs::path cache = temp_dir("cache");
    fs::copy(data_path("rules"), data / "rules", fs::copy_options::recursive);
    fs::copy(data_path("knowledge"), data / "knowledge", fs::copy_options::recursive);
    scoped_env d("OOMDX_DATA_DIR", data.string());
    scoped_env c("OOMDX_CACHE_DIR", cache.string());

    const load_result first = load_shipped_rules({"evidence"});  // compiles and stores
    REQUIRE(first.ok());
    const auto entries = stored_entries(cache);
    REQUIRE(entries.size() == 1);
    const std::string stored = read_bytes(entries[0]);
    const load_result second = load_shipped_rules({"evidence"});  // reads back
    CHECK(encode_rule_set(second.rules, "k") == encode_rule_set(first.rules, "k"));
    // The set itself unchanged (the file stamps ahead of it may be refreshed: file_stamps.h).
    const auto set_of = [](const std::string& entry) { return std::string(file_stamps::split(entry).second); };
    CHECK(set_of(read_bytes(entries[0])) == set_of(stored));
    CHECK_FALSE(set_of(stored).empty());
    REQUIRE(second.rules.lazy_i18n);  // the translations are attached again
    CHECK(second.rules.translations("zh") != nullptr);

    // A pack written again with the same text (a checkout, a touch): read back, not compiled,
    // and its stamp renewed so that the next run need not read it.
    const fs::path touched = data / "rules" / "evidence_snapshot.yaml";
    const std::string same_text = read_bytes(touched);
    std::ofstream(touched, std::ios::binary | std::ios::trunc) << same_text;
    ::usleep(30000);  // past the clock tick of the write, so that the new stamp is not racy
    const load_result third = load_shipped_rules({"evidence"});
    CHECK(encode_rule_set(third.rules, "k") == encode_rule_set(first.rules, "k"));
    CHECK(set_of(read_bytes(entries[0])) == set_of(stored));
    struct stat st;
    REQUIRE(::stat(touched.c_str(), &st) == 0);
    bool renewed = false;
    for (const auto& f : file_stamps::split(read_bytes(entries[0])).first.stamps)
        if (f.path.ends_with("/rules/evidence_snapshot.yaml")) renewed = f.ctime_ns == std::int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
    CHECK(renewed);

    // An edited threshold: compiled again, the new value in the rules, a new copy stored.
    const fs::path pack = data / "rules" / "evidence_snapshot.yaml";
    std::string text = read_bytes(pack);
    auto rules_text = [](const load_result& lr) {
        std::string all;
        for (const auto& r : lr.rules.rules) all += r->condition->text + "\n";
        for (const auto& [k, v] : lr.rules.macro_text) all += k + "=" + v + "\n";
        return all;
    };
    const std::size_t at = text.find("condition: 0.30");
    REQUIRE_MESSAGE(at != std::string::npos, "evidence_snapshot.yaml has no threshold 'condition: 0.30' to edit");
    text.replace(at, 15, "condition: 0.35");
    std::ofstream(pack, std::ios::binary | std::ios::trunc) << text;
    const load_result edited = load_shipped_rules({"evidence"});
    CHECK(rules_text(edited) != rules_text(first));
    CHECK(rules_text(edited).find("0.35") != std::string::npos);
    CHECK(set_of(read_bytes(entries[0])) != set_of(stored));
    {
        scoped_env off("OOMDX_CACHE_DIR", "off");
        CHECK(encode_rule_set(load_shipped_rules({"evidence"}).rules, "k") == encode_rule_set(edited.rules, "k"));
    }

    // An edited fact declaration (the vocabulary the conditions are typed against): compiled again.
    const std::string edited_copy = read_bytes(entries[0]);
    std::ofstream(data / "knowledge" / "facts" / "snapshot.yaml", std::ios::app) << "# edited\n";
    load_shipped_rules({"evidence"});
    CHECK(set_of(read_bytes(entries[0])) != set_of(edited_copy));

    // A damaged copy: ignored, compiled again, and replaced.
    std::string damaged = read_bytes(entries[0]);
    damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 1);
    std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << damaged;
    const load_result again = load_shipped_rules({"evidence"});
    CHECK(encode_rule_set(again.rules, "k") == encode_rule_set(edited.rules, "k"));
    CHECK(read_bytes(entries[0]) != damaged);
    fs::remove_all(data);
    fs::remove_all(cache);
}

TEST_CASE("rule set cache: the stored evidence set gives the compiled set's snapshot verdicts") {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(std::string(OOMDX_TEST_DIR) + "/fixtures/snapshots"))
        if (e.path().extension() == ".pickle") files.push_back(e.path().string());
    const fs::path corpus = fs::path(OOMDX_SHARED_DIR) / "corpus" / "snapshots";
    std::error_code ec;
    if (fs::exists(corpus, ec)) {
        for (const auto& e : fs::directory_iterator(corpus))
            if (e.path().extension() == ".pickle" || e.path().extension() == ".pkl") files.push_back(e.path().string());
    } else {
        MESSAGE("no snapshot corpus at " << corpus.string() << ": fixtures only");
    }
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 5);

    const load_result lr = compiled_evidence();
    auto back = decode_rule_set(encode_rule_set(lr.rules, "key"), "key");
    REQUIRE(back.has_value());
    const snap::category_rules cats = snap::category_rules::shipped();
    snap::analysis_options opt;
    opt.rules = &cats;
    auto a = snap::analyze_files(files, opt, 1, {});
    auto b = snap::analyze_files(files, opt, 1, {});
    apply_snapshot_verdicts(a, lr.rules);
    apply_snapshot_verdicts(b, *back);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(files[i]);
        CHECK(snap::to_json(a[i]).dump() == snap::to_json(b[i]).dump());
    }
}

TEST_CASE("rule set cache: the oldest stored sets beyond the limit are removed, nothing else") {
    const fs::path dir = temp_dir("prune");
    for (int i = 0; i < 40; ++i) std::ofstream(dir / ("rules-" + std::to_string(i) + ".bin")) << i;
    std::ofstream(dir / "yaml-1.bin") << "x";
    std::ofstream(dir / "vocab-1.bin") << "x";
    prune_rule_sets(dir.string(), 32);
    CHECK(stored_entries(dir).size() == 32);
    CHECK(fs::exists(dir / "yaml-1.bin"));
    CHECK(fs::exists(dir / "vocab-1.bin"));
    fs::remove_all(dir);
}
