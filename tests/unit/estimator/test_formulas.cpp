// Each estimator formula pinned to a hand-computed case (numbers worked out in the comments).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"
#include "engine/estimator/plan_search.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

using test_util::llama8b;

// GPT-style layer for Korthikanti's Table 2: MHA, GELU MLP with F = 4h, dropout.
estimate_input gpt_input(std::int64_t t, bool sp) {
    estimate_input in;
    in.framework = train_framework::megatron;
    in.model.family = "gpt";
    in.model.gated = false;
    in.model.hidden = 1024;
    in.model.layers = 4;
    in.model.heads = 16;
    in.model.kv_heads = 16;
    in.model.head_dim = 64;
    in.model.ffn = 4096;
    in.model.vocab = 1000;
    in.model.dropout = 0.1;
    in.tp = t;
    in.sequence_parallel = sp;
    in.seq_len = 2048;
    in.flash = false;
    return in;
}

using test_util::emit;

}  // namespace

TEST_CASE("parameter count: Llama 3.1 8B = 8,030,261,248") {
    // embeddings 2 x 128256 x 4096 = 1,050,673,152; per layer: attention 2 x 4096^2 + 2 x 4096 x 1024
    // = 41,943,040, SwiGLU 3 x 4096 x 14336 = 176,160,768, norms 8,192 -> 218,112,000 x 32; final norm 4,096.
    CHECK(est::total_params(llama8b()) == doctest::Approx(8030261248.0));
}

TEST_CASE("parameter count: MLA and MoE layers") {
    estimate_model m;
    m.hidden = 1024;
    m.heads = 8;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.q_lora = 256;
    m.kv_lora = 128;
    m.qk_nope = 64;
    m.qk_rope = 32;
    m.v_head = 64;
    m.experts = 4;
    m.top_k = 2;
    m.shared_experts = 1;
    m.expert_ffn = 512;
    // q: 256 x (1024 + 8 x 96) = 458,752; kv: 128 x (1024 + 8 x 128) + 1024 x 32 = 294,912; out 8 x 64 x 1024 = 524,288
    const est::layer_params p = est::moe_layer_params(m);
    CHECK(p.tp_sharded == doctest::Approx(458752.0 + 294912.0 + 524288.0 + 3.0 * 1024 * 512));
    CHECK(p.routed == doctest::Approx(4.0 * 3 * 1024 * 512));
    CHECK(p.replicated == doctest::Approx(2.0 * 1024 + 256 + 128 + 1024 * 4));  // norms, latent norms, router
    m.first_dense = 1;
    m.moe_freq = 1;
    CHECK_FALSE(est::is_moe_layer(m, 0));
    CHECK(est::is_moe_layer(m, 1));
}

TEST_CASE("activations: Korthikanti Table 2 per layer, bytes per token") {
    const double h = 1024, a = 16, s = 2048;
    {
        estimate_input in = gpt_input(1, true);  // no parallelism: 34h + 5as
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(34 * h + 5 * a * s));
    }
    {
        estimate_input in = gpt_input(4, false);  // TP only: 10h + 24h/t + 5as/t
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(10 * h + 24 * h / 4 + 5 * a * s / 4));
    }
    {
        estimate_input in = gpt_input(4, true);  // TP + SP: 34h/t + 5as/t
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(34 * h / 4 + 5 * a * s / 4));
    }
    {
        estimate_input in = gpt_input(4, true);  // TP + SP + selective recompute: 34h/t
        in.ac = ac_kind::selective_op;
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(34 * h / 4));
    }
    {
        estimate_input in = gpt_input(4, true);  // full recompute: 2h/t (layer input only)
        in.ac = ac_kind::full;
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(2 * h / 4));
    }
    {
        estimate_input in = gpt_input(1, true);  // every 2nd layer checkpointed: mean of none and full
        in.ac = ac_kind::selective_layer;
        in.ac_every = 2;
        CHECK(est::layer_activation(in, false).saved == doctest::Approx(0.5 * (34 * h + 5 * a * s) + 0.5 * 2 * h));
    }
}

TEST_CASE("activations: Llama SwiGLU + GQA, compiled, flash, no dropout") {
    // norms 2 x 2h, QKV input 2h, q 2ad, k,v 2gd each, O 2ad, lse 4a, MLP input 2h, SwiGLU 6F
    estimate_input in;
    in.model = llama8b();
    in.compile = true;
    const double h = 4096, g = 8, d = 128, a = 32, F = 14336;
    const double expect = 4 * h + 2 * h + 2 * (a * d + 2 * g * d) + 2 * a * d + 4 * a + 2 * h + 6 * F;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(expect));
    // eager: fp32 norm upcasts (+4h per norm) and the unfused SiLU output (+2F)
    in.compile = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(expect + 8 * h + 2 * F));
    // torchtitan op-level SAC: input 2h, q and v and w1 and w2 outputs (every 2nd matmul), SDPA
    // output and its log-sum-exp
    in.ac = ac_kind::selective_op;
    const double sac = 2 * h + 2 * (a * d + g * d) + 2 * a * d + 4 * a + 2 * (F + h);
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(sac));
    // Float8 and MXFP8 linears still dispatch aten.mm under the SAC mode: the same outputs are kept
    in.lowp = lowp_kind::float8_tensorwise;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(sac));
    in.lowp = lowp_kind::mxfp8;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(sac));
    // NVFP4's opaque GEMM is not in the save list: input, SDPA output and fp4 copies of the GEMM
    // inputs (0.5625 B each: q/k/v input h, o input ad, w1/w3 input h, w2 input F)
    in.lowp = lowp_kind::nvfp4;
    const double fp4 = estimator_k().nvfp4_saved_bytes;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(2 * h + 2 * a * d + 4 * a + fp4 * (h + a * d + h + F)));
    // the mixed recipe's bf16 tail layers keep the bf16 set
    CHECK(est::layer_activation(in, false, true, false).saved == doctest::Approx(sac));
}

TEST_CASE("model states: ZeRO / FSDP / Megatron distributed optimizer bytes per parameter") {
    estimate_input in;
    in.model = llama8b();
    in.dp_shard = 8;
    in.world = 8;
    est::breakdown b;
    SUBCASE("torchtitan FSDP2 mixed precision: 16 / N") {
        in.framework = train_framework::torchtitan;
        in.zero_stage = 3;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(16.0 / 8));
    }
    SUBCASE("Megatron distributed optimizer bf16: 6 + 12 / d") {
        in.framework = train_framework::megatron;
        in.zero_stage = 1;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(6.0 + 12.0 / 8));
    }
    SUBCASE("Megatron distributed optimizer, --grad-reduce-in-bf16: 4 + 12 / d (bf16 main-grad buffer)") {
        in.framework = train_framework::megatron;
        in.zero_stage = 1;
        in.grad_reduce_bytes = 2;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(4.0 + 12.0 / 8));
    }
    SUBCASE("Megatron without distributed optimizer: 18") {
        in.framework = train_framework::megatron;
        in.zero_stage = 0;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(18.0));
        // the report says the fp32 copy is whole, not "/ 8"
        std::string master;
        for (const auto& c : estimate(in).components)
            if (c.id == "master_weights") master = c.formula;
        CHECK(master.find("(not sharded)") != std::string::npos);
    }
    SUBCASE("DeepSpeed ZeRO-2: 2 + 18 / N") {
        in.framework = train_framework::deepspeed;
        in.zero_stage = 2;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(2.0 + 18.0 / 8));
    }
    SUBCASE("DeepSpeed ZeRO-3: 18 / N") {
        in.framework = train_framework::deepspeed;
        in.zero_stage = 3;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(18.0 / 8));
    }
    SUBCASE("DeepSpeed ZeRO-3, bf16 master weights and grads, bf16 Adam states (est32): 10 / N, not pure bf16's 8 / N") {
        in.framework = train_framework::deepspeed;
        in.zero_stage = 3;
        in.master_bytes = 2;
        in.state_dtype_bytes = 2;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(10.0 / 8));
        in.master_weights = false;  // no master copy at all
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(8.0 / 8));
    }
    SUBCASE("pure bf16 AdamW, one device: 2 + 2 + 4") {
        in.framework = train_framework::generic;
        in.master_weights = false;
        in.dp_shard = 1;
        in.zero_stage = 0;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(8.0));
    }
    SUBCASE("8-bit Adam and swapped optimizer") {
        in.framework = train_framework::generic;
        in.master_weights = false;
        in.dp_shard = 1;
        in.zero_stage = 0;
        in.optimizer = "adamw8bit";
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(2.0 + 2.0 + 2.0));
        in.optimizer = "adamw";
        in.swap_optimizer = true;
        in.swap_times = 4;
        est::compute(in, b);
        CHECK(b.state_bytes_per_param == doctest::Approx(2.0 + 2.0 + 1.0));
    }
}

TEST_CASE("MoE: routed experts divide by EP x ETP, their optimizer shards over expert-DP") {
    estimate_input in;
    in.framework = train_framework::megatron;
    in.model.hidden = 512;
    in.model.layers = 2;
    in.model.heads = 8;
    in.model.kv_heads = 8;
    in.model.head_dim = 64;
    in.model.ffn = 1024;
    in.model.vocab = 1000;
    in.model.experts = 8;
    in.model.top_k = 2;
    in.model.expert_ffn = 256;
    in.ep = 4;
    in.dp_shard = 4;
    in.world = 4;
    in.zero_stage = 1;
    est::breakdown b;
    est::compute(in, b);
    const auto& st = b.stages[0];
    // routed per layer 8 x 3 x 512 x 256 = 3,145,728; two layers / EP 4 = 1,572,864
    CHECK(st.expert_params_rank == doctest::Approx(2.0 * 8 * 3 * 512 * 256 / 4));
    // expert-DP = N x t / (ep x etp) = 4 / 4 = 1: expert optimizer is not sharded further
    CHECK(b.expert_shard_n == doctest::Approx(1.0));
}

TEST_CASE("est57: a GELU expert has two matrices; an expert-TP rank runs every token routed to its experts") {
    estimate_input in = gpt_input(2, true);  // GELU MLP, h 1024, MHA 16 x 64 with biases
    in.model.experts = 8;
    in.model.top_k = 2;
    in.model.shared_experts = 1;
    in.model.expert_ffn = 2048;
    // Megatron-Core doubles fc1 only for a gated linear unit: 8 x 2 x 1024 x 2048 routed, one 2 x 1024 x 2048 shared
    est::layer_params p = est::moe_layer_params(in.model);
    CHECK(p.routed == doctest::Approx(8.0 * 2 * 1024 * 2048));
    CHECK(p.tp_sharded == doctest::Approx(4.0 * 1024 * 1024 + 4.0 * 1024 + 2.0 * 1024 * 2048));  // GPT's q/k/v/o biases
    in.model.gated = true;  // SwiGLU experts keep three
    CHECK(est::moe_layer_params(in.model).routed == doctest::Approx(8.0 * 3 * 1024 * 2048));
    in.model.gated = false;
    in.model.shared_experts = 0;
    in.etp = 1;
    const double one = est::layer_activation(in, true).saved;
    in.etp = 2;
    const double two = est::layer_activation(in, true).saved;
    // expert TP 2 gathers the tokens of both expert-TP ranks: the permuted fc1 input (2 B x h per routed token)
    // doubles, while the intermediates stay one local routed token's worth (2 x the tokens at fe / 2 each):
    // k x 2h x (etp - 1) / t per token = 2 x 2 x 1024 / 2
    CHECK(two - one == doctest::Approx(2.0 * 2.0 * 1024 * (2 - 1) / 2));
}

TEST_CASE("pipeline: in-flight micro-batches per stage (1F1B and interleaved)") {
    estimate_input in;
    in.model = llama8b();
    in.pp = 4;
    in.num_microbatches = 8;
    in.dp_shard = 1;
    est::breakdown b;
    est::compute(in, b);
    // 1F1B: stage i holds min(p - i, m) micro-batches of its L/p = 8 layers
    CHECK(b.stages[0].inflight == doctest::Approx(4 * 8));
    CHECK(b.stages[3].inflight == doctest::Approx(1 * 8));
    // interleaved p=4, v=8, m=4: chunks held = min(p*v + p - 1 - 2s, m*v); 1 layer per chunk
    in.schedule = pp_schedule_kind::interleaved;
    in.vpp = 8;
    in.num_microbatches = 4;
    est::compute(in, b);
    CHECK(b.stages[3].inflight == doctest::Approx(29));
    CHECK(b.stages[0].inflight == doctest::Approx(32));  // min(35, 32)
}

TEST_CASE("pipeline: torchtitan's layer split, receive buffers, last-stage outputs by build date") {
    estimate_input in;
    in.model = llama8b();
    in.model.layers = 126;
    in.pp = 8;
    in.dp_shard = 8;
    in.zero_stage = 3;
    in.micro_batch = 1;
    in.num_microbatches = 8;
    in.seq_len = 4096;
    est::breakdown b;
    est::compute(in, b);
    // generate_split_points: first stage 126 / 8 = 15, six middle stages 16, last 15
    CHECK(b.stages[0].layers == 15);
    CHECK(b.stages[1].layers == 16);
    CHECK(b.stages[6].layers == 16);
    CHECK(b.stages[7].layers == 15);
    // receive buffers, 4096 tokens x 2h each: stage 0 gradients only (8), the last stage the
    // activations not in flight (8 - 1); a middle stage both
    const double io = 4096.0 * 2.0 * 4096.0;
    CHECK(b.stages[0].pp_buffers == doctest::Approx(8 * io));
    CHECK(b.stages[7].pp_buffers == doctest::Approx(7 * io));
    CHECK(b.stages[3].pp_buffers == doctest::Approx((8 - 5 + 8) * io));
    // last-stage outputs: kept by builds before 2025-10-22, not after; the high end keeps them
    // when the date is unknown
    CHECK(b.stages[7].pp_outputs == 0.0);
    in.framework_date = 20241226;
    est::compute(in, b);
    CHECK(b.stages[7].pp_outputs == doctest::Approx(8 * 4096.0 * 128256.0 * 2.0));
    CHECK(b.stages[6].pp_outputs == 0.0);
    in.framework_date = 20251101;
    est::compute(in, b);
    CHECK(b.stages[7].pp_outputs == 0.0);
    in.framework_date = 0;
    in.variant = 1;
    est::compute(in, b);
    CHECK(b.stages[7].pp_outputs > 0.0);
    // other frameworks: the first L mod p stages take one more
    in.variant = 0;
    in.framework = train_framework::megatron;
    est::compute(in, b);
    CHECK(b.stages[0].layers == 16);
    CHECK(b.stages[7].layers == 15);
}

TEST_CASE("activations: HF eager attention keeps fp32 and half-precision probabilities (est20)") {
    // transformers' eager attention: softmax(scores, dtype=float32).to(bf16) saves the fp32 output (4 B)
    // and the bf16 copy for the matmul with V (2 B) per score. est27: bf16 scores are converted to fp32
    // before the softmax (ATen's half-to-float kernel is fp16-only), so its backward holds the saved
    // output, the incoming fp32 gradient and an fp32 input gradient, 12 B per score: 6 B above the saved
    // set (was 4: the input gradient read as bf16). Megatron's unfused path keeps 2 B (Table 2).
    estimate_input in;
    in.model = llama8b();
    in.compile = false;
    in.seq_len = 2048;
    in.flash = false;
    const double a = 32, s = 2048;
    in.framework = train_framework::megatron;
    const est::layer_act mega = est::layer_activation(in, false);
    CHECK(mega.backward == doctest::Approx(0.0));
    in.framework = train_framework::generic;
    const est::layer_act plain = est::layer_activation(in, false);
    in.hf_model = true;
    const est::layer_act hf = est::layer_activation(in, false);
    CHECK(hf.saved - plain.saved == doctest::Approx(4.0 * a * s));   // 6 B instead of 2 B per score
    CHECK(hf.backward == doctest::Approx(6.0 * a * s));
    CHECK(hf.saved + hf.backward - plain.saved == doctest::Approx((12.0 - 2.0) * a * s));  // 12 B per score at the softmax backward, 2 B in plain
    CHECK(plain.backward == doctest::Approx(0.0));
    // with attention dropout the bf16 copy is freed; its mask (1 B) and output (2 B) are kept: 7 B
    in.model.dropout = 0.1;
    const est::layer_act hf_drop = est::layer_activation(in, false);
    in.hf_model = false;
    const est::layer_act plain_drop = est::layer_activation(in, false);
    CHECK(hf_drop.saved - plain_drop.saved == doctest::Approx(2.0 * a * s));  // 7 B against 5 B
    // its backward peak is the same 12 B per score, reached after the mask and the dropped-out copy are freed
    CHECK(hf_drop.backward == doctest::Approx(5.0 * a * s));
    // flash / SDPA: no s^2 term either way
    in.model.dropout = 0.0;
    in.flash = true;
    in.hf_model = true;
    CHECK(est::layer_activation(in, false).backward == doctest::Approx(0.0));
}

TEST_CASE("HF use_cache under full AC: every layer's K/V stays until the loss (est27)") {
    estimate_input in;
    in.model = llama8b();
    in.framework = train_framework::generic;
    in.hf_model = true;
    in.dp_shard = 1;
    in.zero_stage = 0;
    in.micro_batch = 2;
    in.seq_len = 2048;
    in.ac = ac_kind::full;
    est::breakdown off, on;
    est::compute(in, off);
    in.hf_kv_cache = true;
    est::compute(in, on);
    // 32 layers x 4096 tokens x (K + V of 8 KV heads x 128) x 2 B, in forward and at the loss, not in backward
    const double kv = 32.0 * 4096 * 2 * 1024 * 2;
    CHECK(on.stages[0].temp_forward - off.stages[0].temp_forward == doctest::Approx(kv));
    CHECK(on.stages[0].temp_loss - off.stages[0].temp_loss == doctest::Approx(kv));
    CHECK(on.stages[0].temp_backward == doctest::Approx(off.stages[0].temp_backward));
    // without checkpointing attention saves those K/V anyway; not an HF model: no cache
    in.ac = ac_kind::none;
    est::compute(in, on);
    in.hf_kv_cache = false;
    est::compute(in, off);
    CHECK(on.stages[0].temp_loss == doctest::Approx(off.stages[0].temp_loss));
    // from facts: only an HF model reads model.use_cache
    fact_store f;
    provenance pv;
    pv.producer = "test";
    f.emit("model.use_cache", true, pv);
    f.emit("framework.hf_model", false, pv);
    CHECK_FALSE(from_facts(f).hf_kv_cache);
    fact_store g;
    g.emit("model.use_cache", true, pv);
    g.emit("framework.hf_model", true, pv);
    CHECK(from_facts(g).hf_kv_cache);
}

TEST_CASE("context parallel (torchtitan): ring attention's gathered K/V grow with the CP degree") {
    estimate_input in;
    in.model = llama8b();
    in.dp_shard = 1;
    in.zero_stage = 0;
    in.micro_batch = 1;
    in.ac = ac_kind::full;
    est::breakdown b;
    double prev = 0;
    for (std::int64_t cp : {2, 4, 8}) {
        in.cp = cp;
        in.seq_len = 8192 * cp;  // constant tokens per rank
        est::compute(in, b);
        const double bwd = b.stages[0].temp_backward;
        if (prev > 0) {
            // c x K+V repeated to all heads, bf16: 8192 tokens x 2 x 2 B x 4096 per extra rank
            CHECK(bwd - prev == doctest::Approx(double(cp / 2) * 8192.0 * 4.0 * 4096.0));
        }
        prev = bwd;
    }
}

TEST_CASE("logits: tokens x vocab x bytes per element, / TP with loss parallel") {
    const estimator_constants& k = estimator_k();
    estimate_input in;
    in.model = llama8b();
    in.micro_batch = 2;
    in.seq_len = 4096;
    est::breakdown b;
    est::compute(in, b);
    const double tokens = 8192, V = 128256, h = 4096;
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_unfused + tokens * 2 * h));
    in.tp = 4;
    in.loss_parallel = true;
    est::compute(in, b);
    // DTensor loss-parallel CE keeps separate fp32 shards (more than the fused native kernel)
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V / 4 * k.logits_bytes_loss_parallel + tokens * 2 * h));
    in.chunked_loss = true;  // torchtitan: projection and CE chunk by chunk + fp32 hidden-gradient accumulator
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V / 4 * k.logits_bytes_fused + tokens * 6 * h));
}

TEST_CASE("fit check against capacity x 0.95, facts and JSON") {
    fact_store f;
    emit(f, "model.hidden_size", 4096);
    emit(f, "model.num_layers", 32);
    emit(f, "model.num_attention_heads", 32);
    emit(f, "model.num_kv_heads", 8);
    emit(f, "model.intermediate_size", 14336);
    emit(f, "model.vocab_size", 128256);
    emit(f, "job.world_size", 8);
    emit(f, "training.local_batch_size", 1);
    emit(f, "training.seq_len", 8192);
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "device.capacity_bytes", std::int64_t(85899345920));  // 80 GiB
    const estimate_result r = estimate(from_facts(f));
    CHECK(r.budget_bytes == std::int64_t(std::llround(85899345920.0 * 0.95)));
    CHECK(r.margin_bytes == r.budget_bytes - r.device_peak_bytes);
    CHECK(r.fits == (r.margin_bytes >= 0));
    CHECK(r.reserved_peak_bytes >= r.peak_bytes);
    std::int64_t sum = 0;
    for (const auto& c : r.components) sum += c.bytes;
    CHECK(sum == doctest::Approx(double(r.device_peak_bytes)).epsilon(0.001));
    CHECK(r.complete);

    const auto j = to_json(r);
    CHECK(j["schema"] == "oomdx.estimate/1");
    for (const char* k : {"peak_bytes", "reserved_peak_bytes", "capacity_bytes", "fits", "components"}) CHECK(j.contains(k));
    CHECK(j["components"].size() == r.components.size());

    const std::string facts_dir = std::string(OOMDX_SOURCE_DIR) + "/knowledge/facts";
    const vocabulary vocab = vocabulary::load_dir(facts_dir);
    fact_store checked(&vocab);
    emit_facts(r, checked);  // throws when a name is undeclared or has the wrong type
    for (const char* n : {"estimate.peak_bytes", "estimate.reserved_peak_bytes", "estimate.capacity_bytes",
                          "estimate.budget_bytes", "estimate.fits", "estimate.margin_bytes", "estimate.peak_fraction",
                          "estimate.params_bytes", "estimate.grads_bytes", "estimate.optimizer_bytes",
                          "estimate.master_weights_bytes", "estimate.activations_bytes", "estimate.logits_bytes",
                          "estimate.temporaries_bytes", "estimate.overhead_bytes", "estimate.activation_share",
                          "estimate.optimizer_share", "estimate.param_grad_share", "estimate.expert_share",
                          "estimate.peak_phase", "estimate.complete"})
        CHECK_MESSAGE(checked.has(n), n);
    CHECK(checked.get("estimate.peak_bytes")->prov.producer == "estimator");
}

TEST_CASE("what-if: overrides give a new breakdown and are recorded") {
    fact_store f;
    emit(f, "model.hidden_size", 4096);
    emit(f, "model.num_layers", 32);
    emit(f, "model.num_attention_heads", 32);
    emit(f, "model.intermediate_size", 14336);
    emit(f, "model.vocab_size", 128256);
    emit(f, "job.world_size", 8);
    emit(f, "training.local_batch_size", 4);
    emit(f, "training.seq_len", 8192);
    emit(f, "activation_checkpoint.mode", "none");
    const estimate_result base = estimate(from_facts(f));
    const estimate_result full = estimate_with(f, {{"activation_checkpoint.mode", value("full")}});
    CHECK(full.component("activations") < base.component("activations") / 10);
    REQUIRE(full.overrides.size() == 1);
    CHECK(full.overrides[0].key == "activation_checkpoint.mode");
    const estimate_result tp = estimate_with(f, {{"parallelism.tensor_parallel_degree", value(4)}});
    CHECK(tp.peak_bytes < base.peak_bytes);
}

TEST_CASE("missing and hostile facts: defaults with assumptions, no crash") {
    fact_store f;
    emit(f, "model.hidden_size", "not a number");
    emit(f, "training.seq_len", std::int64_t(1) << 40);
    const estimate_input in = from_facts(f);
    CHECK_FALSE(in.complete);
    CHECK_FALSE(in.assumptions.empty());
    const estimate_result r = estimate(in);
    CHECK(r.peak_bytes > 0);
    CHECK_FALSE(r.complete);

    fact_store bad;
    emit(bad, "model.hidden_size", -5);
    emit(bad, "model.num_layers", 2);
    emit(bad, "model.num_attention_heads", 2);
    CHECK_THROWS_AS(from_facts(bad), usage_error);

    fact_store huge;  // absurd but in-range dims must not overflow into negative bytes
    emit(huge, "model.hidden_size", 1 << 20);
    emit(huge, "model.num_layers", 100000);
    emit(huge, "model.num_attention_heads", 65536);
    emit(huge, "model.vocab_size", 1 << 27);
    emit(huge, "training.local_batch_size", 1 << 20);
    emit(huge, "training.seq_len", 1 << 24);
    const estimate_result h = estimate(from_facts(huge));
    CHECK(h.peak_bytes > 0);
    CHECK(h.device_peak_bytes >= h.peak_bytes);
}

TEST_CASE("plan search: every candidate fits, in priority order, overrides explain the change") {
    estimate_input in;
    in.model = llama8b();
    in.world = 8;
    in.dp_shard = 8;
    in.micro_batch = 4;
    in.seq_len = 8192;
    in.ac = ac_kind::none;
    in.capacity_bytes = std::int64_t(85899345920);
    REQUIRE(estimate_device_peak(in) > std::int64_t(0.95 * 85899345920.0));  // the base does not fit
    const plan_result p = plan_search(in);
    CHECK(p.evaluated > 100);
    REQUIRE_FALSE(p.candidates.empty());
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
        const auto& c = p.candidates[i];
        CHECK(c.device_peak_bytes <= std::int64_t(0.95 * 85899345920.0));
        CHECK(estimate_device_peak(c.input) == doctest::Approx(double(c.device_peak_bytes)).epsilon(1e-6));
        CHECK_FALSE(c.overrides.empty());
        // Ranked by the method's priority tier of the most drastic change, then by cost.
        if (i > 0) CHECK((c.tier > p.candidates[i - 1].tier || (c.tier == p.candidates[i - 1].tier && c.cost >= p.candidates[i - 1].cost)));
    }
}

TEST_CASE("plan search: a Megatron-family job raises TP with sequence parallelism, and the plan says so (lead32)") {
    estimate_input in;
    in.framework = train_framework::megatron;
    in.model = llama8b();
    in.world = 8;
    in.dp_shard = 8;
    in.zero_stage = 1;
    in.micro_batch = 4;
    in.seq_len = 8192;
    in.ac = ac_kind::none;
    in.sequence_parallel = false;
    in.capacity_bytes = std::int64_t(85899345920);
    REQUIRE(estimate_device_peak(in) > std::int64_t(0.95 * 85899345920.0));
    const plan_result p = plan_search(in);
    REQUIRE_FALSE(p.candidates.empty());
    int raised = 0;
    for (const auto& c : p.candidates) {
        if (c.input.tp <= in.tp) continue;
        ++raised;
        CHECK(c.input.sequence_parallel);
        bool says = false;
        for (const auto& o : c.overrides) says = says || o.key == "parallelism.sequence_parallel";
        CHECK(says);
    }
    CHECK(raised > 0);
}

TEST_CASE("activations: soft-capped attention keeps its tanh; Gemma 2 / 3 keep four norm inputs per layer (est24)") {
    // Gemma 2's attention computes tanh(scores / 50) * 50 before the mask: tanh's backward reads its
    // output, 2 B per score above HF's eager 6 B; no s^2 term with flash either way
    estimate_input in;
    in.model = llama8b();
    in.compile = false;
    in.seq_len = 2048;
    in.flash = false;
    in.hf_model = true;
    const double a = 32, s = 2048, h = 4096;
    const est::layer_act plain = est::layer_activation(in, false);
    in.model.attn_softcap = 50.0;
    const est::layer_act capped = est::layer_activation(in, false);
    CHECK(capped.saved - plain.saved == doctest::Approx(2.0 * a * s));
    CHECK(capped.backward == doctest::Approx(plain.backward));
    in.flash = true;
    const est::layer_act capped_flash = est::layer_activation(in, false);
    in.model.attn_softcap = 0;
    CHECK(capped_flash.saved == doctest::Approx(est::layer_activation(in, false).saved));
    // post-attention and post-MLP norms: two more Python-RMSNorm inputs kept in fp32 (4 h each, frozen
    // weights not involved in full training: 6 h each), none more with a fused norm (2 h each)
    in.flash = true;
    in.norm_upcast = true;
    const est::layer_act two = est::layer_activation(in, false);
    in.model.norms_per_layer = 4;
    const est::layer_act four = est::layer_activation(in, false);
    CHECK(four.saved - two.saved == doctest::Approx(2.0 * 6.0 * h));
    in.norm_upcast = false;
    const est::layer_act four_fused = est::layer_activation(in, false);
    in.model.norms_per_layer = 2;
    CHECK(four_fused.saved - est::layer_activation(in, false).saved == doctest::Approx(2.0 * 2.0 * h));
}

TEST_CASE("activations: fp32 compute without autocast takes 4 B per compute-dtype element; masks and fp32 tensors do not double (est26)") {
    // BERT-large-like layer (LayerNorm, GELU MLP, dropout 0.1), HF eager attention
    estimate_input in;
    in.model.family = "bert";
    in.model.hidden = 1024;
    in.model.layers = 24;
    in.model.heads = in.model.kv_heads = 16;
    in.model.head_dim = 64;
    in.model.ffn = 4096;
    in.model.vocab = 30522;
    in.model.gated = false;
    in.model.dropout = 0.1;
    in.compile = false;
    in.flash = false;
    in.hf_model = true;
    in.seq_len = 512;
    in.zero_stage = 0;  // one unsharded GPU (HF Trainer)
    in.param_bytes = 2;  // compute dtype half
    const double h = 1024, a = 16, s = 512, f = 4096;
    in.master_weights = false;  // half-precision weights, nothing autocasts
    const est::layer_act pure = est::layer_activation(in, false);
    // half: 2 norm inputs, qkv and MLP inputs, q k v o, GELU and FC2 inputs at 2 B, two 1 B masks; 7 B per score
    CHECK(pure.saved == doctest::Approx(2.0 * (2 * h + h + h + 4 * h + 2 * f) + 2.0 * h + 7.0 * a * s));
    in.master_weights = true;  // fp32 weights under autocast (est65): fp32 residual stream
    const est::layer_act half = est::layer_activation(in, false);
    // the two LayerNorm inputs are fp32 (4 B) and the separate query, key and value linears each keep their own
    // half cast of the fp32 LayerNorm output (3 x 2 B); the rest as above
    CHECK(half.saved == doctest::Approx(4.0 * 2 * h + 2.0 * (3 * h + h + 4 * h + 2 * f) + 2.0 * h + 7.0 * a * s));
    CHECK(half.saved - pure.saved == doctest::Approx(8.0 * h));
    in.param_bytes = 4;  // fp32 weights, no autocast
    const est::layer_act full = est::layer_activation(in, false);
    // fp32: every 2 B term doubles, the masks stay 1 B, 9 B per score (fp32 probabilities, mask, fp32 dropout output)
    CHECK(full.saved == doctest::Approx(4.0 * (2 * h + h + h + 4 * h + 2 * f) + 2.0 * h + 9.0 * a * s));
    // backward above the saved set, per score: half 5 B with dropout (est27: fp32 softmax copy and its gradient);
    // fp32 8 B (the dropout output's and the probabilities' fp32 gradients beside the saved 9 B)
    CHECK(half.backward == doctest::Approx(5.0 * a * s));
    CHECK(full.backward == doctest::Approx(8.0 * a * s));
    // checkpointed layer input: 4 B per element in fp32, and under autocast over fp32 weights (est65)
    in.ac = ac_kind::full;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(4.0 * h));
    in.param_bytes = 2;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(4.0 * h));
    in.master_weights = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(2.0 * h));
}

TEST_CASE("autocast over fp32 weights: separate q / k / v and gate / up linears cast the fp32 norm output apart; fused ones once (est65)") {
    estimate_input in;
    in.model = llama8b();
    in.compile = false;
    in.flash = true;
    in.hf_model = true;
    in.norm_upcast = true;
    in.seq_len = 512;
    in.zero_stage = 0;
    in.param_bytes = 2;
    const double h = double(in.model.hidden);
    in.master_weights = false;  // bf16 weights: one bf16 norm output shared by q, k, v (and by gate, up)
    const est::layer_act bf16 = est::layer_activation(in, false);
    in.master_weights = true;  // fp32 weights under autocast
    const est::layer_act amp = est::layer_activation(in, false);
    // two more q/k/v casts (2 x 2 B), one more gate/up cast (2 B), and each Python RMSNorm's normalized product fp32
    // (4 B instead of 2 B) over two norms
    CHECK(amp.saved - bf16.saved == doctest::Approx(2.0 * 2.0 * h + 2.0 * h + 2.0 * 2.0 * h));
    in.model.family = "phi3";  // qkv_proj and gate_up_proj: one cast each
    const est::layer_act fused = est::layer_activation(in, false);
    CHECK(amp.saved - fused.saved == doctest::Approx(2.0 * 2.0 * h + 2.0 * h));
    // sharded or DeepSpeed jobs cast inside their own wrappers: not this path
    in.model.family = "llama";
    in.zero_stage = 3;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(bf16.saved));
}

TEST_CASE("logits: a sequence classifier (model.task) has no vocabulary logits; a language model keeps them (est26)") {
    fact_store facts;
    const auto put = [&](const char* k, value v) { test_util::emit(facts, k, std::move(v)); };
    put("model.family", value(std::string("bert")));
    put("model.hidden_size", value(std::int64_t(1024)));
    put("model.num_layers", value(std::int64_t(24)));
    put("model.num_attention_heads", value(std::int64_t(16)));
    put("model.num_kv_heads", value(std::int64_t(16)));
    put("model.head_dim", value(std::int64_t(64)));
    put("model.intermediate_size", value(std::int64_t(4096)));
    put("model.vocab_size", value(std::int64_t(30522)));
    put("model.tie_word_embeddings", value(true));
    put("job.framework", value(std::string("hf_trainer")));
    put("job.world_size", value(std::int64_t(1)));
    put("training.seq_len", value(std::int64_t(512)));
    put("training.local_batch_size", value(std::int64_t(4)));
    const estimate_result lm = estimate(from_facts(facts));
    CHECK(lm.logits_tensor_bytes > 0);
    put("model.task", value(std::string("sequence_classification")));
    const estimate_result cls = estimate(from_facts(facts));
    CHECK(cls.logits_tensor_bytes == 0);
    CHECK(cls.component("logits") < 2048.0 * 30522.0);
    CHECK(cls.peak_bytes < lm.peak_bytes);
    CHECK(cls.param_count == lm.param_count);  // tied: the embedding is counted once either way
}

TEST_CASE("gradients through the forward: torch 1.x zero_grad keeps them, torch 2 frees them (est26)") {
    fact_store facts;
    const auto put = [&](const char* k, value v) { test_util::emit(facts, k, std::move(v)); };
    test_util::emit_llama8b(facts);
    put("job.framework", value(std::string("hf_trainer")));
    put("job.world_size", value(std::int64_t(1)));
    put("training.seq_len", value(std::int64_t(1024)));
    put("training.local_batch_size", value(std::int64_t(1)));
    put("training.finetuning_type", value(std::string("full")));
    put("job.torch_version", value(std::string("2.4.1")));
    const estimate_result t2 = estimate(from_facts(facts));
    put("job.torch_version", value(std::string("1.10")));
    const estimate_input in1 = from_facts(facts);
    CHECK(in1.zero_grad_keeps_grads);
    const estimate_result t1 = estimate(in1);
    CHECK(t1.peak_bytes > t2.peak_bytes);
    CHECK(!from_facts([&] {
              fact_store f2;
              test_util::emit_llama8b(f2);
              test_util::emit(f2, "job.framework", value(std::string("megatron")));
              test_util::emit(f2, "job.torch_version", value(std::string("1.13")));
              return f2;
          }())
               .zero_grad_keeps_grads);  // Megatron's gradient buffer is counted as live already
}

TEST_CASE("autocast over fp32 weights keeps a compute-dtype copy of each weight through forward (est26)") {
    fact_store facts;
    const auto put = [&](const char* k, value v) { test_util::emit(facts, k, std::move(v)); };
    test_util::emit_llama8b(facts);
    put("job.framework", value(std::string("hf_trainer")));
    put("job.world_size", value(std::int64_t(1)));
    put("training.seq_len", value(std::int64_t(512)));
    put("training.local_batch_size", value(std::int64_t(1)));
    put("training.finetuning_type", value(std::string("full")));
    put("training.load_dtype", value(std::string("float32")));
    put("training.mixed_precision_param", value(std::string("float16")));
    const estimate_result amp = estimate(from_facts(facts));
    // weights loaded in half precision: no cast, no copy (the other side)
    put("training.load_dtype", value(std::string("float16")));
    const estimate_result half = estimate(from_facts(facts));
    CHECK(half.reserved_peak_bytes < amp.reserved_peak_bytes);
    // fp32 weights without autocast: nothing to cast either
    put("training.load_dtype", value(std::string("float32")));
    put("training.mixed_precision_param", value(std::string("float32")));
    const estimate_input fp32 = from_facts(facts);
    double f = 0, b = 0;
    est::amp_weight_copy_bytes(fp32, 1e9, 1e8, &f, &b);
    CHECK(f == 0);
    estimate_input in = from_facts([&] {
        fact_store f2;
        test_util::emit_llama8b(f2);
        test_util::emit(f2, "job.framework", value(std::string("hf_trainer")));
        test_util::emit(f2, "training.finetuning_type", value(std::string("full")));
        test_util::emit(f2, "training.load_dtype", value(std::string("float32")));
        test_util::emit(f2, "training.mixed_precision_param", value(std::string("bfloat16")));
        return f2;
    }());
    est::amp_weight_copy_bytes(in, 1e9, 1e8, &f, &b);
    CHECK(f == doctest::Approx(2e9));
    CHECK(b == doctest::Approx(2e9));  // no checkpointing: every layer's copy is saved for backward
    in.ac = ac_kind::full;
    est::amp_weight_copy_bytes(in, 1e9, 1e8, &f, &b);
    CHECK(b == doctest::Approx(2e8));  // reentrant checkpointing: one layer's copies in backward
}

TEST_CASE("StableLM 2's nn.LayerNorm keeps no fp32 copy of its input; a Llama-family Python RMSNorm does") {
    estimate_input in;
    in.model = llama8b();
    in.compile = false;
    in.flash = true;
    in.norm_upcast = true;
    const double rms = est::layer_activation(in, false).saved;
    in.model.family = "stablelm";
    const double ln = est::layer_activation(in, false).saved;
    CHECK(ln < rms);
    in.norm_upcast = false;
    in.model.family = "llama";
    CHECK(ln == doctest::Approx(est::layer_activation(in, false).saved));
}

TEST_CASE("a bitsandbytes paged optimizer's states resident on the device: a reading up to the card, not the verdict (est65)") {
    const auto job = [](const char* optimizer, std::int64_t capacity) {
        fact_store facts;
        const auto put = [&](const char* k, value v) { test_util::emit(facts, k, std::move(v)); };
        test_util::emit_llama8b(facts);
        put("job.framework", value(std::string("torchtune")));
        put("job.world_size", value(std::int64_t(1)));
        put("training.seq_len", value(std::int64_t(2048)));
        put("training.local_batch_size", value(std::int64_t(2)));
        put("training.finetuning_type", value(std::string("full")));
        put("activation_checkpoint.mode", value(std::string("full")));
        put("optimizer.in_backward", value(true));
        put("optimizer.name", value(std::string(optimizer)));
        if (capacity > 0) put("device.capacity_bytes", value(capacity));
        return estimate(from_facts(facts));
    };
    const std::int64_t card = 85899345920;  // 80 GiB
    const estimate_result paged = job("PagedAdamW", card);
    // 32-bit states of 8 B parameters (64 GB) beside a device peak of about 40 GB cannot all stay: the reading
    // reaches the capacity
    CHECK(paged.paged_reading_high_bytes == card);
    CHECK(paged.paged_reading_high_bytes > paged.device_peak_bytes);
    CHECK(paged.high_bytes < paged.paged_reading_high_bytes);  // the verdict's high end does not take it
    CHECK(render_text(paged).find("device reading up to") != std::string::npos);
    // no card named: the peak plus every paged state
    CHECK(job("PagedAdamW", 0).paged_reading_high_bytes > std::int64_t(60e9));
    // the other side: a plain AdamW keeps its states in the allocator, no such reading
    CHECK(job("adamw", card).paged_reading_high_bytes == 0);
}
