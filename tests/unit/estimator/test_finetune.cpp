// Fine-tuning as the frameworks implement it: adapter counts, frozen-weight bytes (bf16, NF4 with
// and without double quantization, LLM.int8), trainable-only gradients and optimizer states, the
// activations a frozen base keeps, freeze tuning, framework defaults. Numbers worked out inline.
#include <doctest/doctest.h>
#include <algorithm>
#include <tuple>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"
#include "engine/estimator/preflight.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

using test_util::llama8b;

// Whether one of the estimate's interval reasons contains `part`.
bool says(const estimate_result& e, std::string_view part) {
    for (const auto& why : e.interval_reasons)
        if (why.find(part) != std::string::npos) return true;
    return false;
}

// A torchtune preflight of `model` on one device with the job's --set lines.
preflight_result torchtune_preflight(const char* model, std::vector<std::string> sets) {
    preflight_request q;
    q.framework = "torchtune";
    q.model = model;
    q.world_size = 1;
    q.sets = std::move(sets);
    return run_preflight(q);
}

estimate_input lora8b(std::int64_t rank, unsigned targets) {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.zero_stage = 0;
    in.ft.kind = finetune_kind::lora;
    in.ft.lora_rank = rank;
    in.ft.targets = targets;
    return in;
}

using test_util::emit;

using test_util::emit_llama8b;

// Llama 3 8B under `framework`, full fine-tuning (or `ftype`), on `world` devices.
fact_store job8b(const char* framework, const char* ftype, std::int64_t world) {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", framework);
    emit(f, "training.finetuning_type", ftype);
    emit(f, "job.world_size", world);
    return f;
}

// A Llama 3 8B LoRA job of an HF-model trainer under FSDP2 over 2 ranks, bf16 mixed precision, 512 tokens, full AC
// (est41 / est70: accelerate's upcast); `date` may be null (undated).
fact_store fsdp2_lora8b(const char* framework, const char* date) {
    fact_store f = job8b(framework, "lora", 2);
    emit(f, "framework.hf_model", true);
    emit(f, "training.load_dtype", "bfloat16");
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "training.seq_len", std::int64_t(512));
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    emit(f, "parallelism.fsdp_version", std::int64_t(2));
    if (date) emit(f, "job.framework_date", date);
    return f;
}

// The estimate's foreach setting and the optimizer step's transient (the step phase less the model states).
std::pair<int, double> foreach_step_transient(const fact_store& f) {
    const estimate_input in = from_facts(f);
    est::breakdown b;
    est::compute(in, b);
    const auto& st = b.stages[0];
    return {in.optimizer_foreach, st.phase_step - st.params - st.grads - st.optimizer - st.master};
}

}  // namespace

TEST_CASE("LoRA adapter parameters per layer") {
    // all linears, r = 16: 16 x [(4096+4096) q + (4096+1024) k + (4096+1024) v + (4096+4096) o
    //                            + 3 x (4096+14336) gate/up/down] = 16 x 81,920
    CHECK(est::adapter_params(lora8b(16, lora_target::all), false) == doctest::Approx(1310720.0));
    // q and v, r = 8 (torchtune llama3_1/8B_lora_single_device): 8 x (8192 + 5120) = 106,496 per
    // layer, 3.41 M for 32 layers
    CHECK(est::adapter_params(lora8b(8, lora_target::q | lora_target::v), false) == doctest::Approx(106496.0));
    // DoRA adds one magnitude per output feature: 4096 + 1024 + 1024 + 4096 + 2 x 14336 + 4096
    estimate_input d = lora8b(16, lora_target::all);
    d.ft.dora = true;
    CHECK(est::adapter_params(d, false) == doctest::Approx(1310720.0 + 43008.0));
    // full fine-tuning has no adapters
    estimate_input full;
    full.model = llama8b();
    CHECK(est::adapter_params(full, false) == 0.0);
}

TEST_CASE("LoRA model states: frozen bf16 base, fp32 adapters with AdamW, no grads at the loss") {
    estimate_input in = lora8b(16, lora_target::all);
    in.ac = ac_kind::full;
    in.micro_batch = 1;
    in.seq_len = 1024;
    est::breakdown b;
    est::compute(in, b);
    const est::stage_figures& s = b.stages[0];
    const double total = est::total_params(in.model), trainable = 32 * 1310720.0;
    CHECK(b.trainable == doctest::Approx(trainable));
    CHECK(s.frozen == doctest::Approx(total * 2.0));                   // every base weight in bf16
    CHECK(s.params == doctest::Approx(total * 2.0 + trainable * 4.0));  // + fp32 adapters
    CHECK(s.optimizer == doctest::Approx(trainable * 8.0));             // AdamW moments of adapters only
    CHECK(s.grads == doctest::Approx(trainable * 4.0));
    CHECK(s.phase != 3);  // the step (adapter grads only) is not the peak
}

TEST_CASE("QLoRA frozen linear weights: NF4 with and without double quantization, LLM.int8") {
    estimate_input in = lora8b(8, lora_target::q | lora_target::v);
    in.ac = ac_kind::full;
    est::breakdown b;
    const double linear = 32 * est::linear_params(in.model, false);
    const double other = est::total_params(in.model) - linear;  // embeddings, head, norms in bf16
    in.ft.base_bits = 4;
    in.ft.double_quant = false;
    est::compute(in, b);
    CHECK(b.stages[0].frozen == doctest::Approx(linear * (0.5 + 4.0 / 64.0) + other * 2.0));  // fp32 absmax per 64
    in.ft.double_quant = true;
    est::compute(in, b);
    // 8-bit absmax per 64 plus an fp32 constant per 256 blocks: 0.5 + 1/64 + 4/16384
    CHECK(b.stages[0].frozen == doctest::Approx(linear * (0.5 + 1.0 / 64.0 + 4.0 / 16384.0) + other * 2.0));
    in.ft.base_bits = 8;
    est::compute(in, b);
    CHECK(b.stages[0].frozen == doctest::Approx(linear * 1.0 + other * 2.0));
    // the dequantized copy of the largest linear (14336 x 4096 bf16) is a forward temporary
    CHECK(b.stages[0].temp_forward >= 2.0 * 14336 * 4096);
}

TEST_CASE("GPTQ / AWQ checkpoints: packed weights with a scale and a zero point per group of 128") {
    estimate_input in = lora8b(8, lora_target::q | lora_target::v);
    in.ac = ac_kind::full;
    est::breakdown b;
    const double linear = 32 * est::linear_params(in.model, false);
    const double other = est::total_params(in.model) - linear;
    in.ft.base_bits = 4;
    in.ft.group_quant = true;
    est::compute(in, b);
    CHECK(b.stages[0].frozen == doctest::Approx(linear * (0.5 + 2.5 / 128.0) + other * 2.0));
    in.ft.base_bits = 8;
    est::compute(in, b);
    CHECK(b.stages[0].frozen == doctest::Approx(linear * (1.0 + 3.0 / 128.0) + other * 2.0));
    in.ft.group_quant = false;  // LLM.int8 for comparison (look-alike)
    est::compute(in, b);
    CHECK(b.stages[0].frozen == doctest::Approx(linear * 1.0 + other * 2.0));
}

TEST_CASE("auto-gptq's dequantize path keeps one checkpointed layer's fp16 weights for backward, AWQ does not (est64)") {
    estimate_input in = lora8b(8, lora_target::all);
    in.ac = ac_kind::full;
    in.ft.base_bits = 4;
    in.ft.group_quant = true;
    const double layer = est::linear_params(in.model, false);
    const double largest = est::largest_linear(in.model, false);
    est::breakdown awq, gptq;
    est::compute(in, awq);  // AWQ: one dequantized copy of the largest linear at a time
    in.ft.gptq_keeps_dequant = true;
    est::compute(in, gptq);
    // the largest linear's unpacking (int32 shift result + int8 cast, 5 B) in place of its 2 B copy
    CHECK(gptq.stages[0].temp_forward - awq.stages[0].temp_forward == doctest::Approx(3.0 * largest));
    // under checkpointing the recomputed layer's other linears stay saved in fp16 until its backward
    CHECK(gptq.stages[0].temp_backward - awq.stages[0].temp_backward ==
          doctest::Approx(3.0 * largest + 2.0 * (layer - largest)));
    CHECK(gptq.stages[0].temp_loss == doctest::Approx(awq.stages[0].temp_loss));
    // without checkpointing every layer's fp16 weights are saved from the forward on, through the loss
    in.ac = ac_kind::none;
    est::compute(in, gptq);
    in.ft.gptq_keeps_dequant = false;
    est::compute(in, awq);
    CHECK(gptq.stages[0].temp_loss - awq.stages[0].temp_loss == doctest::Approx(2.0 * 32 * layer));
}

TEST_CASE("MindSpeed swap-attention: the attention block's saved tensors leave the device, the MLP's stay") {
    const double h = 4096, a = 32, g = 8, d = 128, F = 14336;
    const double attn = 2 * (a * d + 2 * g * d) + 2 * a * d + 4 * a;  // post-RoPE q, k, v, SDPA output, lse
    estimate_input in = lora8b(8, lora_target::q | lora_target::v);
    in.ft.kind = finetune_kind::full;
    in.compile = true;
    in.framework = train_framework::megatron;
    in.tp = 1;
    const auto kept = est::layer_activation(in, false);
    CHECK(kept.saved == doctest::Approx(4 * h + 2 * h + attn + 2 * h + 6 * F));
    in.swap_attention = true;
    const auto swapped = est::layer_activation(in, false);
    CHECK(swapped.saved == doctest::Approx(2 * h + 6 * F));  // MLP input and the SwiGLU set
    CHECK(swapped.transient == doctest::Approx(kept.transient + 4 * h + 2 * h + attn));  // one layer prefetched
    in.ac = ac_kind::full;  // with recomputation the swap is not modelled: the layer input only
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(2 * h));
}

TEST_CASE("LoRA activations: what a frozen base keeps") {
    const double h = 4096, a = 32, g = 8, d = 128, F = 14336, r = 8;
    const double attn = 2 * (a * d + 2 * g * d) + 2 * a * d + 4 * a;  // post-RoPE q, k, v, SDPA output, lse
    estimate_input in = lora8b(8, lora_target::q | lora_target::v);
    in.compile = true;
    // compiled: norms keep their input (2 x 2h), the adapted q/v input (2h), attention, gate and up
    // outputs (4F, the down projection is frozen so its input is not needed), rank-r outputs
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(4 * h + 2 * h + attn + 4 * F + 2 * 2 * r));
    // the same layer trained in full keeps both norm outputs, the MLP input and the SwiGLU set
    estimate_input full = in;
    full.ft.kind = finetune_kind::full;
    CHECK(est::layer_activation(full, false).saved == doctest::Approx(4 * h + 2 * h + attn + 2 * h + 6 * F));
    // eager: fp32 norm copies (4h each, the frozen weights need no bf16 copy), the frozen
    // projections' inputs (q/k/v and MLP inputs 2h each, down input 2F), SiLU output (2F)
    in.compile = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(8 * h + 4 * h + attn + 8 * F + 2 * 2 * r));
    // low end of the interval: eager frozen matmuls keep no inputs
    in.variant = -1;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(8 * h + 2 * h + attn + 6 * F + 2 * 2 * r));
    in.variant = 0;
    // lora_dropout > 0: each adapter keeps a masked copy of its input (2 B) and the mask (1 B)
    in.ft.lora_dropout = true;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(8 * h + 4 * h + attn + 8 * F + 2 * 2 * r + 2 * 3 * h));
    in.ft.lora_dropout = false;
    // bitsandbytes QLoRA without AC: every quantized linear holds an input-sized buffer
    // (q, k, v, gate, up: h each; o: a*d; down: F) until backward
    in.ft.base_bits = 4;
    CHECK(est::layer_activation(in, false).saved ==
          doctest::Approx(8 * h + 4 * h + attn + 8 * F + 2 * 2 * r + 2 * (5 * h + a * d + F)));
    // with gradient checkpointing only the layer input is kept
    in.ac = ac_kind::full;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(2 * h));
}

TEST_CASE("freeze tuning: the last layers train, the rest stays frozen in bf16") {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.zero_stage = 0;
    in.ft.kind = finetune_kind::freeze;
    in.ft.trainable_layers = 2;
    in.ac = ac_kind::none;
    est::breakdown b;
    est::compute(in, b);
    const est::layer_params lp = est::dense_layer_params(in.model);
    const double layer = lp.tp_sharded + lp.replicated, total = est::total_params(in.model);
    CHECK(b.trainable == doctest::Approx(2 * layer));
    CHECK(b.stages[0].frozen == doctest::Approx((total - 2 * layer) * 2.0));
    CHECK(b.stages[0].optimizer == doctest::Approx(2 * layer * 8.0));
    // without AC the frozen bottom layers run without autograd: only the 2 trainable layers keep activations
    const double per_layer = est::layer_activation(in, false).saved;
    CHECK(b.stages[0].activations == doctest::Approx(2 * per_layer * 2048));
}

TEST_CASE("LLaMA-Factory defaults: LoRA r=8 on all linears, gradient checkpointing, bf16 base, fp32 adapters") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "llama_factory");
    emit(f, "job.world_size", std::int64_t(1));
    const estimate_input in = from_facts(f);
    CHECK(in.ft.kind == finetune_kind::lora);
    CHECK(in.ft.lora_rank == 8);
    CHECK(in.ft.targets == lora_target::all);
    CHECK(in.ac == ac_kind::full);
    CHECK(in.ft.load_bytes == 2);
    CHECK(in.ft.trainable_bytes == 4);
    CHECK(in.hf_model);
    bool said_lora = false, said_gc = false;
    for (const auto& a : in.assumptions) {
        said_lora = said_lora || a.find("LLaMA-Factory default") != std::string::npos;
        said_gc = said_gc || a.find("disable_gradient_checkpointing") != std::string::npos;
    }
    CHECK(said_lora);
    CHECK(said_gc);
}

TEST_CASE("fine-tuning keys: targets by module name, QLoRA shorthand, pure bf16, freeze layers") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "hf_trainer");
    emit(f, "training.finetuning_type", "qlora");
    emit(f, "training.lora_target", "q_proj, v_proj,output_proj,bogus");
    emit(f, "training.lora_rank", std::int64_t(64));
    emit(f, "training.pure_bf16", true);
    estimate_input in = from_facts(f);
    CHECK(in.ft.kind == finetune_kind::lora);
    CHECK(in.ft.base_bits == 4);
    CHECK(in.ft.targets == (lora_target::q | lora_target::v | lora_target::o));
    CHECK(in.ft.lora_rank == 64);
    CHECK(in.ft.trainable_bytes == 2);
    CHECK(std::string(finetune_name(in.ft)) == "qlora-4bit");
    bool bogus = false;
    for (const auto& a : in.assumptions) bogus = bogus || a.find("'bogus'") != std::string::npos;
    CHECK(bogus);
    fact_store g;
    emit_llama8b(g);
    emit(g, "training.finetuning_type", "lora");
    emit(g, "training.lora_target", "c_attn,mlp");
    CHECK(from_facts(g).ft.targets == (lora_target::q | lora_target::k | lora_target::v | lora_target::gate | lora_target::up |
                                       lora_target::down));
    fact_store m;  // Megatron-core module names (MindSpeed-LLM --lora-target-modules)
    emit_llama8b(m);
    emit(m, "job.framework", "mindspeed");
    emit(m, "training.finetuning_type", "lora");
    emit(m, "training.lora_target", "linear_qkv,linear_proj");
    CHECK(from_facts(m).ft.targets == (lora_target::q | lora_target::k | lora_target::v | lora_target::o));
    emit(m, "training.lora_target", "linear_fc1,linear_fc2");
    CHECK(from_facts(m).ft.targets == (lora_target::gate | lora_target::up | lora_target::down));
    fact_store z;
    emit_llama8b(z);
    emit(z, "training.finetuning_type", "freeze");
    emit(z, "training.freeze_trainable_layers", std::int64_t(-4));
    CHECK(from_facts(z).ft.kind == finetune_kind::freeze);
    CHECK(from_facts(z).ft.trainable_layers == 4);
}

TEST_CASE("the issue's LLaMA-Factory LoRA example is no longer estimated as full training") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "llama_factory");
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.finetuning_type", "lora");
    emit(f, "training.lora_rank", std::int64_t(16));
    emit(f, "training.seq_len", std::int64_t(2048));
    emit(f, "training.local_batch_size", std::int64_t(2));
    const estimate_result r = estimate(from_facts(f));
    // bf16 base 14.96 GiB + fp32 adapters and AdamW 0.5 GiB + checkpointed inputs 1 GiB + the fp32
    // cross-entropy of 4096 x 128,256 logits (12 B per element, 5.9 GiB)
    CHECK(r.trainable_params == 41943040);
    CHECK(r.peak_bytes > std::int64_t(20) << 30);
    CHECK(r.peak_bytes < std::int64_t(24) << 30);
    CHECK(r.component("optimizer") == doctest::Approx(41943040.0 * 8).epsilon(0.001));
}

TEST_CASE("parameter offload under ZeRO-3 / FSDP: torch FSDP moves grads and the optimizer too, DeepSpeed only params") {
    // torch FSDP CPUOffload(offload_params=True) / FSDP2 CPUOffloadPolicy: parameters and
    // gradients offloaded, the optimizer steps on CPU. DeepSpeed offload_param: parameters only.
    estimate_input in = lora8b(16, lora_target::all);
    in.ac = ac_kind::full;
    in.world = in.dp_shard = 2;
    in.zero_stage = 3;
    in.hf_model = true;
    est::breakdown on_gpu;
    est::compute(in, on_gpu);
    const double trainable = 32 * 1310720.0;
    CHECK(on_gpu.stages[0].frozen == doctest::Approx(est::total_params(in.model) * 2.0 / 2));
    CHECK(on_gpu.stages[0].optimizer == doctest::Approx(trainable * 8.0 / 2));

    in.params_offload = true;
    est::breakdown fsdp;
    est::compute(in, fsdp);
    const est::stage_figures& f = fsdp.stages[0];
    CHECK(f.frozen == 0.0);
    CHECK(f.params == 0.0);
    CHECK(f.grads == 0.0);
    CHECK(f.optimizer == 0.0);
    CHECK(f.master == 0.0);
    // the unit's shard is copied to the device before the all-gather: temporaries grow a little
    CHECK(f.temp_forward > on_gpu.stages[0].temp_forward);

    in.framework = train_framework::deepspeed;
    est::breakdown ds;
    est::compute(in, ds);
    const est::stage_figures& d = ds.stages[0];
    CHECK(d.frozen == 0.0);
    CHECK(d.optimizer > 0.0);  // offload_optimizer is a separate switch
    in.optimizer_offload = true;
    est::compute(in, ds);
    CHECK(ds.stages[0].optimizer == 0.0);
}

TEST_CASE("full training with torch FSDP CPU offload: no parameter, gradient or optimizer shard on the device") {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.world = in.dp_shard = 8;
    in.zero_stage = 3;
    in.ac = ac_kind::full;
    est::breakdown b;
    est::compute(in, b);
    CHECK(b.stages[0].optimizer > 0.0);
    in.params_offload = true;
    est::compute(in, b);
    CHECK(b.stages[0].params == 0.0);
    CHECK(b.stages[0].grads == 0.0);
    CHECK(b.stages[0].optimizer == 0.0);
}

TEST_CASE("torchtune QLoRA model load: torchao 0.1 quantizes a whole weight, later builds in chunks") {
    // Llama 3 8B, NF4 base, r 8 on every linear, 2 x 512 tokens with AC: the training phases are
    // small next to the whole-weight quantization of the largest linear (14336 x 4096 elements)
    estimate_input in = lora8b(8, lora_target::all);
    in.framework = train_framework::torchtune;
    in.ft.base_bits = 4;
    in.ft.quant_keeps_input = false;  // torchao NF4, not bitsandbytes
    in.ft.trainable_bytes = 2;
    in.ac = ac_kind::full;
    in.micro_batch = 2;
    in.seq_len = 512;
    const double largest = 14336.0 * 4096.0;
    const double per_elem = estimator_k().nf4_unchunked_quant_bytes;
    CHECK(per_elem == doctest::Approx(68.0));  // 2 + 2 + 32 + 32 B (knowledge/estimator.yaml)
    est::breakdown b;

    in.framework_date = 20240415;  // torchtune pinned torchao==0.1: the load sets the peak
    est::compute(in, b);
    const est::stage_figures& s = b.stages[0];
    CHECK(s.temp_load == doctest::Approx(per_elem * largest));
    CHECK(s.phase_load == doctest::Approx(s.params + per_elem * largest));
    CHECK(s.phase == 4);
    CHECK(b.peak == doctest::Approx(s.phase_load));
    CHECK(b.reserved >= s.phase_load);

    in.framework_date = 20240626;  // torchao==0.3 quantizes in 1M-element chunks: no load phase
    est::compute(in, b);
    CHECK(b.stages[0].phase_load == 0.0);
    CHECK(b.stages[0].phase != 4);
    CHECK(b.peak < s.params + per_elem * largest);
    in.framework_date = 20240728;  // and the recipe deletes its logits before backward (est27): today's recipe
    est::compute(in, b);
    const double trained = b.peak;

    in.framework_date = 0;  // build unknown: the point leaves it out, the high end keeps it
    const estimate_result r = estimate(in);
    CHECK(r.peak_phase != "model_load");
    CHECK(double(r.peak_bytes) == doctest::Approx(trained));
    CHECK(r.high_bytes > r.device_peak_bytes);
    CHECK(says(r, "torchao 0.1"));

    in.framework_date = 20240415;  // bitsandbytes (HF, LLaMA-Factory) loads pre-quantized: no load phase
    in.framework = train_framework::generic;
    in.ft.quant_keeps_input = true;
    est::compute(in, b);
    CHECK(b.stages[0].phase_load == 0.0);
    in.framework = train_framework::torchtune;  // a bf16 base is not quantized at load
    in.ft.quant_keeps_input = false;
    in.ft.base_bits = 16;
    est::compute(in, b);
    CHECK(b.stages[0].phase_load == 0.0);
}

// ---- round est9: mechanisms read off held-out fine-tuning rows, each from the framework source ----

TEST_CASE("gradient accumulation keeps the gradients alive through later forwards (no pipeline)") {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.zero_stage = 0;
    in.param_bytes = 2;
    in.master_weights = false;  // LitGPT bf16-true: bf16 weights, grads and AdamW states
    est::breakdown one;
    est::compute(in, one);
    CHECK(one.stages[0].grads_in_forward == 0.0);
    in.grad_accum = 8;
    est::breakdown acc;
    est::compute(in, acc);
    const est::stage_figures& a = acc.stages[0];
    CHECK(a.grads_in_forward == doctest::Approx(est::total_params(in.model) * 2.0));
    CHECK(a.phase_forward == doctest::Approx(one.stages[0].phase_forward + a.grads_in_forward));
    // fused optimizer-in-backward frees each gradient at once: nothing accumulates
    in.optimizer_in_backward = true;
    est::compute(in, acc);
    CHECK(acc.stages[0].grads_in_forward == 0.0);

    // read from the config: the count, or the global batch over micro-batch x data-parallel ranks
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "litgpt");
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.local_batch_size", std::int64_t(4));
    emit(f, "training.global_batch_size", std::int64_t(32));
    CHECK(from_facts(f).grad_accum == 8);
    emit(f, "training.gradient_accumulation_steps", std::int64_t(2));
    CHECK(from_facts(f).grad_accum == 2);
    // a pipeline's micro-batches are its schedule's business (num_microbatches), not this
    emit(f, "job.world_size", std::int64_t(2));
    emit(f, "parallelism.pipeline_parallel_degree", std::int64_t(2));
    CHECK(from_facts(f).grad_accum == 1);
}

TEST_CASE("FSDP1 and FSDP2 (HF Trainer / accelerate): the root unit stays unsharded through backward") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "hf_trainer");
    emit(f, "job.world_size", std::int64_t(4));
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    CHECK(from_facts(f).fsdp1);
    fact_store v2 = f;
    emit(v2, "parallelism.fsdp_version", std::int64_t(2));
    CHECK_FALSE(from_facts(v2).fsdp1);
    fact_store ds = f;
    emit(ds, "job.deepspeed_config", "ds_z3.json");
    CHECK_FALSE(from_facts(ds).fsdp1);
    fact_store tt;
    emit_llama8b(tt);
    emit(tt, "job.framework", "torchtune");
    emit(tt, "job.world_size", std::int64_t(4));
    CHECK_FALSE(from_facts(tt).fsdp1);

    // full fine-tuning: embedding + head + final norm in bf16 in every phase; at the end of
    // backward the root's per-parameter gradients and the assembled flat gradient as well
    estimate_input in = from_facts(f);
    in.fsdp1 = false;
    est::breakdown b2;
    est::compute(in, b2);
    in.fsdp1 = true;
    est::breakdown b1;
    est::compute(in, b1);
    const double root = 2.0 * 128256.0 * 4096.0 + 4096.0;
    const double head = 128256.0 * 4096.0;
    // est66: accelerate's FSDP2 keeps its root group unsharded too (FSDP2's lazy init never reshards the root),
    // so FSDP1 differs only at the end of backward (the flat copy); without the root rule FSDP2 counted the head
    // all-gathered at the loss only
    CHECK(b1.stages[0].temp_forward - b2.stages[0].temp_forward == doctest::Approx(0.0));
    CHECK(b1.stages[0].temp_loss - b2.stages[0].temp_loss == doctest::Approx(0.0));
    CHECK(b1.stages[0].temp_backward - b2.stages[0].temp_backward == doctest::Approx(0.0));
    CHECK(b1.stages[0].temp_step - b2.stages[0].temp_step == doctest::Approx(root * 2.0 * 3.0));
    estimate_input not_hf = in;
    not_hf.fsdp1 = false;
    not_hf.hf_model = false;
    est::breakdown b3;
    est::compute(not_hf, b3);
    CHECK(b2.stages[0].temp_forward - b3.stages[0].temp_forward == doctest::Approx(root * 2.0));
    CHECK(b2.stages[0].temp_loss - b3.stages[0].temp_loss == doctest::Approx(root * 2.0 - head * 2.0));
    CHECK(b2.stages[0].temp_backward - b3.stages[0].temp_backward == doctest::Approx(root * 2.0 + head * 2.0));
    // LoRA: the root is frozen (no root gradients), only the unsharded weights
    in.ft.kind = finetune_kind::lora;
    in.ft.lora_rank = 8;
    in.ft.targets = lora_target::all;
    in.ft.load_bytes = 2;
    est::compute(in, b1);
    in.fsdp1 = false;
    est::compute(in, b2);
    CHECK(b1.stages[0].temp_backward - b2.stages[0].temp_backward == doctest::Approx(0.0));
    CHECK(b1.stages[0].temp_step == doctest::Approx(b2.stages[0].temp_step));
}

TEST_CASE("liger fused linear cross-entropy allocates the head's weight gradient when the head trains") {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.hf_model = true;
    in.chunked_loss = true;  // use_liger_kernel
    in.world = in.dp_shard = 4;
    in.zero_stage = 3;
    in.ac = ac_kind::full;
    est::breakdown full;
    est::compute(in, full);
    estimate_input l = in;
    l.ft.kind = finetune_kind::lora;
    l.ft.lora_rank = 8;
    l.ft.targets = lora_target::all;
    l.ft.load_bytes = 2;
    est::breakdown lora;
    est::compute(l, lora);
    // zeros_like(weight): the unsharded bf16 head under FSDP; a frozen head has none
    CHECK(full.stages[0].logits - lora.stages[0].logits == doctest::Approx(128256.0 * 4096.0 * 2.0));
    // without FSDP the forward sees the stored fp32 parameter (mixed precision with master weights)
    in.world = in.dp_shard = 1;
    in.zero_stage = 0;
    l.world = l.dp_shard = 1;
    l.zero_stage = 0;
    est::compute(in, full);
    est::compute(l, lora);
    CHECK(full.stages[0].logits - lora.stages[0].logits == doctest::Approx(128256.0 * 4096.0 * 4.0));
}

TEST_CASE("LitGPT fine-tuning keeps a separate head for a tied embedding") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "model.tie_word_embeddings", true);
    emit(f, "job.framework", "hf_trainer");
    CHECK(from_facts(f).model.tied);
    emit(f, "job.framework", "litgpt");
    const estimate_input in = from_facts(f);
    CHECK_FALSE(in.model.tied);
    bool said = false;
    for (const auto& a : in.assumptions) said = said || a.find("LitGPT") != std::string::npos;
    CHECK(said);
}

TEST_CASE("HF Trainer / LLaMA-Factory with a DeepSpeed config: DeepSpeed's dtypes, not the trainer's upcast") {
    // LLaMA-Factory upcasts trainable parameters to fp32 for full tuning, but the DeepSpeed
    // engine casts the module back to bf16 and keeps fp32 master partitions (ZeRO-2 over 4 ranks).
    fact_store f = job8b("llama_factory", "full", 4);
    emit(f, "framework.estimator", "generic");
    emit(f, "parallelism.zero_stage", std::int64_t(2));
    CHECK(from_facts(f).framework == train_framework::generic);
    const estimate_result plain = estimate(from_facts(f));
    fact_store ds = f;
    emit(ds, "job.deepspeed_config", "ds_z2_config.json");
    CHECK(from_facts(ds).framework == train_framework::deepspeed);
    const estimate_result r = estimate(from_facts(ds));
    const double n = double(r.component("params")) / 2.0;  // bf16 weights on every rank (ZeRO-2 keeps them whole)
    CHECK(double(r.component("master_weights")) == doctest::Approx(4.0 * n / 4.0).epsilon(0.01));
    CHECK(double(plain.component("params")) == doctest::Approx(2.0 * double(r.component("params"))).epsilon(0.01));
    CHECK(plain.component("master_weights") == 0);  // fp32 trainable weights without DeepSpeed: no copy
}

TEST_CASE("pure bf16 training (torchtitan training.dtype, LLaMA-Factory pure_bf16): bf16 states, no fp32 copy") {
    fact_store f = job8b("torchtitan", "full", 8);
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    const estimate_result mixed = estimate(from_facts(f));
    fact_store p = f;
    emit(p, "training.pure_bf16", true);
    CHECK_FALSE(from_facts(p).master_weights);
    const estimate_result pure = estimate(from_facts(p));
    // FSDP keeps fp32 sharded parameters and fp32 Adam moments in mixed precision; pure bf16 halves both
    CHECK(double(pure.component("params")) == doctest::Approx(0.5 * double(mixed.component("params"))).epsilon(0.01));
    CHECK(double(pure.component("optimizer")) == doctest::Approx(0.5 * double(mixed.component("optimizer"))).epsilon(0.01));
    CHECK(pure.component("master_weights") == 0);
}

TEST_CASE("a lower bound on the build date settles what it reaches, and only that") {
    estimate_input in;
    in.framework_date_min = 20250605;
    CHECK(est::build_side(in, est::date_compiled_loss) == 1);   // 2025-04-02: reached
    CHECK(est::build_side(in, est::date_pp_drops_outputs) == 0);  // 2025-10-22: still unknown
    in.framework_date = 20241226;                                 // a date given wins
    CHECK(est::build_side(in, est::date_compiled_loss) == -1);
}

TEST_CASE("full fine-tuning of a bf16-loaded model under an HF-model trainer: bf16 weights and moments, unless sharded") {
    fact_store f = job8b("hf_trainer", "full", 1);
    emit(f, "framework.estimator", "generic");
    const estimate_input fp32_load = from_facts(f);
    CHECK(fp32_load.master_weights);  // no load dtype stated: autocast over fp32 weights
    fact_store b = f;
    emit(b, "training.load_dtype", "bfloat16");
    CHECK_FALSE(from_facts(b).master_weights);
    CHECK(from_facts(b).param_bytes == 2);
    fact_store fsdp = b;  // accelerate's FSDP upcasts low-precision parameters for mixed precision
    emit(fsdp, "job.world_size", std::int64_t(4));
    emit(fsdp, "parallelism.zero_stage", std::int64_t(3));
    CHECK(from_facts(fsdp).master_weights);
    fact_store lf = b;  // LLaMA-Factory upcasts trainable weights to fp32 itself
    emit(lf, "job.framework", "llama_factory");
    CHECK(from_facts(lf).master_weights);
}

// est11 mechanisms, each on both sides (docs/estimator.md, "Held-out round est11").
TEST_CASE("foreach AdamW: one second moment's worth at the step for torch's AdamW, none when fused") {
    auto step_of = [](const char* optim) {
        fact_store f = job8b("hf_trainer", "full", 1);
        emit(f, "training.load_dtype", "bfloat16");
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "activation_checkpoint.mode", "full");
        if (*optim) emit(f, "optimizer.name", optim);
        return foreach_step_transient(f);
    };
    const auto torch_adamw = step_of("adamw_torch");
    const auto fused = step_of("adamw_torch_fused");
    const auto unnamed = step_of("");
    CHECK(torch_adamw.first == 1);
    CHECK(fused.first == 0);
    CHECK(unnamed.first == -1);
    // pure bf16 full fine-tune: moments in bf16, sqrt(exp_avg_sq) = 2 B per parameter
    const double params = 8.03e9;
    CHECK(torch_adamw.second - fused.second == doctest::Approx(2.0 * params).epsilon(0.01));
    CHECK(unnamed.second == doctest::Approx(fused.second));  // unknown default: high end only
}

// est35: a stated implementation (torch.optim.AdamW(foreach=True), torchtitan optimizer.implementation)
// decides for any framework; without it torchtitan keeps no buffer and HF Trainer follows its optim name.
TEST_CASE("optimizer.implementation: foreach adds the group-wide sqrt buffer, fused and for-loop do not") {
    auto step_of = [](const char* fw, const char* optim, const char* impl) {
        fact_store f = job8b(fw, "full", 1);
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "activation_checkpoint.mode", "full");
        emit(f, "optimizer.name", optim);
        if (*impl) emit(f, "optimizer.implementation", impl);
        return foreach_step_transient(f);
    };
    const auto tt_none = step_of("torchtitan", "adamw", "");
    const auto tt_foreach = step_of("torchtitan", "adamw", "foreach");
    const auto tt_fused = step_of("torchtitan", "adamw", "fused");
    const auto tt_loop = step_of("torchtitan", "adamw", "for-loop");
    CHECK(tt_none.first == 0);
    CHECK(tt_foreach.first == 1);
    CHECK(tt_fused.first == 0);
    CHECK(tt_loop.first == 0);
    CHECK(tt_foreach.second > tt_fused.second + 1e9);  // half the two fp32 moments of 8 B parameters
    CHECK(tt_fused.second == doctest::Approx(tt_none.second));
    // the stated implementation overrides HF Trainer's name-based reading
    CHECK(step_of("hf_trainer", "adamw_torch", "fused").first == 0);
    CHECK(step_of("hf_trainer", "adamw_torch_fused", "foreach").first == 1);
    // not an Adam: no buffer whatever is stated
    CHECK(step_of("torchtitan", "sgd", "foreach").first == 0);
}

TEST_CASE("transformers 4.46-4.48 keep the bf16 logits beside the fp32 copies; other versions do not") {
    auto bpe_of = [](const char* version) {
        fact_store f = job8b("hf_trainer", "lora", 1);
        emit(f, "training.seq_len", std::int64_t(2048));
        if (*version) emit(f, "job.transformers_version", version);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return b.logits_bpe;
    };
    CHECK(bpe_of("4.48.1") == doctest::Approx(14.0));
    CHECK(bpe_of("4.46.0") == doctest::Approx(14.0));
    CHECK(bpe_of("4.45.2") == doctest::Approx(12.0));
    CHECK(bpe_of("4.49.0") == doctest::Approx(12.0));
    CHECK(bpe_of("") == doctest::Approx(12.0));  // unknown: point 12 B, high end 14 B
}

TEST_CASE("the script's own loss on the model's 16-bit logits (training.loss_upcast false): 6 B, an fp32 head keeps 12 B") {
    auto bpe_of = [](const char* ftype, const char* load, int upcast) {
        fact_store f = job8b("pytorch", ftype, 1);
        emit(f, "framework.hf_model", true);
        emit(f, "job.transformers_version", "4.49.0");
        emit(f, "training.seq_len", std::int64_t(8192));
        emit(f, "training.load_dtype", load);
        if (std::string(ftype) == "full") emit(f, "training.pure_bf16", true);
        if (std::string(load) == "float32") emit(f, "training.quantization_bit", std::int64_t(4));
        if (upcast >= 0) emit(f, "training.loss_upcast", upcast == 1);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in.loss_in_model_dtype, b.logits_bpe);
    };
    // bf16 head, the script's own cross-entropy: bf16 logits, shifted copy, bf16 log-softmax
    CHECK(bpe_of("lora", "bfloat16", 0) == std::make_pair(true, 6.0));
    CHECK(bpe_of("full", "bfloat16", 0) == std::make_pair(true, 6.0));
    // the other side: the loss upcasts (explicitly or by default), or the head is fp32 (QLoRA loaded in float32)
    CHECK(bpe_of("lora", "bfloat16", 1) == std::make_pair(false, 12.0));
    CHECK(bpe_of("lora", "bfloat16", -1) == std::make_pair(false, 12.0));
    CHECK(bpe_of("lora", "float32", 0) == std::make_pair(false, 12.0));
}

TEST_CASE("GPT-2 before transformers 4.46: the loss runs on 16-bit logits when the weights are 16-bit (est47)") {
    // framework, compute dtype, load dtype (AMP: fp32 weights), transformers version, date
    auto bpe_of = [](const char* framework, const char* load, const char* tv, const char* date, const char* family) {
        fact_store f = job8b(framework, "full", 4);
        emit(f, "model.family", family);
        emit(f, "framework.hf_model", true);
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "training.mixed_precision_param", "float16");
        if (std::string(framework) == "deepspeed") emit(f, "parallelism.zero_stage", std::int64_t(3));
        if (*load) emit(f, "training.load_dtype", load);
        if (*tv) emit(f, "job.transformers_version", tv);
        if (*date) emit(f, "job.framework_date", date);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in.loss_in_model_dtype, b.logits_bpe);
    };
    // DeepSpeed fp16 (16-bit weights, no autocast), dated or versioned before 4.46: 16-bit log-softmax
    CHECK(bpe_of("deepspeed", "", "", "2022-08-18", "gpt2") == std::make_pair(true, 6.0));
    CHECK(bpe_of("deepspeed", "", "4.45.2", "", "gpt2") == std::make_pair(true, 6.0));
    // pure fp16 weights under a plain loop (no master copy), before 4.46
    CHECK(bpe_of("pytorch", "float16", "4.30.0", "", "gpt2").first);
    // the other side: 4.46+ (ForCausalLMLoss upcasts), no version nor date, AMP's fp32 weights, another family
    CHECK_FALSE(bpe_of("deepspeed", "", "4.46.0", "", "gpt2").first);
    CHECK_FALSE(bpe_of("deepspeed", "", "", "", "gpt2").first);
    CHECK_FALSE(bpe_of("deepspeed", "", "", "2024-10-24", "gpt2").first);
    CHECK_FALSE(bpe_of("pytorch", "float32", "4.30.0", "", "gpt2").first);
    CHECK_FALSE(bpe_of("deepspeed", "", "4.45.2", "", "llama").first);
}

TEST_CASE("QLoRA under HF Trainer: PEFT's kbit preparation makes the checkpointed layer inputs fp32") {
    auto acts_of = [](const char* framework, int zero, int bits) {
        fact_store f = job8b(framework, "lora", zero >= 3 ? 2 : 1);
        emit(f, "training.seq_len", std::int64_t(4096));
        emit(f, "activation_checkpoint.mode", "full");
        if (zero >= 3) emit(f, "parallelism.zero_stage", std::int64_t(zero));
        if (bits < 16) emit(f, "training.quantization_bit", std::int64_t(bits));
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in.ft.fp32_residual, b.stages[0].activations);
    };
    const auto qlora = acts_of("hf_trainer", 0, 4);
    const auto lora = acts_of("hf_trainer", 0, 16);
    const auto sharded = acts_of("hf_trainer", 3, 4);
    const auto factory = acts_of("llama_factory", 0, 4);
    CHECK(qlora.first);
    CHECK_FALSE(lora.first);
    CHECK_FALSE(sharded.first);  // FSDP QLoRA: TRL skips the preparation
    CHECK_FALSE(factory.first);  // LLaMA-Factory does not call it
    // 32 layers x 4096 tokens x 4096 hidden: 4 B instead of 2 B per element
    CHECK(qlora.second == doctest::Approx(32.0 * 4096 * 4096 * 4.0));
    CHECK(lora.second == doctest::Approx(32.0 * 4096 * 4096 * 2.0));
}

TEST_CASE("bitsandbytes quantization constants are no parameter: FSDP / ZeRO-3 neither shards nor offloads them") {
    auto frozen_of = [](const char* method, int zero, bool offload) {
        fact_store f = job8b("hf_trainer", "lora", 2);
        emit(f, "training.seq_len", std::int64_t(2048));
        emit(f, "training.quantization_bit", std::int64_t(4));
        emit(f, "training.double_quantization", false);
        emit(f, "training.quantization_method", method);
        emit(f, "parallelism.zero_stage", std::int64_t(zero));
        if (offload) emit(f, "parallelism.offload_params", "cpu");
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return b.stages[0].frozen;
    };
    // linear weights of Llama 3 8B: 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336)
    const double lin = 32.0 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336);
    const double consts = lin * 4.0 / 64.0;  // one fp32 absmax per 64 weights (no double quantization)
    // sharded over 2 ranks: the packed weights halve, the constants stay whole
    CHECK(frozen_of("bitsandbytes", 3, false) - frozen_of("torchao", 3, false) == doctest::Approx(consts / 2.0).epsilon(1e-6));
    // CPU offload moves the flat parameters only
    CHECK(frozen_of("bitsandbytes", 3, true) == doctest::Approx(consts).epsilon(1e-6));
    CHECK(frozen_of("torchao", 3, true) == doctest::Approx(0.0));
    // unsharded: every rank holds everything either way
    CHECK(frozen_of("bitsandbytes", 0, false) == doctest::Approx(frozen_of("torchao", 0, false)));
    // GPTQ checkpoints keep their scales with the packed weights (not changed)
    CHECK(frozen_of("gptq", 3, false) > 0.0);
}

TEST_CASE("FSDP1 unshard-stream pools: the free all-gather blocks stay cached at the loss; not under FSDP2") {
    auto pool_of = [](int fsdp_version, bool offload) {
        fact_store f = job8b("hf_trainer", "lora", 2);
        emit(f, "training.seq_len", std::int64_t(2048));
        emit(f, "parallelism.zero_stage", std::int64_t(3));
        emit(f, "parallelism.fsdp_version", std::int64_t(fsdp_version));
        if (offload) emit(f, "parallelism.offload_params", "cpu");
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(b.stages[0].unshard_pool, b.reserved);
    };
    // one decoder layer of Llama 3 8B unsharded in bf16: linears + two norms
    const double layer = 2.0 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 2.0 * 4096);
    const auto fsdp1 = pool_of(1, false), fsdp2 = pool_of(2, false), offload = pool_of(1, true);
    CHECK(fsdp1.first == doctest::Approx(2.0 * layer));            // current + prefetched unit
    CHECK(fsdp2.first == doctest::Approx(0.0));
    CHECK(offload.first == doctest::Approx(2.0 * layer + layer));  // + two shard copies (half a layer each)
}

TEST_CASE("FSDP1 construction floor: the root unit's build cache, the unshard-stream and small-block pools") {
    auto run = [](std::int64_t rank, std::int64_t tokens, std::int64_t batch, int fsdp_version) {
        fact_store f = job8b("hf_trainer", "lora", 2);
        emit(f, "training.lora_rank", rank);
        emit(f, "training.seq_len", tokens);
        emit(f, "training.local_batch_size", batch);
        emit(f, "optimizer.name", "adamw_torch");
        emit(f, "parallelism.zero_stage", std::int64_t(3));
        emit(f, "parallelism.fsdp_version", std::int64_t(fsdp_version));
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return b;
    };
    // the root unit (embedding, head, final norm) in bf16, built last beside every other shard: its
    // original parameters and the flat copy stay cached; in training it is all-gathered again on the
    // unshard stream, with two decoder-layer units
    const double root = 2.0 * (2.0 * 128256.0 * 4096.0 + 4096.0);
    const est::breakdown r16 = run(16, 128, 1, 1), r128 = run(128, 128, 1, 1);
    const est::stage_figures& a = r16.stages[0];
    const est::stage_figures& c = r128.stages[0];
    // r 16: the largest adapter matrix (16 x 14336 fp32) has a 0.46 MB shard, a small-pool block: its
    // gradients, AdamW states and foreach sqrt cannot reuse the large cached blocks
    CHECK(a.fsdp1_floor == doctest::Approx(a.params + 3.0 * root + a.unshard_pool + a.grads + 1.5 * a.optimizer));
    // r 128: a 3.7 MB shard comes from the large pool, which the build cache serves
    CHECK(c.fsdp1_floor == doctest::Approx(c.params + 3.0 * root + c.unshard_pool));
    // at 128 tokens the floor sets the reserved figure and the note says so; at 4 x 8192 it does not
    const double round = 1.0 + estimator_k().allocator_rounding;
    CHECK(r16.reserved == doctest::Approx(a.fsdp1_floor * round));
    const est::breakdown longer = run(16, 8192, 4, 1);
    CHECK(longer.reserved > longer.stages[0].fsdp1_floor * round * 1.2);
    CHECK(a.floor_sets_reserved);  // what the reserved note reads
    CHECK_FALSE(longer.stages[0].floor_sets_reserved);
    // FSDP2 builds sharded from the meta device: no floor
    CHECK(run(16, 128, 1, 2).stages[0].fsdp1_floor == 0.0);
}

namespace {

// torchtune's 8B on one device, pure bf16, full checkpointing, micro-batch 1: the optimizer rows' base job.
fact_store pure_bf16_full_ac_job(const char* opt, const char* ftype, std::int64_t seq) {
    fact_store f = job8b("torchtune", ftype, 1);
    emit(f, "optimizer.name", opt);
    emit(f, "training.pure_bf16", true);
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "training.seq_len", seq);
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "activation_checkpoint.mode", "full");
    return f;
}

}  // namespace

TEST_CASE("bitsandbytes paged optimizers: large states in managed memory, outside allocated and reserved (est21)") {
    // Optimizer8bit.get_state_buffer pages a state when its parameter has >= 1e5 elements
    // (F.get_paged: cudaMallocManaged), so torch's allocator statistics do not count it.
    auto run = [](const char* opt, const char* ftype, std::int64_t rank, std::int64_t capacity) {
        fact_store f = pure_bf16_full_ac_job(opt, ftype, 2048);
        emit(f, "optimizer.in_backward", true);
        if (rank > 0) {
            emit(f, "training.lora_rank", rank);
            emit(f, "training.lora_target", "q_proj,v_proj");
        }
        if (capacity > 0) emit(f, "device.capacity_bytes", capacity);
        return estimate(from_facts(f));
    };
    const double n = 8.03e9;
    // full fine-tuning, 8-bit: paged (2 B/param) leaves allocated; torchao-style AdamW8bit keeps it
    const estimate_result plain8 = run("AdamW8bit", "full", 0, 0), paged8 = run("PagedAdamW8bit", "full", 0, 0);
    const double moved8 = double(plain8.peak_bytes - paged8.peak_bytes);
    CHECK(moved8 > 0.99 * 2.0 * n * 0.999);
    CHECK(moved8 < 2.0 * n * 1.001);
    // bitsandbytes 32-bit states are fp32 even for bf16 parameters (8 B/param), all paged
    const estimate_result plain32 = run("AdamW", "full", 0, 0), paged32 = run("PagedAdamW", "full", 0, 0);
    CHECK(double(plain32.peak_bytes - paged32.peak_bytes) == doctest::Approx(4.0 * n).epsilon(0.01));  // bf16 torch states gone
    // nor in the device peak: managed pages are evicted to the host when the device fills, so they
    // cannot make the job run out of memory
    CHECK(double(paged32.device_peak_bytes - paged32.reserved_peak_bytes) < 2.0e9);
    const estimate_result small = run("PagedAdamW", "full", 0, std::int64_t(24) << 30);
    CHECK(small.peak_bytes == paged32.peak_bytes);
    // LoRA r 8 on q, v: every adapter matrix is r x 4096 = 32768 < 1e5 elements: nothing is paged
    const estimate_result lora_plain = run("AdamW8bit", "lora", 8, 0), lora_paged = run("PagedAdamW8bit", "lora", 8, 0);
    CHECK(lora_plain.peak_bytes == lora_paged.peak_bytes);
    // r 64: 64 x 4096 = 262144 >= 1e5 for every matrix: all paged
    const estimate_result big_plain = run("AdamW8bit", "lora", 64, 0), big_paged = run("PagedAdamW8bit", "lora", 64, 0);
    CHECK(big_paged.peak_bytes < big_plain.peak_bytes);
}

TEST_CASE("torchao AdamW4bit: two 4-bit states with a fp32 scale per 128 elements (est39)") {
    auto run = [](const char* opt) {
        return from_facts(pure_bf16_full_ac_job(opt, "full", 1024));
    };
    // the names torchao and the HF Trainer give it
    CHECK(run("torchao.prototype.low_bit_optim.AdamW4bit").optimizer == "adamw4bit");
    CHECK(run("adamw_torch_4bit").optimizer == "adamw4bit");
    CHECK(run("torchao.optim.AdamW8bit").optimizer == "adamw8bit");
    // states: 4 B/param in bf16 Adam, 2 B at 8 bits, 2 x (0.5 + 4 / 128) B at 4 bits
    const double n = 8.03e9;
    const double s16 = double(estimate(run("adamw")).peak_bytes), s8 = double(estimate(run("AdamW8bit")).peak_bytes),
                 s4 = double(estimate(run("AdamW4bit")).peak_bytes);
    CHECK((s8 - s4) == doctest::Approx((2.0 - 1.0625) * n).epsilon(0.02));
    CHECK((s16 - s4) == doctest::Approx((4.0 - 1.0625) * n).epsilon(0.02));
}

TEST_CASE("Gemma 2 under LitGPT: soft-capped attention by hand, four norms; other families and frameworks unchanged (est24)") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "litgpt");
    const estimate_input llama = from_facts(f);
    CHECK(llama.flash);
    CHECK_FALSE(llama.manual_attn);
    CHECK(llama.model.norms_per_layer == 2);
    emit(f, "model.family", "gemma2");
    const estimate_input gemma = from_facts(f);
    CHECK_FALSE(gemma.flash);  // LitGPT: "with softcapping we cannot use SDPA"
    CHECK(gemma.manual_attn);
    CHECK(gemma.model.norms_per_layer == 4);
    CHECK(gemma.model.attn_softcap == doctest::Approx(50.0));
    emit(f, "job.framework", "hf_trainer");
    const estimate_input hf = from_facts(f);
    CHECK(hf.flash);  // HF keeps the attention its config names (flash by default here)
    CHECK_FALSE(hf.manual_attn);
    CHECK(hf.model.norms_per_layer == 4);
    emit(f, "model.family", "gemma3");
    const estimate_input g3 = from_facts(f);
    CHECK(g3.model.norms_per_layer == 4);
    CHECK(g3.model.attn_softcap == doctest::Approx(0.0));
}

TEST_CASE("LitGPT QLoRA quantizes the head too: NF4 weight, its dequantized copy the largest temporary (est24)") {
    fact_store f;
    emit_llama8b(f);
    emit(f, "job.framework", "litgpt");
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.finetuning_type", "lora");
    emit(f, "training.lora_target", "q_proj,v_proj");
    emit(f, "training.seq_len", std::int64_t(512));
    emit(f, "training.local_batch_size", std::int64_t(2));
    emit(f, "training.pure_bf16", true);
    emit(f, "training.quantization_bit", std::int64_t(4));
    emit(f, "training.double_quantization", false);
    const estimate_input litgpt = from_facts(f);
    CHECK(litgpt.ft.quant_head);
    estimate_input bf16_head = litgpt;
    bf16_head.ft.quant_head = false;
    est::breakdown q, b;
    est::compute(litgpt, q);
    est::compute(bf16_head, b);
    const double head = 128256.0 * 4096.0, mlp = 14336.0 * 4096.0;
    // the head's weight at NF4 without double quantization (0.5625 B) instead of bf16
    CHECK(b.stages[0].frozen - q.stages[0].frozen == doctest::Approx(head * (2.0 - 0.5625)).epsilon(0.001));
    // its dequantized bf16 copy (2 B per element) is the largest frozen linear's, in forward and backward
    CHECK(q.stages[0].temp_forward - b.stages[0].temp_forward == doctest::Approx(2.0 * (head - mlp)));
    CHECK(q.stages[0].temp_backward - b.stages[0].temp_backward == doctest::Approx(2.0 * (head - mlp)));
    // and beside the loss buffers: each chunk's backward dequantizes it while the logits are held
    CHECK(q.stages[0].temp_loss - b.stages[0].temp_loss == doctest::Approx(2.0 * head));
    // high end: Lightning's plugin quantizes from fp16, so the dequantized copy and its bf16 cast coexist
    estimate_input high = litgpt;
    high.variant = 1;
    est::breakdown qh;
    est::compute(high, qh);
    CHECK(qh.stages[0].temp_loss - q.stages[0].temp_loss == doctest::Approx(2.0 * head));
    CHECK(qh.stages[0].temp_backward - q.stages[0].temp_backward == doctest::Approx(2.0 * head));
    estimate_input high_bf16_head = bf16_head;  // not LitGPT's plugin: the high end adds nothing here
    high_bf16_head.variant = 1;
    est::breakdown bh;
    est::compute(high_bf16_head, bh);
    CHECK(bh.stages[0].temp_backward == doctest::Approx(b.stages[0].temp_backward));
    CHECK(says(estimate(litgpt), "fp16 copy"));
    // LoRA without quantization, other frameworks, GPTQ checkpoints: the head stays in the load dtype
    emit(f, "job.framework", "hf_trainer");
    CHECK_FALSE(from_facts(f).ft.quant_head);
    emit(f, "job.framework", "litgpt");
    emit(f, "training.quantization_bit", std::int64_t(16));
    CHECK_FALSE(from_facts(f).ft.quant_head);
    emit(f, "training.quantization_bit", std::int64_t(4));
    emit(f, "training.quantization_method", "gptq");
    CHECK_FALSE(from_facts(f).ft.quant_head);
}

TEST_CASE("a vision-language model's vision tower: frozen weights unless fully trained with freeze_vision_tower false") {
    // Llama 3 8B's dimensions with a 676 M vision tower (Qwen2.5-VL-7B's size), LLaMA-Factory LoRA on one device:
    // the tower adds 676,552,704 x 2 B (bf16 load dtype) of frozen weights and nothing else
    const double vision = 676552704.0;
    fact_store text = job8b("llama_factory", "lora", 1);
    fact_store vl = text;
    emit(vl, "model.vision_params", std::int64_t(vision));
    const estimate_input vin = from_facts(vl);
    CHECK(vin.model.vision_params == std::int64_t(vision));
    CHECK_FALSE(vin.model.vision_trainable);
    bool said = false;
    for (const auto& a : vin.assumptions) said = said || a.find("vision tower") != std::string::npos;
    CHECK(said);
    const estimate_result t = estimate(from_facts(text)), v = estimate(vin);
    CHECK(double(v.component("params") - t.component("params")) == doctest::Approx(2.0 * vision).epsilon(0.001));
    CHECK(v.component("optimizer") == t.component("optimizer"));
    CHECK(v.component("grads") == t.component("grads"));
    // full fine-tuning keeps the tower frozen by default: bf16 weights, no states
    fact_store full_t = job8b("llama_factory", "full", 1), full_v = full_t;
    emit(full_v, "model.vision_params", std::int64_t(vision));
    const estimate_result ft = estimate(from_facts(full_t)), fv = estimate(from_facts(full_v));
    CHECK(double(fv.component("params") - ft.component("params")) == doctest::Approx(2.0 * vision).epsilon(0.001));
    CHECK(fv.component("optimizer") == ft.component("optimizer"));
    // freeze_vision_tower: false with full fine-tuning trains it like the language model (fp32 weights, AdamW states)
    emit(full_v, "training.freeze_vision_tower", false);
    const estimate_input tin = from_facts(full_v);
    CHECK(tin.model.vision_trainable);
    const estimate_result tv = estimate(tin);
    const double per_param_states = double(ft.component("optimizer")) / double(ft.trainable_params);
    CHECK(double(tv.component("optimizer") - ft.component("optimizer")) ==
          doctest::Approx(per_param_states * vision).epsilon(0.001));
    // ... but not under LoRA, where the tower stays frozen whatever the flag says
    emit(vl, "training.freeze_vision_tower", false);
    CHECK_FALSE(from_facts(vl).model.vision_trainable);
}

// est36: torch DDP (gradient_as_bucket_view false) keeps a flat bucket copy of every trainable gradient
// in every phase; FSDP NO_SHARD (an FSDP API named), bucket views, one device, ZeRO and Megatron do not.
TEST_CASE("DDP's bucket copy of the gradients: unsharded HF / LitGPT data parallelism only") {
    auto of = [](const char* fw, std::int64_t world, int zero, int fsdp_version, bool view) {
        fact_store f = job8b(fw, "full", world);
        emit(f, "training.load_dtype", "bfloat16");
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "activation_checkpoint.mode", "full");
        emit(f, "parallelism.zero_stage", std::int64_t(zero));
        if (fsdp_version) emit(f, "parallelism.fsdp_version", std::int64_t(fsdp_version));
        if (view) emit(f, "parallelism.ddp_bucket_view", true);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_tuple(in.ddp_grad_copy, b.stages[0].temp_forward, b.stages[0].grads, b.stages[0].temp_step);
    };
    const auto ddp = of("hf_trainer", 2, 0, 0, false);
    const auto noshard = of("hf_trainer", 2, 0, 1, false);
    const auto view = of("hf_trainer", 2, 0, 0, true);
    const auto single = of("hf_trainer", 1, 0, 0, false);
    CHECK(std::get<0>(ddp));
    CHECK_FALSE(std::get<0>(noshard));
    CHECK_FALSE(std::get<0>(view));
    CHECK_FALSE(std::get<0>(single));
    CHECK_FALSE(std::get<0>(of("hf_trainer", 2, 3, 0, false)));
    CHECK_FALSE(std::get<0>(of("megatron", 2, 0, 0, false)));
    CHECK(std::get<0>(of("litgpt", 8, 0, 0, false)));
    // the copy is the gradients' size, live in forward and at the step
    CHECK(std::get<1>(ddp) - std::get<1>(noshard) == doctest::Approx(std::get<2>(ddp)));
    CHECK(std::get<3>(ddp) - std::get<3>(noshard) == doctest::Approx(std::get<2>(ddp)));
    CHECK(std::get<2>(ddp) > 1e9);
    CHECK(std::get<1>(view) == doctest::Approx(std::get<1>(noshard)));
}

// est38: a model given by its family and dimensions only (a held-out file's `models:`, a job config, a
// --set) keeps the family's MLP shape: GPT-NeoX, Phi, Falcon, BLOOM, GPT-J and StarCoder2 presets carry a
// 2-matrix GELU MLP (parsers/config/model_dims.cpp), so the estimate must not assume SwiGLU for them.
TEST_CASE("family without model.gated_mlp: the presets' non-gated families keep a 2-matrix MLP") {
    auto gated = [](const char* family, const bool* stated) {
        fact_store f;
        emit(f, "model.family", family);
        emit(f, "model.hidden_size", std::int64_t(4096));
        emit(f, "model.num_layers", std::int64_t(16));
        emit(f, "model.num_attention_heads", std::int64_t(32));
        emit(f, "model.intermediate_size", std::int64_t(16384));
        emit(f, "model.vocab_size", std::int64_t(50688));
        if (stated) emit(f, "model.gated_mlp", *stated);
        return from_facts(f).model.gated;
    };
    for (const char* fam : {"gpt_neox", "phi", "falcon", "bloom", "gptj", "starcoder2", "gpt2", "opt", "bert", "gpt", "arcee"})
        CHECK_FALSE(gated(fam, nullptr));
    for (const char* fam : {"llama", "qwen2", "mistral", "gemma", "stablelm"}) CHECK(gated(fam, nullptr));
    const bool yes = true;
    CHECK(gated("gpt", &yes));  // a stated fact wins (Megatron's swiglu GPT)
}

TEST_CASE("verl: offload between phases keeps the states for the update; a token budget's low end is one sequence (est40)") {
    fact_store f = job8b("verl", "full", 8);
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    emit(f, "parallelism.offload_params", "cpu");
    emit(f, "optimizer.offload", "cpu");
    emit(f, "training.seq_len", std::int64_t(4096));
    emit(f, "training.dynamic_batch", true);
    emit(f, "training.max_tokens_per_device", std::int64_t(16384));
    const estimate_result host = estimate(from_facts(f));  // states on the host through the step
    CHECK(host.component("optimizer") == 0);
    emit(f, "framework.offload_between_phases", true);
    const estimate_input in = from_facts(f);
    CHECK_FALSE(in.optimizer_offload);
    CHECK_FALSE(in.params_offload);
    CHECK(in.dynamic_budget);
    CHECK(in.micro_batch == 4);
    const estimate_result r = estimate(in);
    CHECK(r.component("optimizer") > 0);
    CHECK(r.component("params") > 0);
    CHECK(r.peak_bytes > host.peak_bytes);
    // the low end: one 4096-token sequence instead of four
    estimate_input one = in;
    one.micro_batch = 1;
    CHECK(r.low_bytes == estimate(one).device_peak_bytes);
    CHECK(r.low_bytes < r.device_peak_bytes);
}

// verl's actor takes log-probs from the model's bf16 logits with a fused cross-entropy: 4 B per token x vocab element, 10 B
// when the update also takes the entropy (entropy_coeff != 0; every update before 2025-04-17), not the HF loss's 12-14 B
TEST_CASE("verl: log-probs from the 16-bit logits, the entropy only where the update takes it") {
    auto job = [](const char* date, double coeff, bool with_coeff) {
        fact_store f = job8b("verl", "full", 8);
        emit(f, "framework.hf_model", true);
        emit(f, "framework.fused_logprob_loss", true);
        emit(f, "parallelism.zero_stage", std::int64_t(3));
        emit(f, "training.seq_len", std::int64_t(1536));
        emit(f, "training.local_batch_size", std::int64_t(8));
        if (with_coeff) emit(f, "training.entropy_coeff", coeff);
        if (date) emit(f, "job.framework_date", date);
        return from_facts(f);
    };
    const estimate_input now = job("2025-09-01", 0.0, true), bonus = job("2025-09-01", 0.001, true),
                         old = job("2025-03-01", 0.0, true), undated = job(nullptr, 0.0, true);
    CHECK(now.rl_entropy == 0);
    CHECK(bonus.rl_entropy == 1);
    CHECK(old.rl_entropy == -1);
    CHECK(undated.rl_entropy == -1);
    const estimate_result rn = estimate(now), rb = estimate(bonus), ru = estimate(undated);
    const double elements = 8.0 * 1536.0 * double(now.model.vocab);
    CHECK(double(rn.component("logits")) == doctest::Approx(4.0 * elements).epsilon(0.02));
    CHECK(double(rb.component("logits")) == doctest::Approx(10.0 * elements).epsilon(0.02));
    // undated: the point is today's build, the high end takes the entropy and says why
    CHECK(ru.device_peak_bytes == rn.device_peak_bytes);
    CHECK(ru.high_bytes >= rb.device_peak_bytes);
    CHECK(says(ru, "verl builds before 2025-04-17"));
    CHECK_FALSE(says(rn, "verl builds before 2025-04-17"));
    // the fused kernels (chunked loss) leave no logits term; a job without the feature keeps the HF loss's figure
    fact_store fused = job8b("verl", "full", 8);
    emit(fused, "framework.fused_logprob_loss", true);
    emit(fused, "training.chunked_loss", true);
    CHECK_FALSE(from_facts(fused).fused_logprob_loss);
    fact_store hf = job8b("hf_trainer", "full", 8);
    emit(hf, "framework.hf_model", true);
    emit(hf, "parallelism.zero_stage", std::int64_t(3));
    emit(hf, "training.seq_len", std::int64_t(1536));
    emit(hf, "training.local_batch_size", std::int64_t(8));
    CHECK(estimate(from_facts(hf)).component("logits") > rb.component("logits"));
}

// est41: accelerate's fsdp2_prepare_model ran model.to(torch.float32) under mixed precision until 1.13 (d1c96ba9,
// 2025-11-26), which then upcast only trainable parameters: a LoRA job's frozen bf16 weights were fp32 shards
TEST_CASE("accelerate FSDP2 LoRA: frozen weights stored as fp32 shards before accelerate 1.13, an interval when undated (est41)") {
    auto job = [](const char* date) { return from_facts(fsdp2_lora8b("hf_trainer", date)); };
    const estimate_input old_in = job("2025-11-07"), new_in = job("2026-01-15"), undated = job(nullptr);
    CHECK(old_in.accelerate_fsdp2_mp);
    const estimate_result old_r = estimate(old_in), new_r = estimate(new_in), und = estimate(undated);
    // 8.03 B frozen parameters over 2 ranks: 2 B more per parameter and rank in fp32
    CHECK(old_r.component("params") - new_r.component("params") == doctest::Approx(8.03e9).epsilon(0.02));
    CHECK(und.device_peak_bytes == new_r.device_peak_bytes);
    CHECK(und.high_bytes >= old_r.device_peak_bytes);
    // FSDP1, DeepSpeed and pure bf16 are not this path
    fact_store f1 = job8b("hf_trainer", "lora", 2);
    emit(f1, "framework.hf_model", true);
    emit(f1, "parallelism.zero_stage", std::int64_t(3));
    CHECK_FALSE(from_facts(f1).accelerate_fsdp2_mp);
}

// est70: the same upcast reaches a bitsandbytes 4-bit base. Module.to converts floating-point parameters only: the
// embedding, head and norms (bf16 -> fp32), and the packed NF4 weights when they are packed into a 16-bit storage
// dtype (axolotl's QLoRA loader sets bnb_4bit_quant_storage=bf16), each 0.5 B a parameter becoming 1 B.
TEST_CASE("accelerate FSDP2 QLoRA: the unquantized rest, and bf16-packed NF4 weights, stored as fp32 shards before 1.13 (est70)") {
    auto job = [](const char* fw, const char* date) {
        fact_store f = fsdp2_lora8b(fw, date);
        emit(f, "training.quantization_bit", std::int64_t(4));
        emit(f, "training.quantization_method", "bitsandbytes");
        return from_facts(f);
    };
    const estimate_input ax_old = job("axolotl", "2025-04-15"), ax_new = job("axolotl", "2026-01-15");
    const estimate_input hf_old = job("hf_trainer", "2025-04-15"), hf_new = job("hf_trainer", "2026-01-15");
    CHECK(ax_old.accelerate_fsdp2_mp);
    CHECK(ax_old.ft.quant_storage_bytes == 2);
    CHECK(hf_old.ft.quant_storage_bytes == 1);
    const double ax_gain = estimate(ax_old).component("params") - estimate(ax_new).component("params");
    const double hf_gain = estimate(hf_old).component("params") - estimate(hf_new).component("params");
    // Llama 3 8B: 32 x 218.1 M = 6.98 B linear weights, 2 x 525.3 M embedding + head (+ norms) = 1.05 B rest,
    // over 2 ranks. uint8 storage: the rest only, 2 B more a parameter: 1.05 B x 2 / 2 = 1.05 GB.
    CHECK(hf_gain == doctest::Approx(1.05e9).epsilon(0.02));
    // bf16 storage: + the packed weights, 0.5 B more a parameter: 6.98 B x 0.5 / 2 = 1.745 GB; 2.80 GB in all
    CHECK(ax_gain == doctest::Approx(1.05e9 + 1.745e9).epsilon(0.02));
    // GPTQ is not a bitsandbytes base: no upcast path
    fact_store g = job8b("axolotl", "lora", 2);
    emit(g, "framework.hf_model", true);
    emit(g, "training.quantization_bit", std::int64_t(4));
    emit(g, "training.quantization_method", "gptq");
    emit(g, "parallelism.zero_stage", std::int64_t(3));
    emit(g, "parallelism.fsdp_version", std::int64_t(2));
    CHECK_FALSE(from_facts(g).accelerate_fsdp2_mp);
}

TEST_CASE("torchtune without its config file: a named shipped config gives its settings, an unknown one an interval over checkpointing (est42)") {
    auto run = [](std::vector<std::string> sets) { return torchtune_preflight("llama3-8b", std::move(sets)); };
    const auto has_reason = [](const estimate_result& e) { return says(e, "torchtune config not known"); };
    // `tune run lora_finetune_single_device --config llama3_1/8B_qlora_single_device`: the config turns
    // checkpointing on (every tag from v0.2.1), batch 2, QLoRA on every linear; a key the job sets itself wins
    const preflight_result named = run({"job.recipe_config=llama3_1/8B_qlora_single_device", "training.seq_len=2048",
                                        "training.local_batch_size=1"});
    CHECK(named.input.ac == ac_kind::full);
    CHECK(named.input.ft.base_bits == 4);
    CHECK(named.input.micro_batch == 1);
    const fact* ac = named.facts.get("activation_checkpoint.mode");
    REQUIRE(ac != nullptr);
    CHECK(ac->prov.producer == "config.torchtune.shipped_config");
    CHECK_FALSE(named.input.ac_unknown);
    CHECK_FALSE(has_reason(named.estimate));
    // a path to the shipped file names the same config
    const preflight_result by_path = run({"job.recipe_config=recipes/configs/llama3_1/8B_qlora_single_device.yaml",
                                          "training.seq_len=2048", "training.local_batch_size=1"});
    CHECK(by_path.estimate.device_peak_bytes == named.estimate.device_peak_bytes);
    // the small models' configs leave it off
    CHECK(run({"job.recipe_config=llama3_2/1B_lora_single_device", "training.seq_len=2048"}).input.ac == ac_kind::none);
    // an unknown config: the point is the recipe's default (no checkpointing), the low end has it on
    const std::vector<std::string> lora = {"training.finetuning_type=lora", "training.seq_len=4096", "training.local_batch_size=1"};
    std::vector<std::string> unknown = lora;
    unknown.push_back("job.recipe_config=my_configs/custom_lora");
    const preflight_result u = run(unknown);
    CHECK(u.input.ac == ac_kind::none);
    CHECK(u.input.ac_unknown);
    CHECK(has_reason(u.estimate));
    std::vector<std::string> with_ac = lora;
    with_ac.push_back("activation_checkpoint.mode=full");
    const preflight_result on = run(with_ac);
    CHECK_FALSE(on.input.ac_unknown);
    CHECK(u.estimate.low_bytes == on.estimate.device_peak_bytes);
    CHECK(u.estimate.low_bytes < u.estimate.device_peak_bytes);
    // no config named at all: the same interval; a checkpointing setting given by the job removes it
    CHECK(has_reason(run(lora).estimate));
    CHECK_FALSE(has_reason(on.estimate));
}

TEST_CASE("torchtune builds of 2024-03-30 .. 2024-08-15 cut samples at the dataset's max_seq_len, 512 by default: a longer stated length without the config read gets a low end at 512 (est46)") {
    auto run = [](std::vector<std::string> sets) { return torchtune_preflight("llama2-7b", std::move(sets)); };
    const auto has_reason = [](const estimate_result& e) { return says(e, "dataset builder's max_seq_len"); };
    const std::vector<std::string> job = {"training.finetuning_type=lora", "training.local_batch_size=4",
                                          "activation_checkpoint.mode=full", "training.seq_len=2048"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> v = job;
        v.insert(v.end(), extra.begin(), extra.end());
        return run(v);
    };
    // inside the window: the point keeps the stated length, the low end is the same job at 512 tokens
    const preflight_result in_window = with({"job.framework_date=2024-05-09"});
    CHECK(in_window.input.seq_len == 2048);
    CHECK(in_window.input.tt_dataset_cap == 512);
    CHECK(has_reason(in_window.estimate));
    const preflight_result at_cap = run({"training.finetuning_type=lora", "training.local_batch_size=4",
                                         "activation_checkpoint.mode=full", "training.seq_len=512",
                                         "job.framework_date=2024-05-09"});
    CHECK_FALSE(has_reason(at_cap.estimate));
    CHECK(in_window.estimate.low_bytes <= at_cap.estimate.device_peak_bytes);
    CHECK(in_window.estimate.low_bytes < in_window.estimate.device_peak_bytes);
    CHECK(in_window.estimate.device_peak_bytes > at_cap.estimate.device_peak_bytes);
    // both sides of each date, undated, fixed-length inputs and packing: no cap
    CHECK(has_reason(with({"job.framework_date=2024-03-30"}).estimate));
    CHECK_FALSE(has_reason(with({"job.framework_date=2024-03-29"}).estimate));
    CHECK(has_reason(with({"job.framework_date=2024-08-14"}).estimate));
    CHECK_FALSE(has_reason(with({"job.framework_date=2024-08-15"}).estimate));
    CHECK_FALSE(has_reason(run(job).estimate));
    CHECK_FALSE(has_reason(with({"job.framework_date=2024-05-09", "training.fixed_length=true"}).estimate));
    CHECK_FALSE(has_reason(with({"job.framework_date=2024-05-09", "training.packing=true"}).estimate));
    // the point does not move (the day before the window: the same side of torchtune's other dated changes)
    CHECK(in_window.estimate.device_peak_bytes == with({"job.framework_date=2024-03-29"}).estimate.device_peak_bytes);
}

// est43: a parallel attention + MLP block reads the layer input x in both branches. GPT-NeoX normalises it
// twice (two norms over the same tensor, kept once); GPT-J, Phi and Falcon-7B share one norm, whose output is
// the QKV and the MLP input at once. A sequential block of the same shapes keeps both norm inputs and both
// linear inputs; Falcon-RW (multi-head, sequential) and Llama-style families are not touched.
TEST_CASE("parallel attention + MLP blocks keep the shared layer input and norm output once (est43)") {
    const double h = 2560.0;
    auto saved = [&](const char* family, std::int64_t kv, const char* ftype) {
        fact_store f;
        emit(f, "model.family", family);
        emit(f, "model.hidden_size", std::int64_t(2560));
        emit(f, "model.num_layers", std::int64_t(32));
        emit(f, "model.num_attention_heads", std::int64_t(32));
        emit(f, "model.num_kv_heads", kv);
        emit(f, "model.intermediate_size", std::int64_t(10240));
        emit(f, "model.vocab_size", std::int64_t(51200));
        emit(f, "model.gated_mlp", false);
        emit(f, "model.dropout", 0.0);
        emit(f, "model.norm_upcast", false);
        emit(f, "job.framework", "litgpt");
        emit(f, "job.world_size", std::int64_t(1));
        emit(f, "training.finetuning_type", ftype);
        emit(f, "activation_checkpoint.mode", "none");
        const estimate_input in = from_facts(f);
        return std::make_pair(est::layer_activation(in, false).saved, in.model);
    };
    for (const char* ft : {"lora", "full"}) {
        const double seq = saved("gpt2", 32, ft).first;
        CHECK(saved("phi", 32, ft).first == doctest::Approx(seq - 4.0 * h));        // one norm input, one shared output
        CHECK(saved("gptj", 32, ft).first == doctest::Approx(seq - 4.0 * h));
        // Falcon-7B: multi-query, one norm; 40B / 180B: ln_attn and ln_mlp over the same x
        CHECK(saved("falcon", 1, ft).first == doctest::Approx(saved("gpt2", 1, ft).first - 4.0 * h));
        CHECK(saved("falcon", 8, ft).first == doctest::Approx(saved("gpt2", 8, ft).first - 2.0 * h));
        CHECK(saved("gpt_neox", 32, ft).first == doctest::Approx(seq - 2.0 * h));   // two norms of the same x
        CHECK(saved("falcon", 32, ft).first == doctest::Approx(seq));               // Falcon-RW: sequential
    }
    CHECK(saved("phi", 32, "full").second.norms_per_layer == 1);
    CHECK(saved("gpt_neox", 32, "full").second.norms_per_layer == 2);
    CHECK(saved("llama", 32, "full").second.parallel_block == 0);
}

// est43: axolotl before 2023-09-01 (no flash_attention) leaves every parameter PEFT's kbit preparation cast to
// fp32 there: norms (est42) and the embedding and head too. From that date, or for a full fine-tune, or in the
// interval's low end (the flash_attention branch that cast them back), they keep the load dtype.
TEST_CASE("axolotl before 2023-09-01: kbit preparation leaves the embedding and head fp32 (est43)") {
    auto frozen_of = [](const char* ftype, const char* date, int variant) {
        fact_store f = job8b("axolotl", ftype, 1);
        emit(f, "training.seq_len", std::int64_t(2048));
        emit(f, "training.quantization_bit", std::int64_t(4));
        emit(f, "training.quantization_method", "bitsandbytes");
        emit(f, "job.framework_date", date);
        estimate_input in = from_facts(f);
        in.variant = variant;
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(b.stages[0].frozen, in.ft.fp32_frozen_rest);
    };
    // Llama 3 8B: embedding and head 2 x 128256 x 4096, norms 65 x 4096; 2 B more each
    const double rest = 2.0 * 128256.0 * 4096.0 + 65.0 * 4096.0;
    const auto before = frozen_of("lora", "2023-08-03", 0), after = frozen_of("lora", "2023-09-02", 0);
    CHECK(before.second);
    CHECK_FALSE(after.second);
    CHECK(before.first - after.first == doctest::Approx(2.0 * rest).epsilon(1e-6));
    CHECK(frozen_of("lora", "2023-08-03", -1).first == doctest::Approx(after.first));  // low end
}

TEST_CASE("preference training's reference model (est44): full DPO adds a frozen copy, LoRA DPO and SFT do not") {
    // Llama 3 8B (8,030,261,248 parameters), LLaMA-Factory full fine-tuning on one device: `stage: dpo` keeps
    // a bf16 reference copy (16.06 GB) beside the policy, and its no-grad forward's logits over chosen + rejected
    fact_store sft = job8b("llama_factory", "full", 1);
    fact_store dpo = sft;
    emit(dpo, "training.stage", "dpo");
    const estimate_input sin = from_facts(sft), din = from_facts(dpo);
    CHECK(sin.reference_bytes == 0);
    CHECK(din.reference_bytes == 2);
    bool said = false;
    for (const auto& a : din.assumptions) said = said || a.find("reference copy") != std::string::npos;
    CHECK(said);
    est::breakdown sb, db;
    est::compute(sin, sb);
    est::compute(din, db);
    const double n = double(estimate(sin).param_count);
    CHECK(db.stages[0].reference == doctest::Approx(2.0 * n).epsilon(0.001));
    CHECK(sb.stages[0].reference == 0.0);
    // logits of the reference forward: 2 x micro-batch x seq tokens x vocab x 2 B, at the loss only (est45: the
    // policy's tokens count chosen + rejected already)
    CHECK(db.tokens == doctest::Approx(2.0 * sb.tokens));
    CHECK(db.stages[0].ref_logits == doctest::Approx(db.tokens * double(din.model.vocab) * 2.0));
    {
        // against SFT at twice the micro-batch (the same policy tokens), the loss phase differs by the reference
        fact_store sft2 = sft;
        emit(sft2, "training.local_batch_size", std::int64_t(2 * din.micro_batch));
        est::breakdown s2b;
        est::compute(from_facts(sft2), s2b);
        CHECK(s2b.tokens == doctest::Approx(db.tokens));
        CHECK(db.stages[0].phase_loss - s2b.stages[0].phase_loss ==
              doctest::Approx(db.stages[0].reference + db.stages[0].ref_logits).epsilon(1e-6));
    }
    CHECK(db.stages[0].phase_step - sb.stages[0].phase_step == doctest::Approx(db.stages[0].reference).epsilon(1e-6));
    const estimate_result sr = estimate(sin), dr = estimate(din);
    CHECK(dr.component("reference") > 0);
    CHECK(sr.component("reference") == 0);
    CHECK(dr.component("optimizer") == sr.component("optimizer"));
    CHECK(dr.component("grads") == sr.component("grads"));
    CHECK(dr.peak_bytes > sr.peak_bytes + std::int64_t(2.0 * n * 0.999));
    // KTO keeps one too; ORPO / SimPO (pref_loss) and precomputed log-probabilities do not
    fact_store kto = sft;
    emit(kto, "training.stage", "kto");
    CHECK(from_facts(kto).reference_bytes == 2);
    fact_store orpo = dpo;
    emit(orpo, "training.pref_loss", "orpo");
    CHECK(from_facts(orpo).reference_bytes == 0);
    fact_store pre = dpo;
    emit(pre, "training.precompute_ref_log_probs", true);
    CHECK(from_facts(pre).reference_bytes == 0);
    // LoRA DPO: the base with the adapter disabled is the reference, no copy; over the same policy tokens (est45:
    // SFT at twice the micro-batch of pairs) the estimate is LoRA SFT's plus the reference forward's logits (est48),
    // bf16 here, at the loss; none when the reference log-probabilities are precomputed
    fact_store lora_sft = job8b("llama_factory", "lora", 1), lora_dpo = lora_sft;
    emit(lora_dpo, "training.stage", "dpo");
    emit(lora_dpo, "training.local_batch_size", std::int64_t(2));
    emit(lora_sft, "training.local_batch_size", std::int64_t(4));
    CHECK(from_facts(lora_dpo).reference_bytes == 0);
    CHECK(from_facts(lora_dpo).reference_logit_bytes == 2);
    CHECK(from_facts(lora_sft).reference_logit_bytes == 0);
    {
        est::breakdown lb;
        est::compute(from_facts(lora_dpo), lb);
        const double ref_logits = lb.stages[0].ref_logits;
        CHECK(ref_logits == doctest::Approx(lb.tokens * 128256.0 * 2.0).epsilon(1e-9));  // the policy's tokens x vocab x 2 B
        est::breakdown sftb;
        est::compute(from_facts(lora_sft), sftb);
        CHECK(lb.tokens == doctest::Approx(sftb.tokens));  // 2 pairs x 2 sequences = the SFT batch of 4
        CHECK(estimate(from_facts(lora_dpo)).peak_bytes ==
              doctest::Approx(double(estimate(from_facts(lora_sft)).peak_bytes) + ref_logits).epsilon(0.002));
        CHECK(estimate(from_facts(lora_dpo)).component("reference") == doctest::Approx(ref_logits).epsilon(1e-6));
    }
    fact_store lora_pre = lora_dpo;
    emit(lora_pre, "training.precompute_ref_log_probs", true);
    CHECK(from_facts(lora_pre).reference_logit_bytes == 0);
    CHECK(estimate(from_facts(lora_pre)).peak_bytes == estimate(from_facts(lora_sft)).peak_bytes);
    fact_store lora_orpo = lora_dpo;
    emit(lora_orpo, "training.pref_loss", "orpo");
    CHECK(from_facts(lora_orpo).reference_logit_bytes == 0);
    // LLaMA-Factory freeze tuning keeps a copy (create_ref_model drops it only for lora)
    fact_store freeze = job8b("llama_factory", "freeze", 1);
    emit(freeze, "training.stage", "dpo");
    CHECK(from_facts(freeze).reference_bytes == 2);
    // ZeRO-3 over 8 ranks: TRL's prepare_deepspeed keeps stage 3 for the reference, so it is sharded like the policy
    fact_store z3 = job8b("hf_trainer", "full", 8);
    emit(z3, "training.stage", "dpo");
    emit(z3, "parallelism.zero_stage", std::int64_t(3));
    emit(z3, "training.load_dtype", "bfloat16");
    const estimate_input zin = from_facts(z3);
    CHECK(zin.reference_bytes == 2);
    est::breakdown zb;
    est::compute(zin, zb);
    CHECK(zb.stages[0].reference == doctest::Approx(2.0 * n / 8.0).epsilon(0.001));
    // ZeRO-2: set to stage 0 for the reference, whole on every rank
    emit(z3, "parallelism.zero_stage", std::int64_t(2));
    est::breakdown z2;
    est::compute(from_facts(z3), z2);
    CHECK(z2.stages[0].reference == doctest::Approx(2.0 * n).epsilon(0.001));
    // a log that names a DPO / KTO trainer stands in where no config states the stage
    fact_store logged = job8b("hf_trainer", "full", 1);
    emit(logged, "log.reference_trainer_reported", true);
    CHECK(from_facts(logged).reference_bytes > 0);
    emit(logged, "training.stage", "sft");
    CHECK(from_facts(logged).reference_bytes == 0);
}

TEST_CASE("preference training's policy batch (est45): pairwise losses run the policy over chosen + rejected, KTO and SFT do not") {
    // LLaMA-Factory LoRA on Llama 3 8B, 2 pairs per device: DPO (any pref_loss, ORPO included) concatenates chosen and
    // rejected, 4 sequences through the policy; KTO runs its 2 examples (the KL batch without gradients)
    fact_store sft = job8b("llama_factory", "lora", 1);
    emit(sft, "training.local_batch_size", std::int64_t(2));
    emit(sft, "training.seq_len", std::int64_t(1024));
    const auto with = [&](const fact_store& base, const char* key, const char* v) {
        fact_store f = base;
        emit(f, key, v);
        return f;
    };
    const fact_store dpo = with(sft, "training.stage", "dpo"), kto = with(sft, "training.stage", "kto"),
                     orpo = with(dpo, "training.pref_loss", "orpo"), simpo = with(sft, "training.stage", "simpo"),
                     rm = with(sft, "training.stage", "rm");
    CHECK(from_facts(sft).policy_seqs_per_sample == 1);
    CHECK(from_facts(dpo).policy_seqs_per_sample == 2);
    CHECK(from_facts(orpo).policy_seqs_per_sample == 2);
    CHECK(from_facts(simpo).policy_seqs_per_sample == 2);
    CHECK(from_facts(kto).policy_seqs_per_sample == 1);
    CHECK(from_facts(rm).policy_seqs_per_sample == 1);
    bool said = false;
    for (const auto& a : from_facts(dpo).assumptions) said = said || a.find("chosen and rejected sequences concatenated") != std::string::npos;
    CHECK(said);
    for (const auto& a : from_facts(kto).assumptions) CHECK(a.find("concatenated") == std::string::npos);
    est::breakdown sb, db, kb;
    est::compute(from_facts(sft), sb);
    est::compute(from_facts(dpo), db);
    est::compute(from_facts(kto), kb);
    CHECK(sb.tokens == doctest::Approx(2.0 * 1024.0));
    CHECK(db.tokens == doctest::Approx(4.0 * 1024.0));
    CHECK(kb.tokens == doctest::Approx(sb.tokens));
    // activations and logits scale with the policy's tokens
    CHECK(db.stages[0].activations == doctest::Approx(2.0 * sb.stages[0].activations).epsilon(1e-9));
    CHECK(db.stages[0].logits == doctest::Approx(2.0 * sb.stages[0].logits).epsilon(1e-9));
    CHECK(kb.stages[0].activations == doctest::Approx(sb.stages[0].activations).epsilon(1e-9));
    const estimate_result sr = estimate(from_facts(sft)), dr = estimate(from_facts(dpo)), kr = estimate(from_facts(kto));
    CHECK(dr.peak_bytes > sr.peak_bytes);
    // LoRA KTO: no reference copy, the same policy batch; only the reference forward's logits (est48: the micro-batch
    // and its KL batch, as est44 counts them for a copy) at the loss
    CHECK(kr.peak_bytes > sr.peak_bytes);
    CHECK(kr.component("reference") == doctest::Approx(double(kr.peak_bytes - sr.peak_bytes)).epsilon(0.01));
    // the micro-batch of pairs stays what the config says (plans and limits count pairs)
    CHECK(from_facts(dpo).micro_batch == 2);
}

TEST_CASE("OpenRLHF's DPO reference (est45): a copy with LoRA too, on the host with --ref_offload at ZeRO-3 only") {
    fact_store f = job8b("openrlhf", "lora", 8);
    emit(f, "training.stage", "dpo");
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    const estimate_input in = from_facts(f);
    CHECK(in.reference_bytes == 2);  // train_dpo.py builds the reference as a second Actor without LoRA
    CHECK_FALSE(in.reference_offload);
    est::breakdown b;
    est::compute(in, b);
    const double n = double(estimate(in).param_count);
    CHECK(b.stages[0].reference == doctest::Approx(2.0 * n / 8.0).epsilon(0.001));
    // --ref_offload at ZeRO-3: the reference's partitions on the host
    emit(f, "training.reference_offload", true);
    const estimate_input off = from_facts(f);
    CHECK(off.reference_offload);
    est::breakdown ob;
    est::compute(off, ob);
    CHECK(ob.stages[0].reference == 0.0);
    CHECK(estimate(off).peak_bytes < estimate(in).peak_bytes);
    // ZeRO-2: the reference is stage 0, where DeepSpeed offloads no parameters: whole on every rank
    emit(f, "parallelism.zero_stage", std::int64_t(2));
    const estimate_input z2 = from_facts(f);
    CHECK_FALSE(z2.reference_offload);
    est::breakdown zb;
    est::compute(z2, zb);
    CHECK(zb.stages[0].reference == doctest::Approx(2.0 * n).epsilon(0.001));
    // the same LoRA job elsewhere (LLaMA-Factory) keeps none
    fact_store lf = job8b("llama_factory", "lora", 8);
    emit(lf, "training.stage", "dpo");
    CHECK(from_facts(lf).reference_bytes == 0);
}

// est49: DeepSpeed ZeRO-3 (contiguous_gradients, its default) keeps one reduce bucket of reduce_bucket_size
// elements in the gradient dtype on the device for the run, offload or not: DeepSpeed's 5e8 when unset, hidden x
// hidden under an HF Trainer stack ("auto"), a stated size wins; FSDP and ZeRO-1/2 take no such term.
TEST_CASE("DeepSpeed ZeRO-3's reduce bucket: default, HF auto, stated, and not for FSDP") {
    auto of = [](const char* fw, bool ds, int zero, std::int64_t stated, bool offload) {
        fact_store f = job8b(fw, "full", 8);
        emit(f, "framework.hf_model", true);
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "activation_checkpoint.mode", "full");
        emit(f, "training.mixed_precision_param", "bfloat16");
        emit(f, "parallelism.zero_stage", std::int64_t(zero));
        if (ds) emit(f, "job.runs_deepspeed", true);
        if (stated >= 0) emit(f, "parallelism.reduce_bucket_size", stated);
        if (offload) {
            emit(f, "parallelism.offload_params", "cpu");
            emit(f, "optimizer.offload", "cpu");
        }
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in.ds_ipg_bucket_elements, b.stages[0].temp_forward);
    };
    CHECK(of("deepspeed", true, 3, -1, false).first == doctest::Approx(5e8));
    CHECK(of("hf_trainer", true, 3, -1, false).first == doctest::Approx(4096.0 * 4096.0));
    CHECK(of("deepspeed", true, 3, 200000000, false).first == doctest::Approx(2e8));
    CHECK(of("deepspeed", true, 3, -1, true).first == doctest::Approx(5e8));  // offload keeps it on the device
    CHECK(of("hf_trainer", false, 3, -1, false).first == 0.0);               // FSDP
    CHECK(of("deepspeed", true, 2, -1, false).first == 0.0);                 // ZeRO-2 has its own bucket term
    // the bucket is live in forward, 2 B per element (bf16 gradients)
    CHECK(of("deepspeed", true, 3, -1, false).second - of("deepspeed", true, 3, 0, false).second ==
          doctest::Approx(5e8 * 2.0));
}

// rev32: the temporaries row names the ZeRO stage the job runs (a ZeRO-2 job read "ZeRO-3's reduce bucket").
TEST_CASE("the reduce bucket's text names the job's ZeRO stage (rev32)") {
    auto temporaries = [](int zero) {
        fact_store f = job8b("deepspeed", "full", 8);
        emit(f, "parallelism.zero_stage", std::int64_t(zero));
        emit(f, "job.runs_deepspeed", true);
        emit(f, "parallelism.reduce_bucket_size", std::int64_t(200000000));
        for (const auto& c : estimate(from_facts(f)).components)
            if (c.id == "temporaries") return c.formula;
        return std::string();
    };
    CHECK(temporaries(2).find("DeepSpeed ZeRO-2's reduce bucket") != std::string::npos);
    CHECK(temporaries(1).find("DeepSpeed ZeRO-1's reduce bucket") != std::string::npos);
    CHECK(temporaries(3).find("DeepSpeed ZeRO-3's reduce bucket") != std::string::npos);
}

TEST_CASE("an unstated LoRA rank and target cite the job's own framework's default, not LLaMA-Factory's (rev23)") {
    auto cites = [](const preflight_result& r, std::string_view part) {
        for (const auto& a : r.input.assumptions)
            if (a.find(part) != std::string::npos) return true;
        return false;
    };
    const preflight_result tt = torchtune_preflight("llama3-8b", {"training.finetuning_type=lora", "training.seq_len=2048",
                                                                  "training.local_batch_size=1"});
    CHECK(tt.input.ft.lora_rank == 8);
    CHECK(cites(tt, "torchtune LoRA builders' default lora_rank"));
    CHECK(cites(tt, "lora_attn_modules"));
    CHECK_FALSE(cites(tt, "LLaMA-Factory"));
}

TEST_CASE("bitsandbytes 0.43.2 stopped the 4-bit linear keeping its input: the version, else the date, else an interval (est53)") {
    auto qlora = [](const char* version, const char* date) {
        fact_store f = job8b("llama_factory", "qlora", 1);
        emit(f, "activation_checkpoint.mode", "none");
        emit(f, "training.seq_len", std::int64_t(1024));
        emit(f, "training.local_batch_size", std::int64_t(1));
        if (version) emit(f, "job.bitsandbytes_version", version);
        if (date) emit(f, "job.framework_date", date);
        return from_facts(f);
    };
    const estimate_input before = qlora("0.43.1", nullptr), after = qlora("0.43.2", nullptr), later = qlora("0.45.0", nullptr);
    CHECK(before.ft.bnb4_keeps_input_side == 1);
    CHECK(after.ft.bnb4_keeps_input_side == -1);
    CHECK(later.ft.bnb4_keeps_input_side == -1);
    CHECK(qlora(nullptr, "2024-05-01").ft.bnb4_keeps_input_side == 1);
    CHECK(qlora(nullptr, "2024-08-01").ft.bnb4_keeps_input_side == -1);
    CHECK(qlora("0.43.1", "2024-08-01").ft.bnb4_keeps_input_side == 1);  // the stated version wins
    const estimate_input unknown = qlora(nullptr, nullptr);
    CHECK(unknown.ft.bnb4_keeps_input_side == 0);
    est::breakdown bb, ba;
    est::compute(before, bb);
    est::compute(after, ba);
    CHECK(bb.stages[0].activations > ba.stages[0].activations);
    // unknown: the point keeps the inputs as the older releases do, the low end does not
    const estimate_result r = estimate(unknown), ra = estimate(after);
    CHECK(r.peak_bytes == estimate(before).peak_bytes);
    CHECK(says(r, "bitsandbytes before 0.43.2"));
    CHECK(r.low_bytes < r.device_peak_bytes);
    CHECK(!says(ra, "bitsandbytes before 0.43.2"));
    // LLM.int8 keeps its input in every release
    fact_store i8 = job8b("llama_factory", "lora", 1);
    emit(i8, "training.quantization_bit", std::int64_t(8));
    emit(i8, "job.bitsandbytes_version", "0.45.0");
    CHECK(est::bnb_keeps_input(from_facts(i8)));
}

TEST_CASE("freed gradient blocks the next forward's hidden-state tensors fit in are reused, smaller ones stay cached (est53)") {
    // Llama 3 8B full bf16 training without AC: at 1 x 1024 tokens a hidden-state tensor (8 MiB) fits every weight's
    // gradient block, at 16 x 4096 (512 MiB) none but the embedding's and the head's
    auto job = [](std::int64_t mb, std::int64_t seq) {
        fact_store f = job8b("pytorch", "full", 1);
        emit(f, "framework.hf_model", true);
        emit(f, "activation_checkpoint.mode", "none");
        emit(f, "training.pure_bf16", true);
        emit(f, "training.local_batch_size", mb);
        emit(f, "training.seq_len", seq);
        emit(f, "training.fixed_length", true);
        est::breakdown b;
        est::compute(from_facts(f), b);
        return b.stages[0];
    };
    const auto short_ = job(1, 1024), long_ = job(16, 4096);
    // stranded_loss holds the freed gradients left stranded plus the logits' blocks
    // (the forward reuses at most what it allocates: its activations)
    CHECK(short_.stranded_loss < short_.grads - 0.9 * std::min(short_.activations, short_.grads) + 1024.0 * 128256 * 2 * 1.01);
    CHECK(long_.stranded_loss > 0.5 * long_.grads);
}

TEST_CASE("PEFT modules_to_save trains a copy of the embedding / head beside the frozen original (est54)") {
    // Llama 3 8B LoRA under the HF Trainer, bf16 load: a trainable copy of embed_tokens and lm_head (2 x 128256 x 4096)
    // in bf16 adds its weight, gradient and AdamW moments (2 + 2 + 2 x 2 B per element); the original stays frozen
    auto job = [](const char* save) {
        fact_store f = job8b("hf_trainer", "lora", 1);
        emit(f, "training.load_dtype", "bfloat16");
        emit(f, "training.mixed_precision_param", "bfloat16");
        if (save) emit(f, "training.lora_modules_to_save", save);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in, b.stages[0]);
    };
    const auto [in0, plain] = job(nullptr);
    const auto [in1, both] = job("wte,lm_head");
    const auto [in2, head] = job("[lm_head]");
    const auto [in3, odd] = job("score_head");
    CHECK(in1.ft.save_embed);
    CHECK(in1.ft.save_head);
    CHECK_FALSE(in2.ft.save_embed);
    CHECK(in2.ft.saved_copy_bytes == 2);
    const double vh = 128256.0 * 4096.0;
    CHECK(both.params - plain.params == doctest::Approx(2 * vh * 2).epsilon(1e-6));
    CHECK(both.grads - plain.grads == doctest::Approx(2 * vh * 2).epsilon(1e-6));
    CHECK(both.optimizer + both.paged - plain.optimizer - plain.paged == doctest::Approx(2 * vh * 4).epsilon(1e-6));
    CHECK(both.trainable_rank - plain.trainable_rank == doctest::Approx(2 * vh));
    CHECK(head.grads - plain.grads == doctest::Approx(vh * 2).epsilon(1e-6));
    CHECK(plain.frozen == doctest::Approx(both.frozen));  // the originals stay as they were
    // a name that is neither the embedding nor the head: nothing added, said among the assumptions
    CHECK(odd.params == doctest::Approx(plain.params));
    CHECK(std::any_of(in3.assumptions.begin(), in3.assumptions.end(),
                      [](const std::string& a) { return a.find("modules_to_save 'score_head'") != std::string::npos; }));
    // est58: a tied model still gets one copy per listed module (PEFT does not keep the copies tied by default)
    auto tied = [](const char* save) {
        fact_store f = job8b("hf_trainer", "lora", 1);
        emit(f, "training.load_dtype", "bfloat16");
        emit(f, "training.mixed_precision_param", "bfloat16");
        emit(f, "model.tie_word_embeddings", true);
        if (save) emit(f, "training.lora_modules_to_save", save);
        est::breakdown b;
        est::compute(from_facts(f), b);
        return b.stages[0];
    };
    CHECK(tied("embed_tokens,lm_head").trainable_rank - tied(nullptr).trainable_rank == doctest::Approx(2 * vh));
    CHECK(tied("lm_head").trainable_rank - tied(nullptr).trainable_rank == doctest::Approx(vh));
    // LLaMA-Factory upcasts trainable parameters to fp32: the copy is fp32 there
    fact_store lf = job8b("llama_factory", "lora", 1);
    emit(lf, "training.lora_modules_to_save", "embed_tokens");
    CHECK(from_facts(lf).ft.saved_copy_bytes == 4);
}

TEST_CASE("Qwen (v1) remote code under the DeepSpeed engine: the loss runs on 16-bit logits (est59)") {
    // HF Trainer, Q-LoRA-shaped job on an fp16 base; `deepspeed` adds a ZeRO-2 config (no autocast)
    auto bpe_of = [](const char* family, bool deepspeed, const char* ftype) {
        fact_store f = job8b("hf_trainer", ftype, 1);
        emit(f, "model.family", family);
        emit(f, "training.seq_len", std::int64_t(2048));
        emit(f, "training.load_dtype", "float16");
        emit(f, "training.mixed_precision_param", "float16");
        if (deepspeed) {
            emit(f, "job.deepspeed_config", "ds_config_zero2.json");
            emit(f, "parallelism.zero_stage", std::int64_t(2));
        }
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        return std::make_pair(in.loss_in_model_dtype, b.logits_bpe);
    };
    CHECK(bpe_of("qwen", true, "lora") == std::make_pair(true, 6.0));
    CHECK(bpe_of("qwen", true, "full").first);
    // the other side: the HF Trainer's own AMP autocasts the log-softmax to fp32; Qwen2 and Llama upcast
    CHECK(bpe_of("qwen", false, "lora") == std::make_pair(false, 12.0));
    CHECK_FALSE(bpe_of("qwen2", true, "lora").first);
    CHECK_FALSE(bpe_of("llama", true, "lora").first);
}

TEST_CASE("DeepSpeed ZeRO-2 reduce buffers: reduce_bucket_size elements per buffer, two with overlap_comm (est59)") {
    // a stated bucket of 2e8 fp16 elements; the peak phases carry one buffer, or two with overlap_comm
    auto phases = [](int bucket, int overlap) {
        fact_store f = job8b("hf_trainer", "lora", 1);
        emit(f, "training.seq_len", std::int64_t(2048));
        emit(f, "training.load_dtype", "float16");
        emit(f, "training.mixed_precision_param", "float16");
        emit(f, "job.deepspeed_config", "ds_config_zero2.json");
        emit(f, "parallelism.zero_stage", std::int64_t(2));
        if (bucket) emit(f, "parallelism.reduce_bucket_size", std::int64_t(200000000));
        if (overlap >= 0) emit(f, "parallelism.overlap_comm", overlap == 1);
        const estimate_input in = from_facts(f);
        est::breakdown b;
        est::compute(in, b);
        const auto& st = b.stages[0];
        return std::make_tuple(in.ds_ipg_bucket_elements, st.phase_forward, st.phase_backward);
    };
    const auto [none, fwd0, bwd0] = phases(0, -1);
    const auto [one, fwd1, bwd1] = phases(1, 0);
    const auto [two, fwd2, bwd2] = phases(1, 1);
    CHECK(none == 0.0);
    CHECK(one == 2.0e8);
    CHECK(two == 4.0e8);
    // two buffers hold 4e8 x 2 B through the forward of later micro-batches and the backward
    CHECK(fwd2 - fwd1 == doctest::Approx(4.0e8));
    CHECK(bwd2 - bwd1 == doctest::Approx(4.0e8));
    // unstated: the earlier single backward bucket, capped at the trainable size (no forward term)
    CHECK(fwd1 - fwd0 == doctest::Approx(4.0e8));
    CHECK(bwd0 < bwd1);
}

TEST_CASE("FSDP1 units mixing frozen weights and LoRA adapters grow gradients for the whole unit (est68)") {
    // LitGPT's FSDPStrategy wraps each block with its adapters (use_orig_params=True): the block's FlatParameter
    // takes a gradient of every element; under no_sync accumulation the unsharded ones live through the micro-batches
    auto litgpt_lora = [](bool stated, bool mixed_units) {
        fact_store f = job8b("litgpt", "lora", 2);
        emit(f, "parallelism.zero_stage", std::int64_t(3));
        emit(f, "training.lora_rank", std::int64_t(8));
        emit(f, "training.lora_target", "q_proj,v_proj");
        emit(f, "training.gradient_accumulation_steps", std::int64_t(4));
        if (stated) emit(f, "parallelism.fsdp_mixed_frozen_units", mixed_units);
        return from_facts(f);
    };
    const estimate_input mixed = litgpt_lora(false, false);
    CHECK(mixed.fsdp1_mixed_units);
    CHECK(mixed.fsdp1_no_sync);
    const estimate_input apart = litgpt_lora(true, false);
    CHECK_FALSE(apart.fsdp1_mixed_units);
    est::breakdown bm, ba;
    est::compute(mixed, bm);
    est::compute(apart, ba);
    const auto& m = bm.stages[0];
    const auto& a = ba.stages[0];
    // every decoder layer and the adapters (the root of embedding, head and final norm holds no adapter)
    const double layers = m.params_rank - 2.0 * 128256.0 * 4096.0 - 4096.0;
    CHECK(m.grads_unsharded / a.grads_unsharded == doctest::Approx((layers + a.trainable_rank) / a.trainable_rank));
    CHECK(m.grads / a.grads == doctest::Approx(m.grads_unsharded / a.grads_unsharded));
    CHECK(m.grads_in_forward == doctest::Approx(m.grads_unsharded));
    CHECK(a.grads_in_forward == doctest::Approx(a.grads_unsharded));
    // HF Trainer wraps PEFT adapters on their own (fsdp_auto_wrap_policy): no whole-unit gradient by default
    fact_store hf = job8b("llama_factory", "lora", 2);
    emit(hf, "parallelism.zero_stage", std::int64_t(3));
    CHECK_FALSE(from_facts(hf).fsdp1_mixed_units);
}
