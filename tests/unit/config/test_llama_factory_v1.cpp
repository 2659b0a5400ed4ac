// LLaMA-Factory v1 configs: an adapter file alone (knowledge/frameworks/llama_factory_v1.yaml).
// Detection against v0 LLaMA-Factory and the other YAML adapters, facts with provenance and defaults.
#include <doctest/doctest.h>

#include <string>

#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_config.h"

using namespace oomdx;

namespace lfv1_test {

const std::string fixtures = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

struct read_config {
    job_config job;
    fact_store store{&vocabulary::shipped()};
};

read_config read(const std::string& rel) {
    read_config r;
    r.job = parse_job_config(fixtures + rel);
    emit_facts(r.job, r.store);
    return r;
}

bool from_default(const fact_store& s, const std::string& key) {
    const fact* f = s.get(key);
    return f && f->prov.from_default();
}

}  // namespace lfv1_test

using namespace lfv1_test;

TEST_CASE("LLaMA-Factory v1: QLoRA under FSDP2, plugin maps read as nested keys") {
    auto r = read("llama_factory_v1/qlora_fsdp2.yaml");
    CHECK(r.job.framework == "llama_factory_v1");
    CHECK(r.job.unknown_keys.empty());
    CHECK(r.store.string("job.model_name") == "Qwen/Qwen3-8B");
    CHECK(r.store.string("training.finetuning_type") == "lora");
    CHECK(r.store.integer("training.lora_rank") == 32);
    CHECK(r.store.string("training.lora_target") == "q_proj,k_proj,v_proj,o_proj");
    CHECK(r.store.integer("training.quantization_bit") == 4);
    CHECK(r.store.string("training.quantization_method") == "bitsandbytes");
    CHECK(r.store.integer("training.local_batch_size") == 2);
    CHECK(r.store.integer("training.global_batch_size") == 32);
    CHECK(r.store.integer("training.seq_len") == 4096);
    CHECK(r.store.string("activation_checkpoint.mode") == "none");
    CHECK(r.store.string("model.attn_impl") == "flash");
    CHECK(r.store.integer("parallelism.zero_stage") == 3);
    CHECK(r.store.integer("parallelism.fsdp_version") == 2);
    CHECK(r.store.string("parallelism.offload_params") == "none");
    // v1's own defaults, not v0's: bf16 on, LoRA dropout 0.05, bnb nf4 with double quantization
    CHECK(r.store.string("training.mixed_precision_param") == "bfloat16");
    CHECK(from_default(r.store, "training.mixed_precision_param"));
    CHECK(r.store.number("training.lora_dropout").value_or(0) == doctest::Approx(0.05));
    CHECK(r.store.string("training.quantization_type") == "nf4");
    CHECK(r.store.boolean("training.double_quantization") == true);
    // the line a fact came from
    const fact* rank = r.store.get("training.lora_rank");
    REQUIRE(rank != nullptr);
    CHECK(rank->prov.line == 10);
}

TEST_CASE("LLaMA-Factory v1: no peft_config is full tuning, a DeepSpeed JSON not found takes the shipped settings") {
    auto r = read("llama_factory_v1/full_deepspeed.yaml");
    CHECK(r.job.framework == "llama_factory_v1");
    CHECK(r.job.unknown_keys.empty());
    CHECK(r.store.string("training.finetuning_type") == "full");
    CHECK(from_default(r.store, "training.finetuning_type"));
    CHECK(r.store.string("activation_checkpoint.mode") == "full");  // enable_activation_checkpointing defaults to true
    CHECK(from_default(r.store, "activation_checkpoint.mode"));
    CHECK(r.store.string("model.attn_impl") == "sdpa");
    CHECK(r.store.string("job.deepspeed_config") == "examples/deepspeed/ds_z2_offload_config.json");
    CHECK(r.store.integer("parallelism.zero_stage") == 2);
    CHECK(r.store.string("optimizer.offload") == "cpu");
    CHECK_FALSE(r.store.has("parallelism.fsdp_version"));
}

TEST_CASE("LLaMA-Factory v1 detection leaves v0 and the other YAML adapters alone") {
    // v0 LLaMA-Factory shares cutoff_len and flash_attn with v1: still v0
    CHECK(read("llama_factory/llama3_lora_sft.yaml").job.framework == "llama_factory");
    CHECK(read("llama_factory/qwen3_full_sft_ds3.yaml").job.framework == "llama_factory");
    // Axolotl's micro_batch_size, torchtune's enable_activation_checkpointing and `model:` map
    CHECK(read("axolotl/minimal.yml").job.framework == "axolotl");
    CHECK(read("torchtune/minimal.yaml").job.framework == "torchtune");
    // a NeMo file with a `model:` map and micro_batch_size has no v1 signature key (detect_required)
    CHECK(read("sixth/megatron_gpt_config.yaml").job.framework != "llama_factory_v1");
}
