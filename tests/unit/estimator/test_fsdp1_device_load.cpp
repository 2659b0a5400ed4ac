// Round est56: FSDP1 wrapping a model that already sits whole on each GPU (from_pretrained(device_map=rank),
// then FullyShardedDataParallel). The whole model's blocks, the layer shards FSDP clones and the root's flat
// copy are reserved before the first step; the live peak of training is unchanged.
#include <doctest/doctest.h>

#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// Llama 3 8B LoRA r 8 on q, v in bf16, a PEFT + transformers loop, FSDP FULL_SHARD over two GPUs, 2 x 512, no GC
estimate_result fsdp_device_load_job(bool device_model, int fsdp_version) {
    fact_store f;
    using test_util::emit;
    test_util::emit_llama8b(f);
    test_util::emit_framework(f, "pytorch");
    emit(f, "framework.hf_model", true);
    emit(f, "job.world_size", std::int64_t(2));
    emit(f, "parallelism.data_parallel_shard_degree", std::int64_t(2));
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    emit(f, "parallelism.fsdp_version", std::int64_t(fsdp_version));
    emit(f, "training.finetuning_type", "lora");
    emit(f, "training.lora_rank", std::int64_t(8));
    emit(f, "training.lora_target", "q_proj,v_proj");
    emit(f, "training.local_batch_size", std::int64_t(2));
    emit(f, "training.seq_len", std::int64_t(512));
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "training.load_dtype", "bfloat16");
    emit(f, "training.pure_bf16", true);
    emit(f, "activation_checkpoint.mode", "none");
    if (device_model) emit(f, "parallelism.fsdp_wraps_device_model", true);
    return estimate(from_facts(f));
}

}  // namespace

TEST_CASE("est56: FSDP1 over a model already on the device reserves the whole model, the layer shards and the root's flat copy") {
    const estimate_result host = fsdp_device_load_job(false, 1);
    const estimate_result device = fsdp_device_load_job(true, 1);
    // Llama 3 8B in bf16: 8.03 B parameters; a decoder layer 218.1 M (436.2 MB); embedding + head + final norm 1.05 G
    const double whole = 8030261248.0 * 2.0;
    const double layer = (4096.0 * (4096 + 1024 + 1024 + 4096) + 3.0 * 4096 * 14336 + 2 * 4096) * 2.0;
    const double root = (2.0 * 128256 * 4096 + 4096) * 2.0;
    // every layer's shard (half a layer) is larger than the layer's largest weight (an MLP matrix), so each is a new block
    const double before_first_step = whole + 32.0 * layer / 2.0 + root;
    CHECK(double(device.reserved_peak_bytes) >= before_first_step);
    // loaded on the host, FSDP moves one unit at a time to the device: nothing of the kind is cached
    CHECK(double(host.reserved_peak_bytes) < before_first_step);
    // the live tensors of a training step do not change: the load peak (the whole model beside one unit) is below them
    CHECK(device.peak_bytes == host.peak_bytes);
    CHECK(double(device.peak_bytes) > whole + layer * 1.5);
}

TEST_CASE("est56: the whole-model load applies to FSDP1 only") {
    CHECK(fsdp_device_load_job(true, 2).reserved_peak_bytes == fsdp_device_load_job(false, 2).reserved_peak_bytes);
}
