// A log alone that shows the DeepSpeed engine under LLaMA-Factory (its config print, ZeRO-3 frames):
// ZeRO advice goes to the job's DeepSpeed JSON, and states already sharded by ZeRO-3 are not
// "sharded further" (end to end; skips when the binary is absent).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/diagnose_text.h"

namespace ds_seen {

const char* const k_oom =
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.73 GiB. GPU 3 has a total capacity of "
    "79.15 GiB of which 2.91 GiB is free. Process 12345 has 76.23 GiB memory in use. Of the allocated memory 72.10 GiB "
    "is allocated by PyTorch, and 2.61 GiB is reserved by PyTorch but unallocated.\n";
const char* const k_frames =
    "[INFO|2025-01-10 12:00:05] llamafactory.model.adapter:143 >> Fine-tuning method: Full\n"
    "[INFO|2025-01-10 12:00:06] llamafactory.model.loader:143 >> all params: 8,030,261,248\n"
    "{'loss': 1.4521, 'grad_norm': 0.512, 'learning_rate': 9.9e-05, 'epoch': 0.01}\n"
    "[rank3]: Traceback (most recent call last):\n"
    "[rank3]:   File \"/workspace/train.py\", line 120, in <module>\n"
    "[rank3]:     trainer.train()\n"
    "[rank3]:   File \"/usr/local/lib/python3.10/dist-packages/transformers/trainer.py\", line 2427, in "
    "_inner_training_loop\n"
    "[rank3]:     self.optimizer.step()\n";

nlohmann::json diagnose(const std::string& text) { return oomdx::test::diagnose_log_text(text, "--explain"); }

const nlohmann::json* rec(const nlohmann::json& j, const std::string& action) {
    for (const auto& r : j["recommendations"])
        if (r["action"] == action) return &r;
    return nullptr;
}

std::string fact_value(const nlohmann::json& j, const std::string& name) {
    for (const auto& f : j["explain"]["facts"])
        if (f["name"] == name) return f["value"].dump();
    return "";
}

}  // namespace ds_seen

TEST_CASE("ZeRO-3 under LLaMA-Factory seen in the log: offload in the DeepSpeed JSON, more devices, no FSDP") {
    const nlohmann::json j = ds_seen::diagnose(
        std::string("[2024-03-10 12:00:01,000] [INFO] [config.py:1000:print] DeepSpeedEngine configuration:\n") +
        ds_seen::k_frames +
        "[rank3]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py\", line 2107, in "
        "step\n"
        "[rank3]:     self._optimizer_step(sub_group_id)\n" +
        ds_seen::k_oom);
    CHECK(ds_seen::fact_value(j, "job.framework") == "\"llama_factory\"");
    CHECK(ds_seen::fact_value(j, "job.runs_deepspeed") == "true");
    CHECK(ds_seen::fact_value(j, "parallelism.zero_stage") == "3");
    CHECK(ds_seen::rec(j, "shard_optimizer_fsdp_zero") == nullptr);
    const nlohmann::json* off = ds_seen::rec(j, "offload_or_swap_optimizer");
    REQUIRE(off != nullptr);
    const std::string rendered = off->at("rendered").dump();
    CHECK(rendered.find("DeepSpeed config") != std::string::npos);
    CHECK(rendered.find("offload_optimizer") != std::string::npos);
    CHECK(ds_seen::rec(j, "more_devices") != nullptr);
}

TEST_CASE("the same OOM without DeepSpeed in the log: the framework's own sharding (FSDP), no DeepSpeed JSON") {
    const nlohmann::json j = ds_seen::diagnose(std::string(ds_seen::k_frames) + ds_seen::k_oom);
    CHECK(ds_seen::fact_value(j, "job.runs_deepspeed").empty());
    const nlohmann::json* shard = ds_seen::rec(j, "shard_optimizer_fsdp_zero");
    REQUIRE(shard != nullptr);
    CHECK(shard->at("rendered").dump().find("fsdp") != std::string::npos);
    CHECK(ds_seen::rec(j, "more_devices") == nullptr);
}
