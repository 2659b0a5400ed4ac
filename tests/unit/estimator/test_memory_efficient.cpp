// Memory-efficient full-parameter training (est52): BAdam, GaLore, APOLLO, LISA as LLaMA-Factory, HF Trainer
// and ms-swift configure them. Each case checks the method's states against the same job without it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;
using namespace test_util;

namespace {

// Full fine-tuning of Llama 3 8B on one GPU (LLaMA-Factory unless named), 1 x 1024, GC, pure bf16 unless `pure` is false.
fact_store lf_full(bool pure = true, const char* fw = "llama_factory") {
    fact_store f;
    emit_llama8b(f);
    emit_semantics(f, fw);
    emit(f, "job.framework", fw);
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "framework.hf_model", true);
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.finetuning_type", "full");
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "training.seq_len", std::int64_t(1024));
    emit(f, "training.fixed_length", true);
    if (pure) emit(f, "training.pure_bf16", true);
    emit(f, "device.capacity_bytes", std::int64_t(80) << 30);
    return f;
}

const est::stage_figures& stage0(const estimate_input& in, est::breakdown& b) {
    est::compute(in, b);
    return b.stages[0];
}

double layer_params8b() {
    const est::layer_params lp = est::dense_layer_params(llama8b());
    return lp.tp_sharded + lp.replicated;
}

}  // namespace

TEST_CASE("BAdam (LLaMA-Factory use_badam): one decoder layer holds fp32 gradients, copy and AdamW moments") {
    fact_store plain = lf_full(false);
    fact_store badam = lf_full(false);
    emit(badam, "training.badam", true);
    const estimate_input pin = from_facts(plain), bin = from_facts(badam);
    CHECK(pin.me.kind == me_kind::none);
    REQUIRE(bin.me.kind == me_kind::badam);
    CHECK(!bin.me.badam_ratio);  // badam_mode layer: LLaMA-Factory's default
    est::breakdown pb, bb;
    const auto& p = stage0(pin, pb);
    const auto& s = stage0(bin, bb);
    const double total = est::total_params(llama8b()), block = layer_params8b();
    // without BAdam every weight trains with AdamW; with it every weight stays in bf16 (LLaMA-Factory does not
    // upcast under use_badam) and one layer (218 M params) keeps 4 + 4 + 8 B
    CHECK(p.optimizer > total * 7.9);
    CHECK(s.params == doctest::Approx(total * 2.0));
    CHECK(s.grads == doctest::Approx(block * 4.0));
    CHECK(s.master == doctest::Approx(block * 4.0));
    CHECK(s.optimizer == doctest::Approx(block * 8.0));
    CHECK(s.trainable_rank == doctest::Approx(block));
    // activations as full training in bf16 (the active block may be the first layer); the upcast run's fp32
    // weights under autocast keep an fp32 residual stream, so its checkpointed layer inputs are twice as large (est65)
    est::breakdown qb;
    const estimate_input qin = from_facts(lf_full(true));
    CHECK(s.activations == doctest::Approx(stage0(qin, qb).activations).epsilon(0.01));
    CHECK(p.activations == doctest::Approx(2.0 * s.activations).epsilon(0.01));
    // the 8B job now fits one 24 GB card at 1 x 1024 (the BAdam README's claim), full AdamW does not fit 80 GB
    const estimate_result rb = estimate(bin), rp = estimate(pin);
    CHECK(rb.device_peak_bytes < std::int64_t(24e9));
    CHECK(rp.device_peak_bytes > (std::int64_t(80) << 30));
    const fit_limits fl = max_fitting(bin);
    CHECK(fl.max_micro_batch >= 4);
    CHECK(max_fitting(pin).max_micro_batch == 0);
}

TEST_CASE("BAdam ratio mode: the update ratio's share of every layer's linears keeps fp32 states") {
    fact_store f = lf_full(false);
    emit(f, "training.badam", true);
    emit(f, "training.badam_mode", "ratio");
    emit(f, "training.badam_update_ratio", 0.1);
    const estimate_input in = from_facts(f);
    REQUIRE(in.me.badam_ratio);
    est::breakdown b;
    const auto& s = stage0(in, b);
    const double kept = 0.1 * 32.0 * est::linear_params(llama8b(), false);
    CHECK(s.optimizer == doctest::Approx(kept * 8.0));
    CHECK(s.master == doctest::Approx(kept * 4.0));
    CHECK(s.grads == doctest::Approx(kept * 4.0 + 2.0 * est::largest_linear(llama8b(), false)));
}

TEST_CASE("GaLore (LLaMA-Factory use_galore, rank 16 default): moments on r x max(m, n) projections plus projectors") {
    fact_store plain = lf_full();
    fact_store g = lf_full();
    emit(g, "optimizer.galore", true);
    const estimate_input pin = from_facts(plain), gin = from_facts(g);
    REQUIRE(gin.me.kind == me_kind::galore);
    CHECK(gin.me.rank == 16);
    CHECK(gin.me.targets == lora_target::all);
    CHECK(!gin.me.layerwise);
    CHECK(!gin.optimizer_in_backward);
    est::breakdown pb, gb;
    const auto& p = stage0(pin, pb);
    const auto& s = stage0(gin, gb);
    const double total = est::total_params(llama8b());
    // pure bf16: torch AdamW keeps bf16 moments (4 B / param) without GaLore
    CHECK(p.optimizer == doctest::Approx(total * 4.0));
    // per layer, r = 16 along the longer side: q 16 x 4096, k, v 16 x 4096 (1024 is shorter), o 16 x 4096,
    // gate / up / down 16 x 14336; projectors 16 x the shorter side
    const double proj = 16.0 * (4096 * 4 + 14336 * 3), projector = 16.0 * (4096 + 1024 + 1024 + 4096 + 4096 * 3);
    const double targeted = est::linear_params(llama8b(), false) * 32.0;
    CHECK(s.optimizer == doctest::Approx(4.0 * (total - targeted + 32.0 * proj) + 2.0 * 32.0 * projector));
    CHECK(s.grads == doctest::Approx(p.grads));  // gradients unchanged outside layer-wise mode
    CHECK(s.params == doctest::Approx(p.params));
    // layer-wise (galore_layerwise): each gradient is stepped and freed in backward
    emit(g, "optimizer.galore_layerwise", true);
    const estimate_input lin = from_facts(g);
    CHECK(lin.me.layerwise);
    CHECK(lin.optimizer_in_backward);
    CHECK(estimate(lin).peak_bytes < estimate(gin).peak_bytes);
}

TEST_CASE("GaLore through HF Trainer's optim name: 8-bit, layer-wise, rank 128 unless stated, targets by name") {
    fact_store f = lf_full(true, "hf_trainer");
    emit(f, "optimizer.name", "galore_adamw_8bit_layerwise");
    emit(f, "optimizer.galore_target", "self_attn");
    const estimate_input in = from_facts(f);
    REQUIRE(in.me.kind == me_kind::galore);
    CHECK(in.me.rank == 128);
    CHECK(in.me.layerwise);
    CHECK(in.optimizer == "adamw8bit");
    CHECK(in.me.targets == (lora_target::q | lora_target::k | lora_target::v));
    // an ordinary optimizer name is not GaLore
    fact_store o = lf_full();
    emit(o, "optimizer.name", "adamw_torch");
    CHECK(from_facts(o).me.kind == me_kind::none);
}

TEST_CASE("APOLLO-Mini (rank 1): the projected states nearly vanish; rank 128 keeps more") {
    fact_store a1 = lf_full(), a128 = lf_full();
    emit(a1, "optimizer.apollo", true);
    emit(a1, "optimizer.apollo_rank", std::int64_t(1));
    emit(a128, "optimizer.apollo", true);
    emit(a128, "optimizer.apollo_rank", std::int64_t(128));
    const estimate_input i1 = from_facts(a1), i128 = from_facts(a128);
    REQUIRE(i1.me.kind == me_kind::apollo);
    est::breakdown b1, b128;
    const double o1 = stage0(i1, b1).optimizer, o128 = stage0(i128, b128).optimizer;
    const double total = est::total_params(llama8b()), targeted = est::linear_params(llama8b(), false) * 32.0;
    // rank 1: the non-targeted parameters' bf16 moments (embedding, head, norms) and 1 x the longer side per matrix
    CHECK(o1 == doctest::Approx(4.0 * (total - targeted)).epsilon(0.01));
    CHECK(o128 > o1 * 1.1);
}

TEST_CASE("LISA (ms-swift lisa_activated_layers): embedding, head and the sampled layers train") {
    fact_store f = lf_full(true, "ms_swift");
    emit(f, "training.lisa_layers", std::int64_t(2));
    const estimate_input in = from_facts(f);
    REQUIRE(in.me.kind == me_kind::lisa);
    est::breakdown b;
    const auto& s = stage0(in, b);
    const double trainable = 2.0 * 128256.0 * 4096.0 + 2.0 * layer_params8b();
    CHECK(s.trainable_rank == doctest::Approx(trainable));
    CHECK(s.optimizer == doctest::Approx(trainable * 4.0));
    // no LISA layers (0, ms-swift's default): ordinary full training
    fact_store off = lf_full(true, "ms_swift");
    emit(off, "training.lisa_layers", std::int64_t(0));
    CHECK(from_facts(off).me.kind == me_kind::none);
}

TEST_CASE("Q-GaLore (--weight_quant, weight_bits 8): the projected linears are stored at about 1 B per element") {
    fact_store g = lf_full(true, "pytorch");
    emit(g, "optimizer.name", "galore_adamw_8bit_layerwise");
    emit(g, "optimizer.galore_rank", std::int64_t(1024));
    fact_store q = g;
    emit(q, "training.weight_bits", std::int64_t(8));
    const estimate_input gin = from_facts(g), qin = from_facts(q);
    CHECK(gin.me.weight_bits == 0);
    REQUIRE(qin.me.weight_bits == 8);
    est::breakdown gb, qb;
    const auto& gs = stage0(gin, gb);
    const auto& qs = stage0(qin, qb);
    const double lin = est::linear_params(llama8b(), false) * double(llama8b().layers);
    // bf16 (2 B) -> uint8 + an fp32 scale and zero per 256 elements
    CHECK(gs.params - qs.params == doctest::Approx(lin * (1.0 - 8.0 / 256.0)).epsilon(0.001));
    CHECK(qs.optimizer == doctest::Approx(gs.optimizer));
    // without GaLore the key changes nothing (Q-GaLore asserts its own optimizer)
    fact_store plain = lf_full(true, "pytorch");
    emit(plain, "training.weight_bits", std::int64_t(8));
    CHECK(from_facts(plain).me.weight_bits == 0);
}
