// Low-precision recipes, the loss phase, the caching-allocator model, async TP, the interval and
// max_fitting(). Numbers worked out inline.
#include <doctest/doctest.h>

#include <algorithm>

#include <string>
#include <utility>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"

using namespace oomdx;

namespace {

provenance test_prov() {
    provenance p;
    p.producer = "test";
    return p;
}

estimate_input llama8b_fsdp(std::int64_t n) {
    estimate_input in;
    in.model.family = "llama";
    in.model.hidden = 4096;
    in.model.layers = 32;
    in.model.heads = 32;
    in.model.kv_heads = 8;
    in.model.head_dim = 128;
    in.model.ffn = 14336;
    in.model.vocab = 128256;
    in.framework = train_framework::torchtitan;
    in.world = n;
    in.dp_shard = n;
    in.zero_stage = 3;
    in.micro_batch = 2;
    in.seq_len = 8192;
    in.ac = ac_kind::selective_op;
    return in;
}

// Llama 3 8B dimensions on torchtitan, 8 ranks, PP 4, local batch 16 x 4096.
fact_store llama8b_pp4_facts() {
    fact_store f;
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    e("model.hidden_size", std::int64_t(4096));
    e("model.num_layers", std::int64_t(32));
    e("model.num_attention_heads", std::int64_t(32));
    e("model.num_kv_heads", std::int64_t(8));
    e("model.intermediate_size", std::int64_t(14336));
    e("model.vocab_size", std::int64_t(128256));
    e("job.framework", "torchtitan");
    e("job.world_size", std::int64_t(8));
    e("parallelism.pipeline_parallel_degree", std::int64_t(4));
    e("training.local_batch_size", std::int64_t(16));
    e("training.seq_len", std::int64_t(4096));
    return f;
}

// A small GPT (12 x 512, vocab 50432) on Megatron-LM, 8 ranks, micro-batch 4 x 1024.
fact_store small_megatron_gpt_facts() {
    fact_store f;
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    e("model.family", "gpt");
    e("model.hidden_size", std::int64_t(512));
    e("model.num_layers", std::int64_t(12));
    e("model.num_attention_heads", std::int64_t(8));
    e("model.intermediate_size", std::int64_t(2048));
    e("model.vocab_size", std::int64_t(50432));
    e("job.framework", "megatron");
    e("job.world_size", std::int64_t(8));
    e("training.local_batch_size", std::int64_t(4));
    e("training.seq_len", std::int64_t(1024));
    return f;
}

bool mentions(const estimate_result& r, const char* what) {
    for (const auto& s : r.interval_reasons)
        if (s.find(what) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("MXFP8 keeps each converted linear's quantized dgrad weight until backward only in torchtitan builds since 2026-08-21") {
    estimate_input in = llama8b_fsdp(4);
    in.lowp = lowp_kind::mxfp8;
    est::breakdown b;
    const double linear = 32 * est::linear_params(in.model, false);
    // torchtitan's own MXFP8 linear (01f0ffad1, 2026-08-21) saves the quantized dgrad weight
    in.framework_date = 20260821;
    est::compute(in, b);
    CHECK(b.stages[0].lowp_saved == doctest::Approx(linear * (1.0 + 1.0 / 32.0)));
    in.ac = ac_kind::full;  // full AC recomputes it
    est::compute(in, b);
    CHECK(b.stages[0].lowp_saved == 0.0);
    in.ac = ac_kind::selective_op;
    // the day before: torchao's mx_mm saves the bf16 input and the FSDP-managed weight, nothing extra
    in.framework_date = 20260820;
    est::compute(in, b);
    CHECK(b.stages[0].lowp_saved == 0.0);
    // unknown build: the point estimate does not keep it, the high end does, and a reason says so
    in.framework_date = 0;
    est::compute(in, b);
    CHECK(b.stages[0].lowp_saved == 0.0);
    in.variant = 1;
    est::compute(in, b);
    CHECK(b.stages[0].lowp_saved == doctest::Approx(linear * (1.0 + 1.0 / 32.0)));
    in.variant = 0;
    CHECK(mentions(estimate(in), "since 2026-08-21"));
    in.framework_date = 20250814;
    CHECK_FALSE(mentions(estimate(in), "since 2026-08-21"));
}

TEST_CASE("float8 with FSDP: the unsharded fp8 weights are only in the high end, unless force-recomputed") {
    estimate_input in = llama8b_fsdp(8);
    in.lowp = lowp_kind::float8_tensorwise;
    in.float8 = true;
    const estimate_result r = estimate(in);
    CHECK(r.high_bytes > r.device_peak_bytes);
    CHECK(mentions(r, "force_recompute_fp8_weight_in_bwd"));
    in.fp8_force_recompute = 1;
    const estimate_result f = estimate(in);
    CHECK_FALSE(mentions(f, "force_recompute_fp8_weight_in_bwd"));
    // the point estimate equals bf16's (float8 changes the measured peak by ~0)
    estimate_input bf16 = in;
    bf16.lowp = lowp_kind::none;
    bf16.float8 = false;
    CHECK(double(f.peak_bytes) == doctest::Approx(double(estimate(bf16).peak_bytes)).epsilon(0.02));
}

TEST_CASE("float8 all-gather under PP: fp8 unsharded linears with dp_shard > 1, bf16 with FSDP over CP alone (torchtitan)") {
    // torchtitan keeps every stage unsharded under PP; its float8 handler enables the fp8 all-gather only
    // when data_parallel_shard_degree > 1, so FSDP 1 x CP 2 all-gathers (and keeps) bf16 linears
    estimate_input in = llama8b_fsdp(2);
    in.pp = 2;
    in.world = 4;
    in.ac = ac_kind::full;
    in.lowp = lowp_kind::float8_tensorwise;
    in.float8 = true;
    in.num_microbatches = 2;
    in.micro_batch = 1;
    auto fwd_temp = [](const estimate_input& x, bool ag) {
        estimate_input y = x;
        y.fp8_all_gather = ag;
        est::breakdown b;
        est::compute(y, b);
        return std::pair<double, double>(b.stages[0].temp_forward, b.stages[0].params_rank);
    };
    // dp_shard 2: the kept unsharded linears are fp8, 1 B per parameter less than bf16
    const auto [on, params] = fwd_temp(in, true);
    const double lin_params = params - 128256.0 * 4096.0 - 16.0 * 2.0 * 4096.0;  // 16 layers + embedding
    CHECK(fwd_temp(in, false).first - on >= lin_params);
    // dp_shard 1 x CP 2 (same sharding degree): the option changes nothing
    in.dp_shard = 1;
    in.cp = 2;
    in.seq_len = 16384;
    CHECK(fwd_temp(in, true).first == doctest::Approx(fwd_temp(in, false).first));
    // from facts: the assumption says why
    fact_store f = llama8b_pp4_facts();
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    e("parallelism.context_parallel_degree", std::int64_t(2));
    e("parallelism.data_parallel_shard_degree", std::int64_t(1));
    e("quantize.linear.float8", true);
    e("quantize.linear.float8_all_gather", true);
    const estimate_input fi = from_facts(f);
    bool said = false;
    for (const auto& s : fi.assumptions) said = said || s.find("float8 all-gather not applied") != std::string::npos;
    CHECK(said);
}

// Llama 3 8B on one device, torchtune's chunked loss (the two loss-phase cases below)
static estimate_input torchtune_chunked_one_device() {
    estimate_input in = llama8b_fsdp(1);
    in.dp_shard = 1;
    in.world = 1;
    in.zero_stage = 0;
    in.framework = train_framework::torchtune;
    in.chunked_loss = true;
    return in;
}

TEST_CASE("loss phase: chunked (torchtune) vs fused in the loss (torchtitan), compiled loss as the low end") {
    const estimator_constants& k = estimator_k();
    estimate_input in = torchtune_chunked_one_device();
    est::breakdown b;
    est::compute(in, b);
    const double tokens = 16384, V = 128256, h = 4096;
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_chunked_eager + tokens * 2 * h));  // eager (est55)
    in.framework = train_framework::torchtitan;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_fused + tokens * 6 * h));
    in.chunked_loss = false;
    in.compile = true;
    in.variant = -1;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_compiled + tokens * 2 * h));
    // only the previous step's freed gradients stay stranded (zero_grad sets them to None), less the blocks the
    // forward's 128 MiB hidden-state tensors reuse (est53: the fp32 MLP and embedding gradients, up to the activations)
    // (4 B gradients: gate / up / down blocks of 235 MB and the untied embedding and head fit; q, k, v, o do not)
    const double fits = (3.0 * 4096 * 14336 * 32 + 2.0 * 128256 * 4096) * 4.0;
    const double reused = std::min({fits, b.stages[0].activations, b.stages[0].grads});
    CHECK(b.stages[0].stranded_loss == doctest::Approx(b.stages[0].grads - reused));
    in.variant = 0;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_unfused + tokens * 2 * h));
    // the freed bf16 logits (2 B per element) stay cached while the fp32 buffers are allocated
    CHECK(b.stages[0].stranded_loss ==
          doctest::Approx(tokens * V * 2.0 + b.stages[0].grads - std::min({fits, b.stages[0].activations, b.stages[0].grads})));
    // torchtitan compiles the loss from bbb1b616 (2025-04-02); d1f62be7 (2025-02-20) kept it commented out
    in.framework_date = 20250401;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_unfused + tokens * 2 * h));
    in.framework_date = 20250402;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(tokens * V * k.logits_bytes_compiled + tokens * 2 * h));
}

TEST_CASE("loss phase: torchtune compiles compute_cross_entropy with compile on (bf16 chunks, head gradient over chunks)") {
    const estimator_constants& k = estimator_k();
    estimate_input in = torchtune_chunked_one_device();
    in.compile = false;
    est::breakdown b;
    est::compute(in, b);
    const double tokens = 16384, V = 128256, h = 4096, nv = tokens * V, G = V * h * 2.0;
    const double n = k.torchtune_loss_chunks;
    // eager (est55): every chunk's fp32 log-probs are saved for backward beside all bf16 chunks; at the last
    // chunk its fp32 upcast and log-probs are both live: 2 + 4 (n - 1) / n + 2 x 4 / n per element
    CHECK(k.logits_bytes_chunked_eager == doctest::Approx(2.0 + 4.0 * (n - 1.0) / n + 8.0 / n));
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_chunked_eager + tokens * 2 * h));
    // LinearCrossEntropyLoss projects each chunk itself: no chunk's bf16 logits outlive it, every chunk's fp32
    // log-probs stay; the last chunk's bf16 logits and upcast on top: 4 + (2 + 4) / n
    in.chunked_loss_projects = true;
    est::compute(in, b);
    CHECK(k.logits_bytes_linear_ce_eager == doctest::Approx(4.0 + 6.0 / n));
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_linear_ce_eager + tokens * 2 * h));
    in.chunked_loss_projects = false;
    // compiled, trained head (full fine-tuning): bf16 chunks + one chunk's gradient, and the head-weight
    // gradient accumulated over 8 chunks: max(2 NV + G, 1.75 NV + 2 G) above 2.25 NV
    in.compile = true;
    est::compute(in, b);
    const double head = std::max(0.0, std::max(2.0 * nv + G, (2.0 - 2.0 / n) * nv + 2.0 * G) - (2.0 + 2.0 / n) * nv);
    CHECK(k.logits_bytes_chunked_compiled == doctest::Approx(2.0 + 2.0 / n));
    CHECK(head > 0);
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_chunked_compiled + head + tokens * 2 * h));
    // the head term vanishes when the head gradient is small against the logits (long sequences)
    CHECK(est::chunked_head_grad_bytes(1e12, 1e6, 8) == doctest::Approx(0.0));
    CHECK(est::chunked_head_grad_bytes(1e9, 1e9, 8) == doctest::Approx(1.75e9 + 2e9 - 2.25e9));
    CHECK(est::chunked_head_grad_bytes(1e9, 0.3e9, 8) == doctest::Approx(1.75e9 + 0.6e9 - 2.25e9));
    CHECK(est::chunked_head_grad_bytes(1e9, 0.2e9, 8) == doctest::Approx(0.0));  // below 4/n x NV: no term
    // frozen head (LoRA): no head gradient
    in.ft.kind = finetune_kind::lora;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_chunked_compiled + tokens * 2 * h));
    // another framework's chunked loss is not torchtune's
    in.ft.kind = finetune_kind::full;
    in.framework = train_framework::generic;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_chunked + tokens * 2 * h));
}

TEST_CASE("loss phase: torchtune recipes before `del logits` keep the shifted fp32 logits through backward (est27)") {
    const estimator_constants& k = estimator_k();
    estimate_input in = torchtune_chunked_one_device();
    in.chunked_loss = false;
    est::breakdown b;
    const double nv = 16384.0 * 128256.0, h2 = 16384.0 * 2 * 4096;
    CHECK(k.logits_bytes_torchtune_kept == doctest::Approx(k.logits_bytes_unfused + 4.0));
    // single-device / full recipes: 8a98fbaa3 (2024-07-28) added `del logits`
    in.framework_date = 20240727;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_torchtune_kept + h2));
    in.framework_date = 20240728;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(nv * k.logits_bytes_unfused + h2));
    // the LoRA distributed recipe got it first (cb3ed29d7, 2024-06-04)
    in.ft.kind = finetune_kind::lora;
    in.world = 2;
    in.dp_shard = 2;
    in.framework_date = 20240604;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_unfused + b.tokens * 2 * 4096));
    in.framework_date = 20240603;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_torchtune_kept + b.tokens * 2 * 4096));
    // unknown build: the current recipes at the point, the old ones at the high end
    in.framework_date = 0;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_unfused + b.tokens * 2 * 4096));
    in.variant = 1;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_torchtune_kept + b.tokens * 2 * 4096));
    // not torchtune's chunked loss, nor another framework's whole-logits loss
    in.framework_date = 20240101;
    in.variant = 0;
    in.chunked_loss = true;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_chunked_eager + b.tokens * 2 * 4096));
    in.chunked_loss = false;
    in.framework = train_framework::generic;
    est::compute(in, b);
    CHECK(b.stages[0].logits == doctest::Approx(b.tokens * 128256.0 * k.logits_bytes_unfused + b.tokens * 2 * 4096));
}

TEST_CASE("caching allocator: reserved = live peak + what the loss buffers cannot reuse, rounded") {
    const estimator_constants& k = estimator_k();
    estimate_input in = llama8b_fsdp(8);
    est::breakdown b;
    est::compute(in, b);
    const est::stage_figures& s = b.stages[0];
    REQUIRE(s.phase == 1);  // the loss is the peak for this job
    // freed fp32 gradient shards of the previous step, the freed bf16 logits, one layer's freed
    // intermediates
    const double grads = 8030261248.0 * 4 / 8;
    CHECK(s.stranded_loss == doctest::Approx(16384.0 * 128256 * 2 + grads).epsilon(0.001));
    CHECK(b.reserved == doctest::Approx((s.phase_loss + s.stranded_loss + k.stranded_layer_transients * s.layer_transient) *
                                        (1 + k.allocator_rounding)));
    // eager keeps more freed intermediates around than compiled code (fused kernels)
    const double eager = s.layer_transient;
    in.compile = true;
    est::compute(in, b);
    CHECK(b.stages[0].layer_transient < eager);
}

TEST_CASE("async TP: the gathered input and the reduce-scatter input stay in the caching allocator; "
          "symmetric memory holds the P2P workspace") {
    estimate_input in = llama8b_fsdp(4);
    in.tp = 8;
    in.world = 32;
    in.ac = ac_kind::full;
    in.chunked_loss = true;
    est::breakdown plain, async;
    est::compute(in, plain);
    in.async_tp = true;
    const double dev = est::compute(in, async);
    const double tokens = 16384, h = 4096;
    // torch _symmetric_memory: fused_all_gather_matmul allocates the gathered A with new_empty, the fused
    // matmul-reduce-scatter its stacked partials likewise; the workspace is two output chunks (tokens / TP)
    CHECK(async.stages[0].symm == doctest::Approx(2 * (tokens / 8) * 2 * h));
    CHECK(async.stages[0].temp_backward == doctest::Approx(plain.stages[0].temp_backward));
    CHECK(async.reserved == doctest::Approx(plain.reserved));
    CHECK(dev == doctest::Approx(async.reserved + async.runtime + async.stages[0].symm));
}

TEST_CASE("pipeline micro-batch: stated, with the default it assumed and the older default as the high end") {
    fact_store f = llama8b_pp4_facts();
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    const estimate_result r = estimate(from_facts(f));
    CHECK(r.pp_microbatch_size == 1);
    CHECK(r.pp_microbatches == 16);
    CHECK(r.pp_microbatch_note.find("assumed") != std::string::npos);
    CHECK(mentions(r, "pipeline micro-batch size not given"));
    CHECK(r.high_bytes > r.device_peak_bytes);
    e("parallelism.pipeline_parallel_microbatch_size", std::int64_t(4));
    const estimate_result g = estimate(from_facts(f));
    CHECK(g.pp_microbatch_size == 4);
    CHECK(g.pp_microbatches == 4);
    CHECK(g.pp_microbatch_note == "from the config");
}

TEST_CASE("pipeline micro-batch: the build date picks torchtitan's old split; a count is read as given") {
    fact_store f = llama8b_pp4_facts();
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    e("job.framework_date", "2024-12-26");
    const estimate_result r = estimate(from_facts(f));
    CHECK(r.pp_microbatch_size == 4);
    CHECK(r.pp_microbatches == 4);
    CHECK(r.pp_microbatch_note.find("before 2025-04-07") != std::string::npos);
    CHECK_FALSE(mentions(r, "pipeline micro-batch size not given"));
    CHECK_FALSE(mentions(r, "return_outputs"));
    e("job.framework_date", "2025-05");
    CHECK(estimate(from_facts(f)).pp_microbatch_size == 1);
    e("job.framework_date", "not a date");
    const estimate_result u = estimate(from_facts(f));
    CHECK(u.pp_microbatch_size == 1);
    CHECK(mentions(u, "return_outputs"));
    e("parallelism.pipeline_parallel_microbatches", std::int64_t(8));
    const estimate_result c = estimate(from_facts(f));
    CHECK(c.pp_microbatch_size == 2);
    CHECK(c.pp_microbatches == 8);
    CHECK(c.pp_microbatch_note == "from the config");
}

TEST_CASE("max_fitting: the largest micro-batch and sequence length within the budget") {
    estimate_input in = llama8b_fsdp(8);
    in.capacity_bytes = std::int64_t(80) << 30;
    in.micro_batch = 1;
    const fit_limits l = max_fitting(in, false);
    REQUIRE(l.max_micro_batch >= 1);
    REQUIRE(l.max_seq_len >= 1);
    const double budget = double(in.capacity_bytes) * estimator_k().budget_fraction;
    estimate_input x = in;
    x.micro_batch = l.max_micro_batch;
    CHECK(double(estimate_device_peak(x)) <= budget);
    x.micro_batch = l.max_micro_batch + 1;
    CHECK(double(estimate_device_peak(x)) > budget);
    x = in;
    x.seq_len = l.max_seq_len;
    CHECK(double(estimate_device_peak(x)) <= budget);
    // rounded down to a length a person would write (a thirty-second of its power of two), never by more than that
    x.seq_len = l.max_seq_len + l.max_seq_len / 16;
    CHECK(double(estimate_device_peak(x)) > budget);
    // the high end is never more permissive
    const fit_limits hi = max_fitting(in, true);
    CHECK(hi.max_micro_batch <= l.max_micro_batch);
    // with TP 8 and sequence parallelism every rank holds seq / 8 tokens: the length must split
    estimate_input t = in;
    t.tp = 8;
    t.sequence_parallel = true;
    const fit_limits lt = max_fitting(t, false);
    REQUIRE(lt.max_seq_len > 0);
    CHECK(lt.max_seq_len % 8 == 0);
    in.capacity_bytes = 0;
    CHECK(max_fitting(in).max_micro_batch == -1);
}

TEST_CASE("rev40 max_fitting: the smallest TP within a node that fits at the job's batch and sequence") {
    // Llama 3 8B on 8 ranks at micro-batch 4 x 8192, selective AC: over an 40 GiB budget without TP
    estimate_input in = llama8b_fsdp(8);
    in.micro_batch = 4;
    in.capacity_bytes = std::int64_t(44) << 30;
    in.node_ranks = 8;
    const double budget = double(in.capacity_bytes) * estimator_k().budget_fraction;
    REQUIRE(double(estimate_device_peak(in)) > budget);
    const fit_limits l = max_fitting(in, false);
    REQUIRE(l.min_tp > 1);
    CHECK(l.min_tp <= 8);
    auto at = [&](std::int64_t t) {
        estimate_input x = in;
        x.tp = t;
        x.sequence_parallel = true;
        x.dp_shard = in.world / t;
        return double(estimate_device_peak(x));
    };
    CHECK(at(l.min_tp) <= budget);
    CHECK(at(l.min_tp / 2) > budget);  // the smallest: half of it is over (TP 1 is the job itself)
    // TP 8 already: nothing searched
    estimate_input t8 = in;
    t8.tp = 8;
    t8.dp_shard = 1;
    CHECK(max_fitting(t8, false).min_tp == -1);
    // a node of 2 ranks, where TP 2 is over: none fits within it
    estimate_input small = in;
    small.node_ranks = 2;
    if (at(2) > budget) CHECK(max_fitting(small, false).min_tp == 0);
    // a world size TP does not divide (6 ranks: TP 4 and 8 leave ranks over) is never proposed
    estimate_input six = llama8b_fsdp(6);
    six.micro_batch = 4;
    six.capacity_bytes = in.capacity_bytes;
    const fit_limits l6 = max_fitting(six, false);
    CHECK((l6.min_tp <= 0 || 6 % l6.min_tp == 0));
}

TEST_CASE("Megatron fused cross-entropy (native): one more compiled fp32 copy of the logits, two at the high end") {
    // GPT 12 x 512, TP 2: 4 x 1024 tokens x 50432 / 2 vocab on the last stage
    fact_store f = small_megatron_gpt_facts();
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    e("parallelism.tensor_parallel_degree", std::int64_t(2));
    estimate_input in = from_facts(f);
    CHECK(in.ce_fusion == 0);
    est::breakdown plain;
    est::compute(in, plain);
    CHECK(plain.logits_bpe == 6.0);  // bf16 logits + fp32 softmax, in place (tensor_parallel/cross_entropy.py)

    e("training.cross_entropy_fusion", "native");
    in = from_facts(f);
    CHECK(in.ce_fusion == 1);
    est::breakdown fused;
    est::compute(in, fused);
    CHECK(fused.logits_bpe == 10.0);
    const double elements = 4.0 * 1024 * 50432 / 2;
    CHECK(fused.stages.back().logits - plain.stages.back().logits == doctest::Approx(4.0 * elements));
    in.variant = 1;
    est::compute(in, fused);
    CHECK(fused.logits_bpe == 14.0);
    const estimate_result r = estimate(from_facts(f));
    CHECK(mentions(r, "fused cross-entropy"));
    CHECK(r.high_bytes > r.device_peak_bytes);

    // TE's kernel is not the compiled path: the unfused figure stays
    e("training.cross_entropy_fusion_impl", "te");
    CHECK(from_facts(f).ce_fusion == 2);
    est::compute(from_facts(f), plain);
    CHECK(plain.logits_bpe == 6.0);
}

TEST_CASE("compiled op-level SAC (torchtitan): w2's output, read by no backward op, only leaves the low end (est29)") {
    estimate_input in = llama8b_fsdp(8);
    in.compile = true;
    const double h = 4096.0;
    estimate_input lo = in;
    lo.variant = -1;
    // low end: the partitioner keeps what backward reads; the point keeps eager SAC's set
    CHECK(est::layer_activation(in, false).saved - est::layer_activation(lo, false).saved == doctest::Approx(2.0 * h));
    CHECK(mentions(estimate(in), "w2's saved output"));
    // eager SAC stores every MUST_SAVE output: no difference, no reason
    in.compile = false;
    lo.compile = false;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(est::layer_activation(lo, false).saved));
    CHECK_FALSE(mentions(estimate(in), "w2's saved output"));
}

TEST_CASE("torchtitan root unit before 2025-07-28: embedding and head unsharded through forward and backward (high end, est29)") {
    estimate_input in = llama8b_fsdp(8);
    in.compile = true;
    in.framework_date = 20250611;  // before 83e694105: root holds tok_embeddings, norm, output
    const estimate_result before = estimate(in);
    CHECK(mentions(before, "root unit"));
    in.framework_date = 20250814;  // after: separate units, the head held only to its backward
    const estimate_result after = estimate(in);
    CHECK_FALSE(mentions(after, "root unit"));
    CHECK(before.device_peak_bytes == after.device_peak_bytes);  // the point is the same on both sides
    // the high end adds at least the embedding's unsharded bf16 copy (128256 x 4096 x 2 B)
    CHECK(double(before.high_bytes) - double(after.high_bytes) >= 128256.0 * 4096.0 * 2.0 * 0.99);
}

TEST_CASE("torchtitan root unit before 2025-07-28: its fp32 reduce-scatter input needs a new segment when no cached block fits (est37)") {
    estimate_input in = llama8b_fsdp(8);
    in.micro_batch = 1;
    in.seq_len = 4096;  // eager fp32 logits blocks: 4096 x 128256 x 4 B = 2.1 GB
    in.ac = ac_kind::full;
    in.framework_date = 20250107;  // root = tok_embeddings + norm + output: 2 x 128256 x 4096 x 4 B = 4.2 GB
    const estimate_result before = estimate(in);
    CHECK(before.reserved_note.find("new segment") != std::string::npos);
    in.framework_date = 20250814;  // after the split the head's own reduce-scatter block serves the embedding's
    const estimate_result after = estimate(in);
    CHECK(after.reserved_note.find("new segment") == std::string::npos);
    CHECK(double(before.reserved_peak_bytes) - double(after.reserved_peak_bytes) >= 2.0 * 128256.0 * 4096.0 * 4.0 * 0.99);
    // 8192 tokens: the fp32 logits blocks (4.2 GB) are as large as the root's buffer, which reuses one
    in.seq_len = 8192;
    in.framework_date = 20250107;
    CHECK(estimate(in).reserved_note.find("new segment") == std::string::npos);
    // undated: neither side is claimed
    in.seq_len = 4096;
    in.framework_date = 0;
    CHECK(estimate(in).reserved_note.find("new segment") == std::string::npos);
}

TEST_CASE("cuDNN attention first on SM100 (torchtitan 2025-05-14 .. 2025-12-01): the SDPA output is recomputed under op SAC (est29)") {
    estimate_input in = llama8b_fsdp(8);
    in.compile = true;
    in.device_id = "b200";
    const double h = 4096.0, heads = 32.0;
    estimate_input flash = in;
    flash.device_id = "h100-80gb";  // flash attention first: its op is in the save list
    in.framework_date = flash.framework_date = 20250814;
    CHECK(est::layer_activation(flash, false).saved - est::layer_activation(in, false).saved == doctest::Approx(2.0 * h + 4.0 * heads));
    // before torchtitan put cuDNN first, and after the save list named every SDPA backend: saved as on H100
    in.framework_date = 20250501;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(est::layer_activation(flash, false).saved));
    in.framework_date = 20251201;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(est::layer_activation(flash, false).saved));
    // unknown build: kept in the point, dropped at the low end, and the estimate says why
    in.framework_date = 0;
    CHECK(est::layer_activation(in, false).saved == doctest::Approx(est::layer_activation(flash, false).saved));
    estimate_input lo = in;
    lo.variant = -1;
    CHECK(est::layer_activation(lo, false).saved < est::layer_activation(in, false).saved);
    CHECK(mentions(estimate(in), "cuDNN attention"));
    CHECK_FALSE(mentions(estimate(flash), "cuDNN attention"));
}

TEST_CASE("Megatron cross-entropy before the in-place shift (2024-06-13): a second fp32 copy of the logits (est35)") {
    fact_store f = small_megatron_gpt_facts();
    auto e = [&](const char* n, value v) { f.emit(n, std::move(v), test_prov()); };
    auto bpe = [&]() {
        est::breakdown b;
        est::compute(from_facts(f), b);
        return b.logits_bpe;
    };
    CHECK(bpe() == 6.0);  // no date: today's in-place path
    e("job.framework_date", "2023-06-05");
    CHECK(bpe() == 10.0);
    e("job.framework_date", "2024-06-13");
    CHECK(bpe() == 6.0);
    e("job.framework_date", "2024-06-12");
    CHECK(bpe() == 10.0);
}
