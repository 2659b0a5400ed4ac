// Megatron-Core with Transformer Engine layers (est33): what TE linears save for backward (frozen
// weights, FP8 inputs), Megatron LoRA's gathered adapter inputs under sequence parallelism, the q/k
// layernorm, core-attention recompute under FP8 and FP8 parameter storage. Hand-computed per token.
#include <doctest/doctest.h>

#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"

using namespace oomdx;

namespace {

// A small Llama-shaped layer: h 1024, 16 heads of 64 (MHA), SwiGLU F 4096, flash attention, bf16.
estimate_input te_layer(train_framework fw) {
    estimate_input in;
    in.framework = fw;
    in.model.family = "llama";
    in.model.hidden = 1024;
    in.model.layers = 4;
    in.model.heads = in.model.kv_heads = 16;
    in.model.head_dim = 64;
    in.model.ffn = 4096;
    in.model.vocab = 1000;
    in.model.gated = true;
    in.flash = true;
    in.compile = false;
    in.seq_len = 2048;
    in.param_bytes = 2;
    return in;
}

constexpr double h = 1024, f = 4096, a = 16;

}  // namespace

TEST_CASE("Megatron LoRA: frozen TE linears keep no input; adapters keep theirs (est33)") {
    estimate_input in = te_layer(train_framework::megatron);
    in.ft.kind = finetune_kind::lora;
    in.ft.lora_rank = 8;
    in.ft.targets = lora_target::q | lora_target::v;
    // norms 2 x 2h, q/v adapters' input 2h, q k v o 2 x 4h, LSE 4a, SwiGLU input 4F; the MLP and down
    // projection inputs are not kept (frozen, not adapted); adapters' rank-r outputs 2 x 2r
    const double te = 4 * h + 2 * h + 8 * h + 4 * a + 4 * f + 2 * 2 * 8;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(te));
    // MindSpeed on Ascend (Megatron semantics, Megatron's own layers, no Transformer Engine) keeps them
    in.npu = true;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(te + 2 * h + 2 * f));
    in.npu = false;
    // the same job under another eager framework keeps the frozen MLP and down inputs (2h + 2F) too
    in.framework = train_framework::generic;
    CHECK(est::layer_activation(in, false).saved > te + 2 * h + 2 * f - 1);
}

TEST_CASE("Megatron LoRA with TP + SP: column-parallel adapters keep the gathered input (est33)") {
    estimate_input in = te_layer(train_framework::megatron);
    in.ft.kind = finetune_kind::lora;
    in.ft.lora_rank = 8;
    in.ft.targets = lora_target::all;
    in.tp = 2;
    in.sequence_parallel = true;
    // replicated, / t: norms 4h, q/k/v and MLP inputs 2h + 2h; sharded, / t: q k v o 8h, LSE 4a, SwiGLU input
    // 4F and down input 2F, seven adapters 7 x 2r; gathered (full) qkv and fc1 inputs 2 x 2h
    const double sp = (8 * h) / 2 + (8 * h + 4 * a + 6 * f + 7 * 2 * 8) / 2 + 2 * 2 * h;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(sp));
    // without sequence parallelism the adapters read the replicated norm output itself: nothing added
    in.sequence_parallel = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(8 * h + (8 * h + 4 * a + 6 * f + 7 * 2 * 8) / 2));
}

TEST_CASE("Megatron TE FP8: linear inputs saved as 1 B casts; core-attention recompute drops the output (est33)") {
    estimate_input in = te_layer(train_framework::megatron);
    // bf16: norms 4h, qkv and MLP inputs 4h, q k v o 8h, LSE 4a, SwiGLU input 4F, down input 2F
    const double bf16 = 16 * h + 4 * a + 6 * f;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(bf16));
    in.lowp = lowp_kind::float8_tensorwise;
    // FP8: qkv, MLP and down inputs at 1 B (h + h + F), the output projection's own FP8 input (h)
    const double fp8 = 4 * h + 2 * h + 8 * h + 4 * a + h + 4 * f + f;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(fp8));
    // selective (core attention): the bf16 attention output (2h) and the LSE are not kept under FP8
    in.ac = ac_kind::selective_op;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(fp8 - 2 * h - 4 * a));
    // and bf16 keeps them (the output projection saves that very tensor); flash has no s^2 term to drop
    in.lowp = lowp_kind::none;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(bf16));
    // another framework's float8 (torchtitan) is not read this way
    in = te_layer(train_framework::torchtitan);
    in.compile = true;
    const double tt_bf16 = est::layer_activation(in, false).saved;
    in.lowp = lowp_kind::float8_tensorwise;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(tt_bf16));
}

TEST_CASE("Megatron q/k layernorm keeps the pre-norm q and k (est33)") {
    estimate_input in = te_layer(train_framework::megatron);
    const double base = est::layer_activation(in, false).saved;
    in.model.qk_norm = true;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(base + 2 * (h + h)));
    in.framework = train_framework::generic;  // not counted outside Megatron (rows fitted without it)
    const double other = est::layer_activation(in, false).saved;
    in.model.qk_norm = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(other));
}

TEST_CASE("Megatron --fp8-param-gather stores the linear weights in FP8 (est33)") {
    estimate_input in = te_layer(train_framework::megatron);
    in.dp_shard = 1;
    in.lowp = lowp_kind::float8_tensorwise;
    est::breakdown plain, fp8p;
    est::compute(in, plain);
    in.fp8_all_gather = true;
    est::compute(in, fp8p);
    // four layers of linears (4h^2 attention + 3hF MLP) at 1 B instead of 2
    const double lin = 4.0 * (4 * h * h + 3 * h * f);
    CHECK(plain.stages[0].params - fp8p.stages[0].params == doctest::Approx(lin));
    CHECK(plain.stages[0].grads == doctest::Approx(fp8p.stages[0].grads));
}

TEST_CASE("Megatron's legacy GPTModel keeps the SiLU output of its unfused SwiGLU; Core does not (est35)") {
    estimate_input in = te_layer(train_framework::megatron);
    in.ac = ac_kind::none;
    const double core = est::layer_activation(in, false).saved;  // no date, no flag: Core
    in.framework_date = 20230901;                                  // before 9ad1a56f82 (2024-05-25)
    const double legacy = est::layer_activation(in, false).saved;
    CHECK(legacy - core == doctest::Approx(2 * f));                // SiLU output, bf16
    in.framework_date = 20240525;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(core));
    in.megatron_legacy = 1;                                        // --use-legacy-models on a later build
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(legacy));
    in.framework_date = 20230901;
    in.megatron_legacy = -1;                                       // --use-mcore-models on an older build
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(core));
    in.megatron_legacy = 0;
    in.model.gated = false;                                        // GELU MLP: the same either way
    const double gelu_old = est::layer_activation(in, false).saved;
    in.framework_date = 20250101;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(gelu_old));
    in.model.gated = true;
    in.framework_date = 20230901;
    in.npu = true;                                                 // MindSpeed builds Core models
    const double ms_old = est::layer_activation(in, false).saved;
    in.framework_date = 0;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(ms_old));
}
