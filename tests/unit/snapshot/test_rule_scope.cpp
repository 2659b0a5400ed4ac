// `oomdx snapshot` runs only the evidence rules that can fire on a snapshot's facts
// (engine/rules/rule_scope.h, snap::fact_prefixes). These tests fail when a rule that a
// snapshot's facts can fire is left out, or when a snapshot producer emits a fact outside
// the namespaces the subset is decided from.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/report/snapshot_verdicts.h"
#include "engine/rules/expression.h"
#include "engine/rules/rule_scope.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/fact_prefixes.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "parsers/snapshot/snapshot_loader.h"

using namespace oomdx;
using namespace oomdx::snap;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<rule_def> rule(const std::string& id, const std::string& cond, const std::string& asserts = "") {
    name_resolver res;
    res.macro = [](const std::string&) -> const expr_node* { return nullptr; };
    res.list = [](const std::string&) -> const std::vector<value>* { return nullptr; };
    res.vocab = &vocabulary::shipped();
    parsed_expr e = parse_expression(cond, res);
    REQUIRE(e.ok());
    auto r = std::make_unique<rule_def>();
    r->id = id;
    r->step = "evidence";
    r->condition = std::move(e.root);
    r->facts = e.facts;
    if (!asserts.empty()) r->asserts.push_back({asserts, action_value{}});
    return r;
}

std::vector<std::string> ids(const rule_set& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs.rules) out.push_back(r->id);
    return out;
}

bool in_namespaces(const std::string& name) {
    for (const auto& p : fact_prefixes())
        if (name.starts_with(p)) return true;
    return false;
}

// The facts are in the snapshot's namespaces, and the whole evidence set and the snapshot's
// subset fire the same rules and derive the same facts from them.
void same_verdicts(const fact_store& facts) {
    for (const fact* f : facts.current()) {
        CAPTURE(f->name);
        CHECK(in_namespaces(f->name));
    }
    fact_store all = facts, some = facts;
    const inference_result a = run_evidence(shipped_evidence_rules(), all);
    const inference_result b = run_evidence(shipped_snapshot_rules(), some);
    std::vector<std::string> fa, fb;
    for (const auto& f : a.firings) fa.push_back(f.rule_id);
    for (const auto& f : b.firings) fb.push_back(f.rule_id);
    CHECK(fa == fb);
    std::vector<std::string> ha, hb;
    for (const auto& f : all.history()) ha.push_back(f.name + "=" + f.val.to_string());
    for (const auto& f : some.history()) hb.push_back(f.name + "=" + f.val.to_string());
    CHECK(ha == hb);
    CHECK(a.findings.size() == b.findings.size());
}

const category_rules& cats() {
    static const category_rules r = category_rules::shipped();
    return r;
}

void check_files(const std::vector<std::string>& files) {
    analysis_options o;
    o.rules = &cats();
    auto all = analyze_files(files, o, 2);
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(files[i]);
        for (std::size_t d = 0; d < all[i].devices.size(); ++d) {
            fact_store f;
            emit_device_facts(all[i], d, f);
            same_verdicts(f);
        }
        fact_store whole;
        emit_facts(all[i], whole);
        same_verdicts(whole);
        if (i > 0) {
            fact_store f;
            emit_facts(diff(all[i - 1], all[i]), f);
            same_verdicts(f);
        }
    }
    if (all.size() >= 2) {
        fact_store t, r, batch;
        emit_facts(trend(all), t);
        same_verdicts(t);
        emit_facts(compare_ranks(all), r);
        same_verdicts(r);
        emit_facts(all, batch, true);
        same_verdicts(batch);
    }
    for (const auto& file : files) {
        CAPTURE(file);
        fact_store f;
        try {
            emit_file_facts(load_snapshot(file), f);
        } catch (const std::exception&) {
            continue;
        }
        same_verdicts(f);
    }
}

}  // namespace

TEST_CASE("rule scope: a rule is left out only when the scoped facts cannot make it fire") {
    rule_set rs;
    rs.rules.push_back(rule("reads_snapshot", "snapshot.count > 0"));
    rs.rules.push_back(rule("reads_other", "oom.requested_bytes > 1"));
    rs.rules.push_back(rule("true_when_absent", "not exists(oom.requested_bytes)"));
    rs.rules.push_back(rule("coalesced", "coalesce(oom.requested_bytes, 0) == 0"));
    rs.rules.push_back(rule("unknown_when_absent", "not (oom.requested_bytes > 1)"));
    // Asserted by a rule that can fire (later in the list): then read by one before it.
    rs.rules.push_back(rule("reads_derived", "oom.free_bytes > 1"));
    rs.rules.push_back(rule("derives", "snapshot.count > 1", "oom.free_bytes"));
    CHECK(keep_rules_for_facts(rs, {"snapshot."}) == 2);
    CHECK(ids(rs) == std::vector<std::string>{"reads_snapshot", "true_when_absent", "coalesced", "reads_derived", "derives"});
}

TEST_CASE("rule scope: the snapshot's evidence rules decide what the whole evidence set decides") {
    CHECK(shipped_snapshot_rules().rules.size() < shipped_evidence_rules().rules.size());
    CHECK(shipped_snapshot_rules().rules.size() > 0);
    std::vector<std::string> files;
    const fs::path fixtures = fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots";
    for (const auto& e : fs::directory_iterator(fixtures))
        if (e.path().extension() == ".pickle" || e.path().filename() == "json_shape.json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 5);
    check_files(files);
}

TEST_CASE("rule scope: the same on the corpus snapshots") {
    const fs::path dir = fs::path(OOMDX_SHARED_DIR) / "corpus" / "snapshots";
    if (!fs::exists(dir / "manifest.json")) {
        MESSAGE("skipped: no shared corpus");
        return;
    }
    std::ifstream in(dir / "manifest.json");
    const nlohmann::json manifest = nlohmann::json::parse(in);
    std::vector<std::string> files;
    for (const auto& m : manifest) files.push_back((dir / m["file"].get<std::string>()).string());
    check_files(files);
}

TEST_CASE("rule scope: a conjunct on facts that stay absent decides when it is not true") {
    // id, condition, kept
    const std::vector<std::tuple<std::string, std::string, bool>> cases = {
        {"and_other", "snapshot.count > 0 and oom.requested_bytes > 1", false},
        {"nested_and", "(snapshot.count > 0 and snapshot.count < 9) and exists(oom.requested_bytes)", false},
        {"and_true_when_absent", "snapshot.count > 0 and not exists(oom.requested_bytes)", true},
        {"or_other", "snapshot.count > 0 or oom.requested_bytes > 1", true},
        {"mixed_conjunct", "snapshot.count > 0 and (snapshot.count > 5 or oom.requested_bytes > 1)", true},
        // Read by a conjunct, asserted by a kept rule (below): kept (the fixpoint).
        {"and_derived", "snapshot.count > 0 and oom.free_bytes > 1", true},
    };
    rule_set rs;
    std::vector<std::string> want;
    for (const auto& [id, cond, kept] : cases) {
        rs.rules.push_back(rule(id, cond));
        if (kept) want.push_back(id);
    }
    rs.rules.push_back(rule("derives", "snapshot.count > 1", "oom.free_bytes"));
    want.push_back("derives");
    CHECK(keep_rules_for_facts(rs, {"snapshot."}) == cases.size() + 1 - want.size());
    CHECK(ids(rs) == want);
}
