// mmengine-style Python config modules (XTuner): read as data, what is not read listed, hostile
// inputs a one-line error naming file:line, and overrides rendered as the module's own lines.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/job_config.h"
#include "parsers/config/py_module.h"

using namespace oomdx;

namespace {

py_module pm_read(const std::string& text) { return read_py_module(py_source(text, "cfg.py")); }

const raw_entry* pm_entry(const py_module& m, const std::string& key) {
    for (const auto& e : m.entries)
        if (e.key == key) return &e;
    return nullptr;
}

std::string pm_error(const std::string& text) {
    try {
        (void)pm_read(text);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("an mmengine module: assignments, dict() as mappings, names resolved, arithmetic folded") {
    const py_module m = pm_read(
        "import torch\n"
        "from peft import LoraConfig\n"
        "max_length = 2048\n"
        "batch_size = 1  # per device\n"
        "half = max_length // 2 + 1\n"
        "ratio = 0.5 * 4\n"
        "betas = (0.9, 0.999)\n"
        "model = dict(type=SupervisedFinetune, lora=dict(type=LoraConfig, r=64), dtype=torch.float16)\n"
        "loader = dict(batch_size=batch_size, opts={'a': max_length})\n"
        "workers = int(batch_size * 2)\n"
        "hooks = [x for x in range(3)]\n"
        "if batch_size:\n"
        "    hooks += [1]\n"
        "batch_size = 2\n");
    REQUIRE(pm_entry(m, "max_length"));
    CHECK(pm_entry(m, "max_length")->val == value(std::int64_t{2048}));
    CHECK(pm_entry(m, "half")->val == value(std::int64_t{1025}));
    CHECK(pm_entry(m, "ratio")->val == value(2.0));
    CHECK(pm_entry(m, "betas")->val.is_list());
    CHECK(pm_entry(m, "model")->container);
    CHECK(pm_entry(m, "model.type")->val == value("SupervisedFinetune"));  // a class: kept as its name
    CHECK(pm_entry(m, "model.lora.type")->val == value("LoraConfig"));
    CHECK(pm_entry(m, "model.lora.r")->val == value(std::int64_t{64}));
    CHECK(pm_entry(m, "model.dtype")->val == value("torch.float16"));
    // a reference is the earlier assignment's value, where it was written (line 4), not the later rebinding
    REQUIRE(pm_entry(m, "loader.batch_size"));
    CHECK(pm_entry(m, "loader.batch_size")->val == value(std::int64_t{1}));
    CHECK(pm_entry(m, "loader.batch_size")->line == 4);
    CHECK(pm_entry(m, "loader.opts.a")->val == value(std::int64_t{2048}));
    // a later assignment replaces the earlier one
    CHECK(pm_entry(m, "batch_size")->val == value(std::int64_t{2}));
    CHECK(pm_entry(m, "batch_size")->line == 14);
    // calls, comprehensions, imports and blocks are not run: listed with file:line
    CHECK_FALSE(pm_entry(m, "workers")->literal);
    CHECK_FALSE(pm_entry(m, "hooks")->literal);
    const std::vector<std::string> want{"import torch (cfg.py:1)", "from peft import LoraConfig (cfg.py:2)",
                                        "workers = int(batch_size * 2) (cfg.py:10)",
                                        "hooks = [x for x in range(3)] (cfg.py:11)", "if batch_size: (cfg.py:12)"};
    CHECK(m.skipped == want);
}

TEST_CASE("an mmengine module: hostile inputs are one-line errors naming file:line") {
    CHECK(pm_error("batch_size = 1\nmodel = dict(\n    type=X,\n    r=64\n") ==
          "cfg.py:2: bracket opened here is never closed");
    std::string deep = "x = ";
    for (int i = 0; i < 10000; ++i) deep += "dict(a=";
    deep += "1";
    for (int i = 0; i < 10000; ++i) deep += ")";
    const std::string err = pm_error(deep + "\n");
    CHECK(err.rfind("cfg.py:1: ", 0) == 0);
    CHECK(err.find("nested too deeply") != std::string::npos);
    CHECK(pm_error("name = 'unterminated\n").rfind("cfg.py:1: unterminated string", 0) == 0);
    // arithmetic that would overflow or divide by zero is not folded: listed, never an answer
    const py_module m = pm_read("a = 0\nb = 10 // a\nc = 10 ** 400\n");
    CHECK_FALSE(pm_entry(m, "b")->literal);
    CHECK_FALSE(pm_entry(m, "c")->literal);
}

TEST_CASE("an XTuner config is its adapter's facts; overrides are its assignment lines or --cfg-options") {
    const job_config j = parse_job_config(std::string(OOMDX_TEST_DIR) + "/fixtures/configs/xtuner/qlora_chat_7b.py");
    CHECK(j.framework == "xtuner");
    CHECK(j.format == "module");
    CHECK_FALSE(j.framework_guessed);
    auto val = [&](const char* k) { return j.find(k) ? j.find(k)->val : value(); };
    CHECK(val("training.local_batch_size") == value(std::int64_t{1}));
    CHECK(val("training.gradient_accumulation_steps") == value(std::int64_t{16}));
    CHECK(val("training.seq_len") == value(std::int64_t{2048}));
    CHECK(val("training.packing") == value(true));
    CHECK(val("training.lora_rank") == value(std::int64_t{64}));
    CHECK(val("training.finetuning_type") == value("lora"));
    CHECK(val("training.quantization_bit") == value(std::int64_t{4}));
    CHECK(val("training.mixed_precision_param") == value("float16"));
    CHECK(val("optimizer.name") == value("AdamW"));
    CHECK(val("job.model_name") == value("internlm/internlm-chat-7b"));
    CHECK(j.find("training.local_batch_size")->prov.line == 15);  // the settings line to change
    const auto lines = framework_adapter::get("xtuner").render_lines_as(
        {{"training.local_batch_size", value(std::int64_t{1})}, {"training.lora_rank", value(std::int64_t{16})}}, "module");
    const std::vector<std::string> want{"batch_size = 1", "--cfg-options model.lora.r=16"};
    CHECK(lines == want);
}

TEST_CASE("a module with functions is an mmengine config only with mmengine's own assignments") {
    const py_source registry("STEPS = 1000\ndef a():\n    return 1\ndef b():\n    return 2\n", "r.py");
    CHECK(looks_like_py_module(registry));
    CHECK_FALSE(looks_like_py_module(registry, true));  // a torchtitan registry: name its function
    const py_source mm("def helper():\n    return 1\ndef other():\n    return 2\nmodel = dict(type='X')\n", "m.py");
    CHECK(looks_like_py_module(mm, true));
    CHECK(looks_like_py_module(py_source("_base_ = ['../a.py']\ndef f():\n    return 1\n", "b.py"), true));
}
