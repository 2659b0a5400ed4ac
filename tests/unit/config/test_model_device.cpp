#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/device_catalog.h"
#include "parsers/config/model_dims.h"

using namespace oomdx;

static const std::string fixtures = std::string(OOMDX_TEST_DIR) + "/fixtures/models/";

TEST_CASE("every preset's parameter count is within 0.5% of the published count, or of its rounding") {
    REQUIRE(model_presets().size() >= 70);
    for (const auto& m : model_presets()) {
        CAPTURE(m.name);
        REQUIRE(m.published_param_count > 0);
        // A model card's "1.7B" is 1,700,000,000 in the preset: half its last digit is the tolerance.
        std::int64_t unit = 1;
        while (m.published_param_count % (unit * 10) == 0) unit *= 10;
        // a vision-language model's published count includes its vision tower
        const double off = std::fabs(double(param_count(m) + m.vision_params - m.published_param_count));
        CHECK(off <= std::max(0.005 * double(m.published_param_count), 0.5 * double(unit)));
        CHECK(active_param_count(m) <= param_count(m));
    }
}

TEST_CASE("exact counts for reference models") {
    CHECK(param_count(load_model("llama3-8b")) == 8030261248);
    CHECK(param_count(load_model("Llama-3-70B")) == 70553706496);
    CHECK(param_count(load_model("qwen3-30b-a3b")) == 30532122624);
    CHECK(active_param_count(load_model("qwen3-30b-a3b")) == 3353032704);
    CHECK(param_count(load_model("mixtral-8x7b")) == 46702792704);
    CHECK(active_param_count(load_model("mixtral-8x7b")) == 12879925248);
    CHECK(param_count(load_model("deepseek-v3-671b")) == 671026419200);
    CHECK(active_param_count(load_model("deepseek-v3")) == 37552282624);
    // knowledge.md says 15706485888: it counts a router bias V2-Lite does not have (26 x 64).
    CHECK(param_count(load_model("deepseek-v2-lite")) == 15706484224);
    CHECK(param_count(load_model("qwen2.5-7b")) == 7615616512);
    CHECK(param_count(load_model("gpt3-175b")) == 174604259328);
    CHECK(param_count(load_model("qwen3-8b")) == 8190735360);
    CHECK(param_count(load_model("llama2-7b")) == 6738415616);
}

TEST_CASE("preset spellings") {
    for (const char* s : {"llama3-8b", "Llama-3-8B", "meta-llama/Meta-Llama-3-8B", "llama3_8b", "LLAMA3-8B",
                          "Meta-Llama-3-8B", "llama3/8B", "Llama-3.1-8B"}) {
        CAPTURE(s);
        CHECK(load_model(s).name == "llama3-8b");
    }
    CHECK(load_model("Qwen/Qwen3-235B-A22B").name == "qwen3-235b-a22b");
    CHECK_THROWS_AS(load_model("no-such-model-xyz"), input_error);
}

TEST_CASE("hub ids of tuned and re-released variants resolve to their base preset, other tails do not") {
    struct c { const char* hub; const char* id; };
    for (auto [hub, id] : {c{"Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b"}, c{"deepseek-ai/DeepSeek-V3-0324", "deepseek-v3-671b"},
                           c{"deepseek-ai/DeepSeek-V3-0324-BF16", "deepseek-v3-671b"},
                           c{"deepseek-ai/DeepSeek-R1-0528", "deepseek-v3-671b"},
                           c{"mistralai/Mistral-7B-v0.2", "mistral-7b"},  // v0.2 keeps v0.1's dimensions
                           c{"mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"},  // its own preset first
                           c{"mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"},
                           c{"Qwen/Qwen2-1.5B-Instruct", "qwen2.5-1.5b"}, c{"Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-7b"},
                           c{"meta-llama/Llama-3.3-70B-Instruct", "llama3-70b"}, c{"Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b"},
                           c{"google/gemma-3-1b-it", "gemma3-1b"}, c{"THUDM/glm-4-9b-chat", "glm4-9b"},
                           c{"google/gemma-3-4b-it", "gemma3-4b"}}) {
        CAPTURE(hub);
        const model_dims* m = find_model_preset(hub);
        REQUIRE(m != nullptr);
        CHECK(m->name == id);
    }
    // not variants of a preset: a long-context build, a GGUF file, a version tail on a name without a size (which
    // would leave "DeepSeek"), another size, the vision-language or hybrid-attention sibling of a text preset
    for (const char* hub : {"Qwen/Qwen2.5-7B-Instruct-1M", "Qwen/Qwen3-4B-GGUF", "deepseek-ai/DeepSeek-V4",
                            "Qwen/Qwen2.5-9B-Instruct", "Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3.5-4B",
                            "Qwen/Qwen3-VL-32B-Instruct", "google/gemma-3n-E2B-it"}) {
        CAPTURE(std::string(hub));
        CHECK(find_model_preset(hub) == nullptr);
    }
}

TEST_CASE("vision-language presets: the language model's count plus the vision tower, as a fact") {
    const model_dims vl = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
    CHECK(param_count(vl) == param_count(load_model("qwen2.5-7b")));  // the language model only
    CHECK(vl.vision_params == 676552704);
    CHECK(param_count(vl) + vl.vision_params == 8292169216);
    fact_store store(&vocabulary::shipped());
    emit_facts(vl, store);
    CHECK(store.integer("model.vision_params") == 676552704);
    fact_store text(&vocabulary::shipped());
    emit_facts(load_model("qwen2.5-7b"), text);
    CHECK_FALSE(text.has("model.vision_params"));
    // ChatGLM / GLM-4 carry a QKV bias: (4096 + 2 x 256) per layer
    const model_dims glm = load_model("glm4-9b");
    CHECK(glm.attention_bias);
    CHECK(param_count(glm) == 9399951360);
}

TEST_CASE("device lookup by common spellings") {
    struct c { const char* s; const char* id; };
    for (auto [s, id] : {c{"h100", "h100-80gb"}, c{"H100-80GB", "h100-80gb"}, c{"NVIDIA H100 80GB HBM3", "h100-80gb"},
                         c{"910B3", "ascend-910b3"}, c{"Ascend910B", "ascend-910b3"}, c{"Ascend910B3", "ascend-910b3"},
                         c{"a100", "a100-80gb"}, c{"A100-SXM4-40GB", "a100-40gb"}, c{"h200", "h200-141gb"},
                         c{"RTX 4090", "rtx4090"}, c{"mi300x", "mi300x"}, c{"Atlas A3", "ascend-910c-die"}}) {
        CAPTURE(s);
        auto d = lookup_device(s);
        REQUIRE(d.has_value());
        CHECK(d->id == id);
    }
    CHECK_FALSE(lookup_device("toaster").has_value());
    auto h100 = lookup_device("h100");
    // An 80 GB card reports about 79.1 GiB.
    CHECK(std::fabs(double(h100->capacity_bytes) / (1024.0 * 1024 * 1024) - 79.1) < 0.05);
    CHECK(h100->nominal_bytes == 80LL * 1024 * 1024 * 1024);
    CHECK(h100->kind == "cuda");
    CHECK(lookup_device("910b3")->kind == "npu");
    for (const auto& d : all_devices()) {
        CAPTURE(d.id);
        CHECK(d.capacity_bytes > 0);
        CHECK(d.capacity_bytes <= d.nominal_bytes);
    }
}

TEST_CASE("device from an OOM message's total capacity") {
    auto d = device_from_capacity(static_cast<std::int64_t>(79.15 * 1024 * 1024 * 1024));
    CHECK(d.id == "a100-80gb");
    auto npu = device_from_capacity(static_cast<std::int64_t>(60.96 * 1024 * 1024 * 1024), "npu");
    CHECK(npu.kind == "npu");
    CHECK(device_from_capacity(12345, "cuda").id == "unknown");
}

TEST_CASE("model and device facts follow the vocabulary") {
    fact_store store(&vocabulary::shipped());
    emit_facts(load_model("deepseek-v3"), store);
    emit_facts(*lookup_device("h100"), store, "catalog");
    CHECK(store.integer("model.num_experts") == 256);
    CHECK(store.integer("model.param_count") == 671026419200);
    CHECK(store.string("device.id") == "h100-80gb");
    CHECK(store.get("device.capacity_bytes")->prov.line > 0);
}

TEST_CASE("HF config.json") {
    auto m = load_model(fixtures + "qwen3_moe_config.json");
    CHECK(m.family == "qwen3_moe");
    CHECK(m.num_experts == 128);
    CHECK(param_count(m) == 30532122624);
    CHECK(m.source.line > 1);
    auto ds = load_model(fixtures + "deepseek_v2_lite_config.json");
    CHECK(ds.q_lora_rank == 0);
    CHECK(param_count(ds) == 15706484224);
    auto mx = load_model(fixtures + "mixtral_config.json");
    CHECK(mx.num_experts == 8);
    CHECK(param_count(mx) == 46702792704);
    auto qw = load_model(fixtures + "qwen2.5_7b_config.json");
    CHECK(qw.attention_bias);
    CHECK(param_count(qw) == 7615616512);
    auto v3 = load_model(fixtures + "deepseek_v3_config.json");
    CHECK(param_count(v3) == 671026419200);
    CHECK(active_param_count(v3) == 37552282624);
    auto l = load_model(fixtures + "llama3_8b_config.json");
    CHECK(param_count(l) == 8030261248);
    // est41: Arcee AFM's ReLU^2 MLP has no gate; HunYuan dense V1 says use_qk_norm (dims as the models' config.json)
    const model_dims afm = load_model(fixtures + "arcee_afm_4.5b_config.json");
    CHECK_FALSE(afm.gated_mlp);
    CHECK(param_count(afm) > 4'400'000'000);
    CHECK(param_count(afm) < 4'700'000'000);
    const model_dims hy = load_model(fixtures + "hunyuan_0.5b_config.json");
    CHECK(hy.qk_norm);
    CHECK(hy.gated_mlp);
    CHECK_THROWS_AS(load_model(fixtures + "broken_config.json"), input_error);
    try {
        load_model(fixtures + "broken_config.json");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()).find("broken_config.json:") != std::string::npos);
    }
}

TEST_CASE("torchtitan flavor files") {
    CHECK(param_count(load_model(fixtures + "llama3_flavors.py:8B")) == 8030261248);
    CHECK(param_count(load_model(fixtures + "llama3_flavors.py:70B")) == 70553706496);
    CHECK(param_count(load_model(fixtures + "llama3_flavors.py:405B")) == 405853388800);
    CHECK(load_model(fixtures + "llama3_flavors.py:8B").intermediate_size == 14336);
    CHECK(param_count(load_model(fixtures + "deepseek_flavors.py:16B")) == 15706484224);
    CHECK(param_count(load_model(fixtures + "deepseek_flavors.py:671B")) == 671026419200);
    CHECK(param_count(load_model(fixtures + "deepseek_flavors.py:30B-A3B")) == 30532122624);
    auto q = load_model(fixtures + "deepseek_flavors.py:1.7B");
    CHECK(q.tie_word_embeddings);
    CHECK(std::fabs(double(param_count(q)) / 1.72e9 - 1.0) < 0.01);
    CHECK_THROWS_AS(load_model(fixtures + "llama3_flavors.py:3B"), input_error);
    CHECK_THROWS_AS(load_model(fixtures + "llama3_flavors.py"), input_error);
}

TEST_CASE("Megatron / MindSpeed scripts as model dimensions") {
    const std::string cfg = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";
    auto ds = load_model(cfg + "mindspeed/pretrain_deepseek3_671b_4k.sh");
    CHECK(ds.family == "deepseek_v3");
    CHECK(std::fabs(double(param_count(ds)) / 671026419200.0 - 1.0) < 0.005);
    CHECK(ds.source.line > 0);
    auto q = load_model(cfg + "mindspeed/pretrain_qwen25_72b_32k.sh");
    CHECK(q.num_kv_heads == 8);
    // No vocabulary in the script: a clear error.
    CHECK_THROWS_AS(load_model(cfg + "megatron/pretrain_llama3_8b.sh"), input_error);
}

TEST_CASE("hub ids find their preset: the name after the org, then without a tuned variant's suffix") {
    auto id = [](const char* s) {
        const model_dims* m = find_model_preset(s);
        return m ? m->name : std::string("(none)");
    };
    CHECK(id("meta-llama/Meta-Llama-3-8B-Instruct") == "llama3-8b");
    CHECK(id("meta-llama/Meta-Llama-3.1-8B-Instruct") == "llama3-8b");
    CHECK(id("meta-llama/Llama-3.3-70B-Instruct") == "llama3-70b");
    CHECK(id("meta-llama/Llama-2-7b-chat-hf") == "llama2-7b");
    CHECK(id("google/gemma-2-9b-it") == "gemma2-9b");
    CHECK(id("Qwen/Qwen3-4B-Instruct-2507") == "qwen3-4b");
    CHECK(id("Qwen/Qwen3-1.7B") == "qwen3-1.7b");
    CHECK(id("mistralai/Mistral-7B-Instruct-v0.3") == "mistral-7b-v0.3");  // 32768-token vocabulary
    CHECK(id("mistralai/Mistral-7B-Instruct-v0.2") == "mistral-7b");
    // Not the same architecture, or not a known size: no guess.
    CHECK(id("Qwen/Qwen2.5-7B-Instruct-1M") == "(none)");
    CHECK(id("Qwen/Qwen3-2B-Instruct") == "(none)");
    CHECK(id("acme/instruct") == "(none)");
}

TEST_CASE("pre-quantized checkpoints keep their base model's preset, and the name says the width") {
    auto id = [](const char* s) {
        const model_dims* m = find_model_preset(s);
        return m ? m->name : std::string("(none)");
    };
    CHECK(id("unsloth/llama-3-8b-bnb-4bit") == "llama3-8b");
    CHECK(id("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit") == "llama3-8b");
    CHECK(id("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ") == "llama3-8b");
    CHECK(id("TechxGenus/Meta-Llama-3-8B-Instruct-AWQ") == "llama3-8b");
    CHECK(id("ISTA-DASLab/Meta-Llama-3-8B-Instruct-AQLM-2Bit-1x16") == "llama3-8b");
    CHECK(checkpoint_quantization("unsloth/llama-3-8b-bnb-4bit").bits == 4);
    CHECK(checkpoint_quantization("unsloth/llama-3-8b-bnb-4bit").method == "bitsandbytes");
    CHECK(checkpoint_quantization("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ").method == "gptq");
    CHECK(checkpoint_quantization("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8").bits == 8);
    CHECK(checkpoint_quantization("ISTA-DASLab/Meta-Llama-3-8B-Instruct-AQLM-2Bit-1x16").bits == 0);  // not modelled
    // bitsandbytes NF4 checkpoints named "-BNB-NF4" (hugging-quants, axolotl-quants)
    CHECK(checkpoint_quantization("hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16").bits == 4);
    CHECK(checkpoint_quantization("hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16").method == "bitsandbytes");
    CHECK(id("hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16") == "llama3.1-405b");
    CHECK(id("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16") == "llama4-scout-17b-16e");
    CHECK(checkpoint_quantization("acme/model-bnb-nf4x").cut == std::string::npos);
    // Look-alikes: a marker only as a whole part of the name.
    CHECK(checkpoint_quantization("meta-llama/Meta-Llama-3-8B-Instruct").cut == std::string::npos);
    CHECK(checkpoint_quantization("acme/model-awqx-7b").cut == std::string::npos);
    CHECK(checkpoint_quantization("awq/llama").cut == std::string::npos);
}

TEST_CASE("models round 2: counts that reproduce a published total exactly") {
    // dense and MoE presets whose formula count is the HF checkpoint total to the parameter
    CHECK(param_count(load_model("EleutherAI/pythia-1.4b-deduped")) == 1414647808);
    CHECK(param_count(load_model("EleutherAI/pythia-12b")) == 11846072320);
    CHECK(param_count(load_model("stabilityai/stablelm-2-1_6b")) == 1644515328);
    CHECK(param_count(load_model("ByteDance-Seed/Seed-OSS-36B-Instruct")) == 36151104512);
    CHECK(param_count(load_model("mistralai/Ministral-8B-Instruct-2410")) == 8019808256);
    CHECK(param_count(load_model("openlm-research/open_llama_3b_v2")) == 3426473600);
    CHECK(param_count(load_model("zai-org/GLM-4.5-Air")) == 106852251264);
    // vision-language presets: language model + vision_params = the published total
    const model_dims ms = load_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503");
    CHECK(param_count(ms) + ms.vision_params == 24011361280);
    const model_dims llava = load_model("llava-hf/llava-1.5-7b-hf");
    CHECK(param_count(llava) + llava.vision_params == 7063427072);
    // Gemma 2 / 3: four norms a layer (the post-attention and post-feedforward norms too)
    const model_dims g4 = load_model("google/gemma-3-4b-it");
    CHECK(param_count(g4) + g4.vision_params == 4300079472);
    const model_dims g270 = load_model("google/gemma-3-270m-it");
    CHECK(param_count(g270) == 268098176);
    CHECK(param_count(load_model("gemma2-2b")) == 2614341888);
    CHECK(param_count(load_model("gemma2-9b")) == 9241705984);
    // gpt-oss: every layer routed, 4 of 32 experts; the 20.91B of the model card
    const model_dims oss = load_model("openai/gpt-oss-20b");
    CHECK(oss.num_experts == 32);
    CHECK(oss.num_experts_per_tok == 4);
    CHECK(std::fabs(double(param_count(oss)) / 20.91e9 - 1.0) < 0.001);
}

TEST_CASE("models round 2: family flags") {
    const model_dims neox = load_model("EleutherAI/pythia-1.4b");  // GPT-style, rotary: no position table
    CHECK_FALSE(neox.gated_mlp);
    CHECK(neox.attention_bias);
    CHECK(neox.mlp_bias);
    CHECK(neox.norm_bias);
    CHECK_FALSE(neox.learned_pos);
    const model_dims sc2 = load_model("bigcode/starcoder2-3b");
    CHECK_FALSE(sc2.gated_mlp);
    CHECK(sc2.tie_word_embeddings);
    const model_dims gptj = load_model("EleutherAI/gpt-j-6b");  // biased MLP, no attention biases
    CHECK_FALSE(gptj.gated_mlp);
    CHECK_FALSE(gptj.attention_bias);
    CHECK(gptj.mlp_bias);
    const model_dims slm = load_model("stabilityai/stablelm-2-1_6b");  // SwiGLU with LayerNorm and QKV bias
    CHECK(slm.gated_mlp);
    CHECK(slm.norm_bias);
    CHECK(slm.attention_bias);
    CHECK_FALSE(slm.mlp_bias);
    const model_dims air = load_model("zai-org/GLM-4.5-Air");
    CHECK(air.attention_bias);
    CHECK(air.router_bias);
    CHECK(air.first_k_dense_replace == 1);
    const model_dims flash = load_model("zai-org/GLM-4.7-Flash");  // MLA, no QKV bias
    CHECK(flash.kv_lora_rank == 512);
    CHECK_FALSE(flash.attention_bias);
    CHECK(flash.router_bias);
    CHECK(load_model("allenai/Olmo-3-7B-Instruct-SFT").qk_norm);
    CHECK(load_model("ByteDance-Seed/Seed-OSS-36B-Instruct").attention_bias);
}

TEST_CASE("models round 2: the hub ids of Axolotl's examples resolve, aliases to presets of the same config") {
    struct c { const char* hub; const char* id; };
    for (auto [hub, id] : {c{"google/gemma-3-270m-it", "gemma3-270m"}, c{"google/gemma-3-12b-it", "gemma3-12b"},
                           c{"google/gemma-3-27b-it", "gemma3-27b"}, c{"openai/gpt-oss-safeguard-20b", "gpt-oss-20b"},
                           c{"axolotl-ai-co/gpt-oss-120b-dequantized", "gpt-oss-120b"},
                           c{"mistralai/Magistral-Small-2506", "mistral-small-24b"},
                           c{"mistralai/Magistral-Small-2509", "mistral-small-3.1-24b"},
                           c{"mistralai/Devstral-Small-2507", "mistral-small-24b"},
                           c{"agentica-org/DeepCoder-14B-Preview", "qwen2.5-14b"},
                           c{"deepcogito/cogito-v1-preview-qwen-14B", "qwen2.5-14b"},
                           c{"deepcogito/cogito-v1-preview-llama-3B", "llama3.2-3b"}, c{"huggyllama/llama-7b", "llama2-7b"},
                           c{"Skywork/Skywork-Reward-V2-Qwen3-8B", "qwen3-8b"}, c{"microsoft/phi-2", "phi-2"},
                           c{"alpindale/Llama-3.2-11B-Vision-Instruct", "llama3.2-11b-vision"},
                           c{"allenai/Olmo-3-7B-Instruct-SFT", "olmo3-7b"}, c{"zai-org/GLM-4.7-Flash", "glm4.7-flash"}}) {
        CAPTURE(hub);
        CHECK(load_model(hub).name == id);
    }
    // hybrid linear-attention models stay unknown rather than take a wrong preset
    for (const char* hub : {"Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct", "tiiuae/Falcon-H1-7B-Base"}) {
        CAPTURE(hub);
        CHECK(find_model_preset(hub) == nullptr);
    }
}

TEST_CASE("models round 3: the example configs' unknown ids") {
    struct c { const char* hub; const char* id; };
    for (auto [hub, id] : {c{"Qwen/QwQ-32B", "qwen2.5-32b"}, c{"deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "qwen3-8b"},
                           c{"Qwen/Qwen3-Reranker-4B", "qwen3-4b"}, c{"Qwen/Qwen2.5-VL-3B-Instruct", "qwen2.5-vl-3b"},
                           c{"Qwen/Qwen2.5-VL-72B-Instruct-GPTQ-Int4", "qwen2.5-vl-72b"},
                           c{"Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3-vl-30b-a3b"}, c{"Qwen/Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"},
                           c{"LLM-Research/Llama-4-Scout-17B-16E-Instruct", "llama4-scout-17b-16e"},
                           c{"LnL-AI/dbrx-base-converted-v2", "dbrx-132b"},
                           // torchtune builder names (model._component_ without lora_ / qlora_ / _instruct)
                           c{"phi4_14b", "phi-4"}, c{"llama3_2_vision_11b", "llama3.2-11b-vision"},
                           c{"llama3_2_vision_90b", "llama3.2-90b-vision"},
                           c{"llama4_scout_17b_16e", "llama4-scout-17b-16e"}, c{"llama4_maverick_17b_128e", "llama4-maverick-17b-128e"}}) {
        CAPTURE(hub);
        const model_dims* m = find_model_preset(hub);
        REQUIRE(m != nullptr);
        CHECK(m->name == id);
    }
    // vision towers counted per module (language model + vision_params)
    const model_dims vl3 = load_model("qwen2.5-vl-3b");
    CHECK(vl3.vision_params == 668684288);
    CHECK(param_count(vl3) == param_count(load_model("qwen2.5-3b")));
    const model_dims q8 = load_model("qwen3-vl-8b");
    CHECK(param_count(q8) + q8.vision_params == 8767123696);  // "8.77B"
    const model_dims q30 = load_model("qwen3-vl-30b-a3b");
    CHECK(param_count(q30) == param_count(load_model("qwen3-30b-a3b")));
    // Llama 4: MoE with one shared expert; Scout every layer, Maverick every other layer; 17B active both
    const model_dims scout = load_model("llama4-scout-17b-16e");
    CHECK(param_count(scout) + scout.vision_params == 108641793536);
    CHECK(std::fabs(double(active_param_count(scout)) / 17.17e9 - 1.0) < 0.001);
    const model_dims mav = load_model("llama4-maverick-17b-128e");
    CHECK(std::fabs(double(active_param_count(mav)) / 17.18e9 - 1.0) < 0.001);
    CHECK(param_count(mav) + mav.vision_params == 401583781376);
    // Qwen1.5-MoE's shared expert of 5632 written as 4 of the routed 1408: 14.3B total, 2.7B active
    CHECK(std::fabs(double(active_param_count(load_model("qwen1.5-moe-a2.7b"))) / 2.69e9 - 1.0) < 0.01);
    CHECK(std::fabs(double(active_param_count(load_model("dbrx-132b"))) / 36.0e9 - 1.0) < 0.015);  // "36B active"
    // models25: R1-Distill-Qwen-1.5B unties the embeddings of Qwen2.5-Math-1.5B: its own preset, not an alias
    const model_dims* r1 = find_model_preset("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B");
    REQUIRE(r1 != nullptr);
    CHECK(r1->name == "deepseek-r1-distill-qwen-1.5b");
    CHECK(param_count(*r1) == 1777088000);  // the loaded checkpoint's count, to the parameter
    CHECK(param_count(*r1) - param_count(load_model("qwen2.5-1.5b")) == 151936LL * 1536);  // one more vocab matrix
}
