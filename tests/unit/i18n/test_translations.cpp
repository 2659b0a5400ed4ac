// Message templates, translation tables, and the Chinese rendering of rule texts.
#include <doctest/doctest.h>

#include "engine/core/message.h"
#include "engine/core/translations.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/inference.h"
#include "engine/rules/rule_loader.h"
#include "engine/rules/rule_translations.h"
#include "engine/rules/text_template.h"

using namespace oomdx;

TEST_CASE("message templates substitute and match named arguments") {
    CHECK(format_message("requested {a}, free {b}", {{"a", "1 GiB"}, {"b", "2 GiB"}}) == "requested 1 GiB, free 2 GiB");
    CHECK(format_message("{{literal}} {missing}", {}) == "{literal} {missing}");
    CHECK(message_placeholders("{x} and {y} and {x}") == std::vector<std::string>{"x", "y", "x"});
    auto m = match_message("{n} blocks ({bytes}) at {site}", "3 blocks (1.00 GiB) at a.py:1 (x)");
    REQUIRE(m);
    CHECK((*m)[0].second == "3");
    CHECK((*m)[1].second == "1.00 GiB");
    CHECK((*m)[2].second == "a.py:1 (x)");
    CHECK_FALSE(match_message("{n} blocks", "blocks"));
    CHECK_FALSE(match_message("fixed text", "fixed text and more"));
    // A closing literal that also occurs inside an argument.
    auto p = match_message("{name} = {value} ({why})", "a.b = true (with TP (default))");
    REQUIRE(p);
    CHECK((*p)[2].second == "with TP (default)");
}

TEST_CASE("a translation is used only while its English copy is current") {
    translation_table t;
    t.add("k", {"The model fits.", "模型放得下。", "f", 1});
    CHECK(t.pick("k", "The model fits.") == "模型放得下。");
    CHECK(t.pick("k", "The model   fits.\n") == "模型放得下。");  // folded YAML: white space aside
    CHECK(t.pick("k", "The model does not fit.") == "The model does not fit.");  // stale
    CHECK(t.pick("missing", "x") == "x");
    CHECK(same_text(" a  b\nc ", "a b c"));
    CHECK_FALSE(same_text("a b", "a c"));
}

TEST_CASE("producer sentences are translated by their templates, terms included") {
    translation_table t;
    t.add("term.g", {"gradients", "梯度", "f", 1});
    t.add("x.grads", {"{n} params ({what} at {phase})", "{n} 个参数（{phase} 的{what}）", "f", 2});
    t.add("x.wrap", {"device {d}: {w}", "设备 {d}：{w}", "f", 3});
    t.add("x.inner", {"{n} segment(s) broken", "{n} 个内存段损坏", "f", 4});
    CHECK(t.produced("x.", "2B params (gradients at backward)") == "2B 个参数（backward 的梯度）");
    CHECK(t.produced("x.", "device 0: 3 segment(s) broken") == "设备 0：3 个内存段损坏");
    CHECK(t.produced("x.", "no template for this") == "no template for this");
    CHECK_FALSE(t.translate_produced("x.", "no template for this"));
}

TEST_CASE("the shipped knowledge translations load, and phrases render in Chinese") {
    const translation_table& zh = translation_table::shipped("zh");
    CHECK_FALSE(zh.empty());
    CHECK(translation_table::shipped("en").empty());
    const fact_decl* d = vocabulary::shipped().find("oom.source");
    REQUIRE(d);
    fact_store facts(&vocabulary::shipped());
    provenance p;
    p.producer = "test";
    facts.emit("oom.source", value("workspace"), p);
    CHECK(render_template("in {oom.source|phrase}", facts) == "in the NPU workspace allocator");
    CHECK(render_template("在{oom.source|phrase}", facts, nullptr, &zh) == "在 NPU 工作空间分配器");  // Chinese beside Latin: a space
    CHECK(render_template("{oom.step}", facts, nullptr, &zh) == "未知");
}

TEST_CASE("cases69: a list fact under |list renders its items joined, without quotes or brackets") {
    // open-r1#506: step1_config_file_missing wrote `The config names ["recipes/accelerate_configs/zero3.yaml"]`.
    const translation_table& zh = translation_table::shipped("zh");
    fact_store facts(&vocabulary::shipped());
    provenance p;
    p.producer = "test";
    facts.emit("job.missing_files", value(value::list_t{value("a/zero3.yaml"), value("ds.json")}), p);
    CHECK(render_template("names {job.missing_files|list}.", facts) == "names a/zero3.yaml, ds.json.");
    CHECK(render_template("引用了 {job.missing_files|list}。", facts, nullptr, &zh) == "引用了 a/zero3.yaml，ds.json。");
}

TEST_CASE("template placeholders compare facts and expressions, not the words of string literals") {
    CHECK(template_placeholders("a {x|bytes} b {= y + 1 | pct}") == std::vector<std::string>{"x|bytes", "=y+1|pct"});
    CHECK(template_placeholders("{= if(a, ' to ' + str(b), '')}") == template_placeholders("{= if(a, '至 ' + str(b), '')}"));
    bool ok = true;
    template_placeholders("unclosed {x", &ok);
    CHECK_FALSE(ok);
}

TEST_CASE("rev40: a translated code line reads the macros its English expression reads, not their CUDA value") {
    const std::string en = "= 'Call ' + empty_cache_call + ' before saving' + if(on_npu, '', ' (on Ascend)') + ' at ' + str(int(x.bytes / 1 MiB))";
    const rule_text t{"rule.r.recommend.0.set.code.empty_cache", en, text_kind::expression, {"pack.yaml", 1, 1}};
    auto lint = [&](const std::string& zh) {
        translation_table table;
        table.add(t.key, {en, zh, "zh.yaml", 1});
        std::vector<rule_diagnostic> out;
        check_translation(t, table, "zh", "zh.yaml", out);
        return out.size();
    };
    // the macros' names in template expressions, the fact as a placeholder: the same names as the English
    CHECK(lint("保存前调用 {= empty_cache_call}{= if(on_npu, '', '（昇腾）')}，{= str(int(x.bytes / 1 MiB))}") == 0);
    // the CUDA value written out (what the zh of cases71's lines did): the macro is not read, so it is flagged
    CHECK(lint("保存前调用 torch.cuda.empty_cache()（torch.npu.empty_cache()），{x.bytes}") == 1);
    // a macro the English does not read
    CHECK(lint("保存前调用 {= empty_cache_call}{= if(on_npu, '', '（昇腾）')}{= launch_blocking_var}，{x.bytes}") == 1);
}

TEST_CASE("the shipped rules render their findings in Chinese, English when asked") {
    const rule_set& rs = shipped_rules();
    REQUIRE(rs.i18n.empty());  // read on first use of zh
    REQUIRE(rs.translations("zh"));
    REQUIRE_FALSE(rs.translations("zh")->empty());
    auto run = [&](const std::string& lang) {
        fact_store facts(&vocabulary::shipped());
        provenance p;
        p.producer = "test";
        facts.emit("job.mode", value("diagnose"), p);
        facts.emit("job.has_log", value(true), p);
        facts.emit("oom.source", value("caching_allocator"), p);
        facts.emit("oom.requested_bytes", value(std::int64_t(2) << 30), p);
        inference_options o;
        o.lang = lang;
        return run_inference(rs, facts, o);
    };
    const inference_result en = run("en"), zh = run("zh");
    auto text = [](const inference_result& r, const std::string& id) {
        for (const auto& f : r.findings)
            if (f.rule_id == id) return f.text;
        return std::string();
    };
    CHECK(text(en, "step0_caching_allocator_oom") == "The caching allocator could not satisfy a request of 2.00 GiB.");
    CHECK(text(zh, "step0_caching_allocator_oom") == "缓存分配器无法满足 2.00 GiB 的申请。");
    REQUIRE(zh.route.size() == en.route.size());
    for (const auto& r : zh.route) CHECK(r.why.find("Step 0: ") == std::string::npos);
}
