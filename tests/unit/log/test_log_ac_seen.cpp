// A traceback that runs through a checkpoint function shows activation checkpointing is on: the
// diagnosis then does not tell the user to turn it on (end to end; skips when the binary is absent).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/diagnose_text.h"

namespace ac_seen {

const char* const k_head =
    "[INFO|trainer.py:2131] 2024-05-01 10:00:01,234 >>   Instantaneous batch size per device = 8\n"
    "  0%|          | 17/4875 [02:35<12:20:11,  9.14s/it]Traceback (most recent call last):\n"
    "  File \"/home/user/train.py\", line 23, in <module>\n";
const char* const k_oom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of "
    "23.65 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.52 GiB memory in "
    "use. Of the allocated memory 20.87 GiB is allocated by PyTorch, and 1.19 GiB is reserved by PyTorch but "
    "unallocated.\n";

struct outcome {
    std::vector<std::string> actions;
    std::string ac_mode, ac_source;
};

outcome diagnose(const std::string& frames) {
    const auto j = oomdx::test::diagnose_log_text(std::string(k_head) + frames + k_oom, "--explain");
    outcome o;
    for (const auto& rec : j["recommendations"]) o.actions.push_back(rec["action"].get<std::string>());
    const auto& facts = j["explain"]["facts"];
    for (const auto& f : facts)
        if (f["name"] == "activation_checkpoint.mode") {
            o.ac_mode = f["value"].get<std::string>();
            o.ac_source = f["source"].get<std::string>();
        }
    return o;
}

bool has(const outcome& o, const std::string& a) {
    for (const auto& x : o.actions)
        if (x == a) return true;
    return false;
}

}  // namespace ac_seen

TEST_CASE("a checkpoint frame in the traceback: checkpointing is not recommended again") {
    const ac_seen::outcome on = ac_seen::diagnose(
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py\", line 880, in "
        "forward\n"
        "    layer_outputs = self._gradient_checkpointing_func(\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py\", line 264, in forward\n"
        "    outputs = run_function(*args)\n");
    CHECK(on.ac_mode == "full");
    CHECK(on.ac_source.find(".log:") != std::string::npos);
    CHECK_FALSE(ac_seen::has(on, "enable_full_ac"));
    CHECK_FALSE(ac_seen::has(on, "enable_selective_ac"));
    CHECK(ac_seen::has(on, "reduce_micro_batch"));

    const ac_seen::outcome off = ac_seen::diagnose(
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py\", line 880, in "
        "forward\n"
        "    layer_outputs = decoder_layer(\n");
    CHECK(off.ac_mode.empty());
    CHECK(ac_seen::has(off, "enable_full_ac"));
}
