// Round est25: the caching-allocator model (allocator_sim) on hand-sized requests, and varying step
// lengths (no packing) through it: the reserved growth goes to cache_high_bytes, the point estimate
// does not move, and packing / fixed-length data / expandable segments / other frameworks skip it.
#include <doctest/doctest.h>

#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/allocator_sim.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/varying_lengths.h"
#include "parsers/config/alloc_conf.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;
using oomdx::est::allocator_sim;

namespace {
constexpr std::int64_t MiB = 1 << 20;

// Qwen-1.8B LoRA under HF Trainer at 2048 tokens, as the ms-swift benchmark rows set it up
fact_store hf_lora_job(const std::string& framework = "hf_trainer") {
    fact_store f;
    using test_util::emit;
    emit(f, "model.family", "qwen");
    emit(f, "model.hidden_size", std::int64_t(2048));
    emit(f, "model.num_layers", std::int64_t(24));
    emit(f, "model.num_attention_heads", std::int64_t(16));
    emit(f, "model.num_kv_heads", std::int64_t(16));
    emit(f, "model.head_dim", std::int64_t(128));
    emit(f, "model.intermediate_size", std::int64_t(5504));
    emit(f, "model.vocab_size", std::int64_t(151936));
    test_util::emit_framework(f, framework);
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.finetuning_type", "lora");
    emit(f, "training.lora_rank", std::int64_t(8));
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "training.seq_len", std::int64_t(2048));
    emit(f, "training.load_dtype", "bfloat16");
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "device.capacity_bytes", std::int64_t(80) * 1000000000);
    return f;
}
}  // namespace

TEST_CASE("allocator model: rounding, segment sizes, best fit, splitting") {
    allocator_sim a;
    // 1-10 MiB requests share a 20 MiB segment (kLargeBuffer)
    const int x = a.alloc(3 * MiB + 1);  // rounds to 512 B
    CHECK(a.reserved() == 20 * MiB);
    CHECK(a.allocated() == 3 * MiB + 512);
    const int y = a.alloc(4 * MiB);  // the remainder of the same segment (more than 1 MiB was left)
    CHECK(a.reserved() == 20 * MiB);
    CHECK(a.segments() == 1);
    // an 11 MiB request fits the ~13 MiB left of that segment (best fit; split, 2 MiB remain)
    a.free(a.alloc(11 * MiB));
    CHECK(a.reserved() == 20 * MiB);
    // above 10 MiB with no cached block large enough: a segment of the request rounded up to 2 MiB
    const int z = a.alloc(13 * MiB + 1);
    CHECK(a.reserved() == 20 * MiB + 14 * MiB);
    // not split when at most 1 MiB would remain: the whole 14 MiB block is handed out
    a.free(z);
    const int w = a.alloc(13 * MiB + MiB / 2);
    CHECK(a.allocated() == 3 * MiB + 512 + 4 * MiB + 14 * MiB);
    a.free(w);
    a.free(x);
    a.free(y);
    CHECK(a.allocated() == 0);
    CHECK(a.reserved() == 34 * MiB);  // cached, not returned
}

TEST_CASE("allocator model: a larger request after a smaller one keeps both segments; best fit reuses") {
    allocator_sim a;
    a.free(a.alloc(100 * MiB));
    a.free(a.alloc(120 * MiB));  // no cached block fits: a new segment, the 100 MiB one stays cached
    CHECK(a.reserved() == 220 * MiB);
    CHECK(a.peak_reserved() == 220 * MiB);
    a.free(a.alloc(90 * MiB));   // best fit: the 100 MiB segment, nothing new
    CHECK(a.reserved() == 220 * MiB);
    // blocks of different segments never merge: 2 x 110 MiB free does not serve 200 MiB
    a.free(a.alloc(200 * MiB));
    CHECK(a.reserved() == 420 * MiB);
}

TEST_CASE("allocator model: over the limit the cached whole segments are released and the request retried") {
    allocator_sim a(300 * MiB);
    a.free(a.alloc(100 * MiB));
    a.free(a.alloc(120 * MiB));
    const int big = a.alloc(250 * MiB);  // 220 cached + 250 > 300: release, retry
    CHECK(big >= 0);
    CHECK(a.ooms() == 0);
    CHECK(a.reserved() == 250 * MiB);
    CHECK(a.peak_reserved() <= 300 * MiB);
    // a split segment with a live block is not released: live 250 + 100 > 300 is an OOM
    CHECK(a.alloc(100 * MiB) == -1);
    CHECK(a.ooms() == 1);
}

TEST_CASE("record lengths: halving gaps, as many maxima as the steps are expected to set, full length last") {
    const auto l = est::record_lengths(2048, 4.0 * 151936, 1000);  // H(1000) = 7.49: 7 maxima
    REQUIRE(l.size() == 7);
    CHECK(l.front() == 1024);
    CHECK(l[1] == 1536);
    CHECK(l.back() == 2048);
    // a gap whose largest buffer grows by less than the 2 MiB segment rounding stops the ladder
    const auto s = est::record_lengths(2048, 4096.0, 1000);  // 512 tokens x 4096 B = 2 MiB
    CHECK(s.size() == 3);  // 1024, 1536, then the full length
    CHECK(est::record_lengths(2048, 4.0 * 151936, 1).size() == 1);
}

TEST_CASE("varying lengths: HF Trainer without packing - cache high end above the point, point unchanged") {
    fact_store f = hf_lora_job();
    const estimate_input in = from_facts(f);
    REQUIRE(in.lengths_vary);
    const estimate_result r = estimate(in);
    estimate_input fixed = in;
    fixed.lengths_vary = false;
    const estimate_result rf = estimate(fixed);
    CHECK(r.device_peak_bytes == rf.device_peak_bytes);
    CHECK(r.reserved_peak_bytes == rf.reserved_peak_bytes);
    REQUIRE(!r.varying_lengths.empty());
    CHECK(r.varying_growth_bytes > 0);
    CHECK(r.cache_high_bytes > r.high_bytes);
    CHECK(r.cache_high_bytes <= in.capacity_bytes);
    // the retry frees the cached segments: what the steps need grows far less than what they cache
    CHECK(r.varying_need_bytes < r.varying_growth_bytes / 4);
    bool said = false;
    for (const auto& why : r.interval_reasons)
        said |= why.find("varying sequence lengths: the caching allocator keeps segments of earlier sizes") != std::string::npos;
    CHECK(said);
    CHECK(rf.cache_high_bytes == rf.high_bytes);
    CHECK(rf.varying_lengths.empty());
}

TEST_CASE("varying lengths: packing, fixed-length data, expandable segments, torchtitan - no growth") {
    auto skipped = [](fact_store f) {
        const estimate_input in = from_facts(f);
        const estimate_result r = estimate(in);
        return !in.lengths_vary || (r.varying_lengths.empty() && r.cache_high_bytes == r.high_bytes);
    };
    {
        fact_store f = hf_lora_job();
        test_util::emit(f, "training.packing", true);
        CHECK(skipped(std::move(f)));
    }
    {
        fact_store f = hf_lora_job();
        test_util::emit(f, "training.fixed_length", true);
        CHECK(skipped(std::move(f)));
    }
    {
        fact_store f = hf_lora_job();
        test_util::emit(f, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
        derive_allocator_facts(f);  // as the facts stage reads the setting (parsers/config/alloc_conf)
        const estimate_input in = from_facts(f);
        CHECK(in.expandable_segments);
        CHECK(estimate(in).varying_lengths.empty());
    }
    {
        fact_store f = hf_lora_job();
        test_util::emit(f, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False,max_split_size_mb:128");
        derive_allocator_facts(f);
        CHECK(!from_facts(f).expandable_segments);
    }
    {
        fact_store f = hf_lora_job("torchtitan");
        CHECK(!from_facts(f).lengths_vary);
    }
    {
        fact_store f = hf_lora_job("llama_factory");
        CHECK(from_facts(f).lengths_vary);
    }
}

TEST_CASE("est55: torchtune pads each unpacked batch to its longest sample (padded_collate); packed data does not vary") {
    {
        fact_store f = hf_lora_job("torchtune");
        const estimate_input in = from_facts(f);
        REQUIRE(in.lengths_vary);
        CHECK(!estimate(in).varying_lengths.empty());
    }
    {
        fact_store f = hf_lora_job("torchtune");
        test_util::emit(f, "training.packing", true);  // dataset.packed: every step at max_seq_len
        CHECK(!from_facts(f).lengths_vary);
    }
}

TEST_CASE("varying lengths: the cache high end is capped at the device; no replay when already over the budget") {
    fact_store f = hf_lora_job();
    test_util::emit(f, "device.capacity_bytes", std::int64_t(32) * 1000000000);
    test_util::emit(f, "training.seq_len", std::int64_t(8192));
    const estimate_result r = estimate(from_facts(f));
    REQUIRE(r.fits);
    REQUIRE(!r.varying_lengths.empty());
    CHECK(r.cache_high_bytes <= std::int64_t(32) * 1000000000);  // within the card (rev24: no longer the cap itself)
    CHECK(r.cache_high_bytes > r.high_bytes);
    // rev24: the growth is replayed under what the rest of the job leaves of the card (the allocator releases its
    // cache before it reserves past that), so no figure above fixed-length steps exceeds the device (unlimited it
    // did: 226 GiB on an 80 GB card in an axolotl case)
    CHECK(r.varying_growth_bytes > 0);
    CHECK(r.device_peak_bytes + r.varying_growth_bytes <= std::int64_t(32) * 1000000000);
    // the replay without a device keeps the unlimited figure, past the card (what the cap now prevents)
    const estimate_input in32 = from_facts(f);
    const est::length_replay unlimited = est::replay_job(in32, 6.0);
    const est::length_replay on_card = est::replay_job(in32, 6.0, r.device_peak_bytes);
    CHECK(unlimited.growth > on_card.growth);
    CHECK(on_card.varying_need == unlimited.varying_need);  // the fit verdict's figure does not move
    // the same job on a 24 GB card: over the budget at fixed length, nothing replayed
    test_util::emit(f, "device.capacity_bytes", std::int64_t(24) * 1000000000);
    const estimate_result o = estimate(from_facts(f));
    CHECK(!o.fits);
    CHECK(o.varying_lengths.empty());
    CHECK(o.cache_high_bytes == o.high_bytes);
}

TEST_CASE("varying lengths: a job the point fits and the replayed steps do not - straddles; max_fitting agrees") {
    // Llama 3 8B LoRA r 16 under LLaMA-Factory, 2 x 1248 tokens, RTX 4090 (24 GB): the fixed-length point fits the
    // budget, the replay's need (fragmentation the OOM retry cannot release) takes the high end over it (1152 tokens
    // until est60, whose smaller one-GPU runtime term moved the window where the two disagree)
    fact_store f;
    using test_util::emit;
    test_util::emit_llama8b(f);
    test_util::emit_framework(f, "llama_factory");
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "job.transformers_version", "4.50.0");
    emit(f, "training.finetuning_type", "lora");
    emit(f, "training.lora_rank", std::int64_t(16));
    emit(f, "training.local_batch_size", std::int64_t(2));
    emit(f, "training.seq_len", std::int64_t(1248));
    emit(f, "device.capacity_bytes", std::int64_t(25393994138));
    const estimate_input in = from_facts(f);
    const estimate_result r = estimate(in);
    REQUIRE(r.fits);
    CHECK(r.high_bytes > r.budget_bytes);
    CHECK(r.varying_need_bytes > 0);
    const fit_limits lim = max_fitting(in, true);
    CHECK(lim.max_seq_len < in.seq_len);
    CHECK(max_fitting(in, false).max_seq_len >= in.seq_len);
}

TEST_CASE("rev25: a capped replay states the growth under the card, the unlimited growth and the need as separate figures") {
    // rev24 capped the printed growth under the card but kept the verdict's need from the unlimited replay, and the
    // sentence still read "counts only the <need>" beside a growth of another replay. Now a capped replay says both.
    fact_store f = hf_lora_job();
    test_util::emit(f, "device.capacity_bytes", std::int64_t(32) * 1000000000);
    test_util::emit(f, "training.seq_len", std::int64_t(8192));
    const estimate_result r = estimate(from_facts(f));
    REQUIRE(!r.varying_lengths.empty());
    const est::length_replay on_card = est::replay_job(from_facts(f), 6.0, r.device_peak_bytes);
    REQUIRE(on_card.capped);
    CHECK(on_card.completes);
    CHECK(on_card.limit > 0);
    CHECK(on_card.unlimited_growth > on_card.growth);  // the unlimited figure is kept, and said
    CHECK(on_card.growth == r.varying_growth_bytes);
    std::string why;
    for (const auto& s : r.interval_reasons)
        if (s.rfind("varying sequence lengths", 0) == 0) why = s;
    REQUIRE(!why.empty());
    CHECK(why.find("with no device limit would leave max_memory_reserved") != std::string::npos);
    CHECK(why.find("the rest of the job leaves of the card") != std::string::npos);
    CHECK(why.find("The fit verdict counts the ") != std::string::npos);
    CHECK(why.find("counts only") == std::string::npos);  // no "only" beside a figure from another replay
    // unlimited (no capacity): nothing capped, the old sentence
    const est::length_replay free_run = est::replay_job(from_facts(f), 6.0);
    CHECK_FALSE(free_run.capped);
    CHECK(free_run.unlimited_growth == free_run.growth);
}
