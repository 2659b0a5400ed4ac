// A parameter count the job printed (settings.yaml set_trainable_params_count / set_total_params_count): the log
// parser keeps the integer it read beside the setting's value in billions, and whether the line printed every digit
// ("6,738,415,616") or a rounded form ("7.2 B", "20430.40M"), so the model-from-count match reads no line again.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "parsers/log/log_analyzer.h"
#include "parsers/log/log_summary.h"
#include "parsers/log/param_count.h"

using namespace oomdx;

namespace {

const log_analysis::setting* setting(const log_analysis& a, const std::string& fact) {
    const log_analysis::setting* v = nullptr;
    for (const auto& s : a.settings)
        if (s.fact == fact) v = &s;
    return v;
}

}  // namespace

TEST_CASE("every digit printed: the exact count, with the line") {
    const log_analysis a = analyze_log_text(
        "[INFO|trainer.py:2137] >>   Number of trainable parameters = 6,738,415,616\n", "t.log", {});
    const auto* s = setting(a, "job.trainable_params_named");
    REQUIRE(s);
    CHECK(s->value == "6.738");
    REQUIRE(s->count);
    CHECK(s->count->n == 6738415616);
    CHECK(s->count->exact());
    CHECK(s->at.line == 1);
}

TEST_CASE("PEFT's line: the adapters and the total, each exact") {
    const log_analysis a =
        analyze_log_text("trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622\n", "p.log", {});
    const auto* tr = setting(a, "job.trainable_params_named");
    const auto* t = setting(a, "job.model_params_named");
    REQUIRE(tr);
    REQUIRE(t);
    CHECK(tr->count->n == 4194304);
    CHECK(t->count->n == 6742609920);
    CHECK(t->count->exact());
}

TEST_CASE("a rounded form: the count it states and its significant digits") {
    const log_analysis b =
        analyze_log_text("[INFO] Number of trainable parameters: 20430.40M\n7.2 B     Total params\n", "l.log", {});
    const auto* tr = setting(b, "job.trainable_params_named");
    const auto* t = setting(b, "job.model_params_named");
    REQUIRE(tr);
    REQUIRE(t);
    CHECK(tr->count->n == 20430400000);
    CHECK(tr->count->rounded_digits == 7);
    CHECK(t->count->n == 7200000000);
    CHECK(t->count->rounded_digits == 2);
    CHECK_FALSE(t->count->exact());
}

TEST_CASE("a size in words is a setting without a count") {
    const log_analysis a = analyze_log_text("Full fine-tuning Llama2-7B on one A100 runs out of memory\n", "w.log", {});
    const auto* s = setting(a, "job.model_params_named");
    REQUIRE(s);
    CHECK(s->value == "7");
    CHECK_FALSE(s->count);
}

TEST_CASE("read_param_count: digits, suffixes, refusals") {
    CHECK(read_param_count("6,738,415,616")->exact());
    CHECK(read_param_count("217")->n == 217);
    CHECK(read_param_count("6,738M")->n == 6738000000);
    CHECK(read_param_count("6,738M")->rounded_digits == 4);
    CHECK(read_param_count("2.5 K")->n == 2500);
    CHECK(read_param_count("0.5 B")->rounded_digits == 1);
    CHECK_FALSE(read_param_count("0"));
    CHECK_FALSE(read_param_count("104,85,7600"));
    CHECK_FALSE(read_param_count("200 T"));  // past 100 T
    CHECK_FALSE(read_param_count("1.2.3 M"));
    CHECK(count_in_billions(*read_param_count("20430.40M")) == "20.43");
}

TEST_CASE("the count survives a summary (oomdx log --format json, read back)") {
    const log_analysis a = analyze_log_text(
        "Full fine-tuning Llama2-7B\n[INFO] Number of trainable parameters: 6,738M\ntrainable params: 4,194,304 || "
        "all params: 6,742,609,920 || trainable%: 0.0622\n",
        "s.log", {});
    const nlohmann::json j = to_json(a);
    bool total = false;
    for (const auto& x : j["settings"])
        if (x["fact"] == "job.model_params_named") {
            total = true;
            CHECK(x["count"] == 6742609920);
            CHECK(x["count_rounded_digits"] == 0);
        }
    CHECK(total);
    const log_analysis b = analysis_of_log_summary(j, "s.json");
    REQUIRE(setting(b, "job.model_params_named"));
    REQUIRE(setting(b, "job.model_params_named")->count);
    CHECK(setting(b, "job.model_params_named")->count->n == 6742609920);
    REQUIRE(setting(b, "job.trainable_params_named"));
    REQUIRE(setting(b, "job.trainable_params_named")->count);
    CHECK(setting(b, "job.trainable_params_named")->count->n == 4194304);
}

TEST_CASE("a summary's count that is no parameter count: an error naming the key") {
    const log_analysis a =
        analyze_log_text("[INFO|trainer.py:2137] >>   Number of trainable parameters = 6,738,415,616\n", "t.log", {});
    nlohmann::json j = to_json(a);
    for (auto& x : j["settings"]) x["count"] = -3;
    CHECK_THROWS_WITH(analysis_of_log_summary(j, "bad.json"), doctest::Contains("'count'"));
    for (auto& x : j["settings"]) x["count"] = "6738415616";
    CHECK_THROWS_WITH(analysis_of_log_summary(j, "bad.json"), doctest::Contains("'count'"));
}
