// Accuracy over the published measurements collected in knowledge/anchors/: LoRA / QLoRA
// fine-tuning runs (each within 15 %), fine-tuning rows held out after the model was built
// (each within 15 % or a documented miss), and pretraining rows outside the development set
// (median and worst error, rows the interval covers counted apart).
#include <doctest/doctest.h>
#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/data_dir.h"
#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "parsers/config/model_dims.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

struct row_result {
    std::string id;
    double measured = 0, estimate = 0, low = 0, high = 0, error = 0;
    double device_error = 0;  // against the device peak (reserved + runtime: what nvidia-smi reads)
    std::string compared;     // the estimate statistic the error is taken against
    bool unstated = false;    // the source does not name its statistic
    bool covered = false;  // the measurement lies inside the estimate's interval
    std::string known_miss;  // why the model misses this row, when it is known to
};

// " (device +1.2%)": an unstated row's error against the device peak, printed beside the allocated one (est59)
std::string fmt_device(double e) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (device %+.1f%%)", 100.0 * e);
    return buf;
}

// OOMDX_ANCHOR_DETAIL=1: each row's own breakdown under it (est64: the rows past 15 % grouped by cause)
void print_breakdown(const estimate_input& in, const estimate_result& r, double u, const char* unit) {
    std::printf("    %s phase, stage %s: allocated %.2f, reserved %.2f, device %.2f (runtime %.2f) %s;",
                r.peak_phase.c_str(), r.worst_stage.c_str(), double(r.peak_bytes) / u, double(r.reserved_peak_bytes) / u,
                double(r.device_peak_bytes) / u, double(r.runtime_bytes) / u, unit);
    for (const auto& c : r.components) std::printf(" %s %.2f", c.id.c_str(), double(c.bytes) / u);
    est::breakdown b;
    est::compute(in, b);
    const auto& st = b.stages.at(std::size_t(r.worst_stage_index));
    std::printf("; phases (allocated): forward %.2f loss %.2f backward %.2f step %.2f\n", st.phase_forward / u,
                st.phase_loss / u, st.phase_backward / u, st.phase_step / u);
}

// Estimates every row of knowledge/anchors/<file> and prints the table.
std::vector<row_result> run_anchors(const std::string& file) {
    const YAML::Node root = YAML::LoadFile(data_path("knowledge/anchors/" + file));
    std::vector<row_result> out;
    std::printf("\n%-40s %-18s %10s %10s %8s  %s\n", "anchor", "statistic>compared", "measured", "estimate", "error",
                "interval");
    for (const auto& a : root["anchors"]) {
        fact_store facts;
        // `model` names a preset, or an entry of the file's `models:` (dims stated by the source)
        const std::string model = a["model"].as<std::string>();
        if (root["models"] && root["models"][model])
            test_util::emit_map(facts, root["models"][model]);
        else
            emit_facts(load_model(model), facts);
        // the framework's semantics as the facts stage emits them; the row's own keys win
        for (const char* part : {"base", "set"})
            if (a[part] && a[part]["job.framework"]) test_util::emit_semantics(facts, a[part]["job.framework"].as<std::string>());
        if (a["base"]) test_util::emit_map(facts, a["base"]);
        if (a["set"]) test_util::emit_map(facts, a["set"]);
        const estimate_input in = from_facts(facts);
        const estimate_result r = estimate(in);
        const std::string stat = a["statistic"].as<std::string>();
        const bool reserved = stat == "reserved";
        // device: nvidia-smi / NVML (a wandb system chart): reserved + memory outside the allocator
        const bool device = stat == "device" || stat == "nvidia-smi";
        double est = double(device ? r.device_peak_bytes : reserved ? r.reserved_peak_bytes : r.peak_bytes);
        if (a["stage"] && a["stage"].as<std::string>() == "last" && !r.stages.empty()) {
            const double scale = device     ? double(r.device_peak_bytes) / double(std::max<std::int64_t>(1, r.peak_bytes))
                                 : reserved ? double(r.reserved_peak_bytes) / double(std::max<std::int64_t>(1, r.peak_bytes)) : 1.0;
            est = double(r.stages.back().peak_bytes) * scale;
        }
        const std::string unit_name = a["unit"].as<std::string>();
        const double unit = unit_name == "GB" ? 1e9 : unit_name == "MiB" ? 1048576.0 : 1073741824.0;
        row_result x;
        x.id = a["id"].as<std::string>();
        x.measured = a["measured"].as<double>() * unit;
        x.estimate = est;
        // the device-peak interval moved onto the compared statistic
        x.low = est + double(r.low_bytes - r.device_peak_bytes);
        // reserved and device readings also keep the cache varying step lengths grow (est25)
        // (allocated: the replay changes only what the allocator caches and how it splits, not the live tensors)
        x.high = est + double(((reserved || device) ? std::max(r.high_bytes, r.cache_high_bytes) : r.fixed_high_bytes) -
                              r.device_peak_bytes);
        // a device reading also shows a paged optimizer's resident states (est65; outside reserved and allocated)
        if (device) x.high = std::max(x.high, double(r.paged_reading_high_bytes));
        // unstated: the source does not say which reading it quotes (max_memory_allocated, max_memory_reserved or
        // nvidia-smi), so the interval runs from the allocated low end to the device high end (est59; est31 stopped
        // at reserved); the point error stays against allocated, and the device error is printed beside it
        const bool unstated = stat == "unstated";
        if (unstated) x.high = double(std::max({r.high_bytes, r.cache_high_bytes, r.paged_reading_high_bytes}));
        x.error = (est - x.measured) / x.measured;
        x.device_error = (double(r.device_peak_bytes) - x.measured) / x.measured;
        x.compared = device ? "device" : reserved ? "reserved" : "allocated";
        x.unstated = unstated;
        x.covered = x.low <= x.measured && x.measured <= x.high && x.high > x.low;
        x.known_miss = a["known_miss"] ? a["known_miss"].as<std::string>() : "";
        const double u = unit;
        // the source's statistic, then the estimate the error is taken against (unstated rows: also the device one)
        const std::string shown = (unstated ? "unstated>" : stat == "nvidia-smi" ? "smi>" : "") + x.compared;
        std::printf("%-40s %-18s %8.2f %s %8.2f %s %+7.1f%%%s  %s\n", x.id.c_str(), shown.c_str(), x.measured / u,
                    unit_name.c_str(), est / u, unit_name.c_str(), 100.0 * x.error,
                    unstated ? fmt_device(x.device_error).c_str() : "",
                    x.high > x.low ? (std::to_string(x.low / u).substr(0, 6) + ".." + std::to_string(x.high / u).substr(0, 6) +
                                      (x.covered ? " covers" : ""))
                                         .c_str()
                                   : "-");
        if (std::getenv("OOMDX_ANCHOR_DETAIL")) print_breakdown(in, r, u, unit_name.c_str());
        out.push_back(x);
    }
    return out;
}

double median_abs(std::vector<double> e) {
    for (auto& v : e) v = std::fabs(v);
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    return n == 0 ? 0.0 : n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
}

}  // namespace

TEST_CASE("fine-tuning anchors: every LoRA / QLoRA row within 15 %") {
    const auto rows = run_anchors("finetune.yaml");
    REQUIRE(rows.size() >= 8);
    std::vector<double> errs;
    int misses = 0;
    for (const auto& x : rows) {
        errs.push_back(x.error);
        if (!x.known_miss.empty() && std::fabs(x.error) > 0.15) {
            std::printf("  %s: KNOWN MISS: %s\n", x.id.c_str(), x.known_miss.c_str());
            ++misses;
            continue;
        }
        CHECK_MESSAGE(std::fabs(x.error) <= 0.15, x.id << " error " << x.error);
    }
    double worst = 0;
    for (double e : errs) worst = std::max(worst, std::fabs(e));
    std::printf("fine-tuning rows: %zu, median |error| %.1f%%, worst %.1f%%, %d known miss(es)\n", rows.size(),
                100.0 * median_abs(errs), 100.0 * worst, misses);
    CHECK(misses <= 1);
}

TEST_CASE("published pretraining rows outside the development set") {
    const auto rows = run_anchors("published.yaml");
    REQUIRE(!rows.empty());
    std::vector<double> errs;
    int covered = 0, misses = 0;
    double worst = 0;
    for (const auto& x : rows) {
        errs.push_back(x.error);
        if (x.covered && std::fabs(x.error) > 0.15) ++covered;
        worst = std::max(worst, std::fabs(x.error));
        if (!x.known_miss.empty() && std::fabs(x.error) > 0.25 && !x.covered) {
            std::printf("  %s: KNOWN MISS: %s\n", x.id.c_str(), x.known_miss.c_str());
            ++misses;
            continue;
        }
        CHECK_MESSAGE((std::fabs(x.error) <= 0.25 || x.covered), x.id << " error " << x.error);
    }
    const double med = median_abs(errs);
    std::printf("published rows: %zu, median |error| %.1f%%, worst %.1f%%, %d beyond 15%% covered by the interval, %d known miss(es)\n",
                rows.size(), 100.0 * med, 100.0 * worst, covered, misses);
    CHECK(med <= 0.10);
}

// Held out: the figures are reported as they are; only rows the model claims to cover (no
// known_miss note) are held to 15 % and their median to 10 %.
static void check_heldout(const char* file, std::size_t min_rows, const char* label) {
    const auto rows = run_anchors(file);
    REQUIRE(rows.size() >= min_rows);
    std::vector<double> errs, covered;
    int misses = 0;
    for (const auto& x : rows) {
        errs.push_back(x.error);
        if (x.known_miss.empty()) covered.push_back(x.error);
        if (std::fabs(x.error) <= 0.15) continue;
        CHECK_MESSAGE(!x.known_miss.empty(), x.id << " error " << x.error << " and no known_miss note");
        if (!x.known_miss.empty()) {
            std::printf("  %s: KNOWN MISS: %s\n", x.id.c_str(), x.known_miss.c_str());
            ++misses;
        }
    }
    double worst = 0;
    for (double e : errs) worst = std::max(worst, std::fabs(e));
    std::printf("%s: %zu, median |error| %.1f%%, worst %.1f%%, %d known miss(es); the %zu other rows: median %.1f%%\n",
                label, rows.size(), 100.0 * median_abs(errs), 100.0 * worst, misses, covered.size(),
                100.0 * median_abs(covered));
    // est59: rows whose source names no statistic, read as allocated (the error above) and as device (nvidia-smi)
    std::vector<double> unstated_alloc, unstated_device;
    int in_interval = 0;
    for (const auto& x : rows) {
        if (x.covered) ++in_interval;
        if (!x.unstated) continue;
        unstated_alloc.push_back(x.error);
        unstated_device.push_back(x.device_error);
    }
    if (!unstated_alloc.empty())
        std::printf("  %zu unstated row(s): median |error| %.1f%% against allocated, %.1f%% against device; "
                    "%d of %zu rows inside the interval\n",
                    unstated_alloc.size(), 100.0 * median_abs(unstated_alloc), 100.0 * median_abs(unstated_device),
                    in_interval, rows.size());
    CHECK(median_abs(covered) <= 0.10);
}

TEST_CASE("held-out fine-tuning rows: within 15 % or a documented miss") {
    check_heldout("finetune_heldout.yaml", 6, "held-out fine-tuning rows");
}

TEST_CASE("held-out fine-tuning rows, round est9 (LitGPT config hub, Liger-Kernel HF Trainer + FSDP)") {
    check_heldout("finetune_heldout_est9.yaml", 8, "held-out fine-tuning rows (est9)");
}

TEST_CASE("held-out fine-tuning rows, round est11 (fms-acceleration: HF Trainer, PEFT LoRA, bitsandbytes QLoRA, FSDP1)") {
    check_heldout("finetune_heldout_est11.yaml", 12, "held-out fine-tuning rows (est11)");
}

TEST_CASE("held-out fine-tuning rows, round est17 (Answer.AI fsdp_qlora: PEFT LoRA, bitsandbytes QLoRA, FSDP1, CPU offload)") {
    check_heldout("finetune_heldout_est17.yaml", 12, "held-out fine-tuning rows (est17)");
}

TEST_CASE("held-out pretraining rows, round est19 (torchao float8 / MX e2e benchmarks: torchtitan Llama 3 8B on H100, MI300X, B200)") {
    check_heldout("heldout_est19.yaml", 10, "held-out rows (est19)");
}

TEST_CASE("held-out fine-tuning rows, round est20 (axolotl #3800: long-context LoRA, fused kernels, Liger FLCE, GC)") {
    check_heldout("heldout_est20.yaml", 8, "held-out rows (est20)");
}

TEST_CASE("held-out fine-tuning rows, round est21 (torchtune README of 2024-05 and PR #961: Llama 2 7B/70B QLoRA, LoRA, full FT, 1-8 GPUs)") {
    check_heldout("heldout_est21.yaml", 7, "held-out rows (est21)");
}

TEST_CASE("held-out pretraining rows, round est22 (torchtitan PRs/issues: Qwen3 32B FSDP2 / FSDP2+TP, Llama 3 8B compile, CP + flex)") {
    check_heldout("heldout_est22.yaml", 10, "held-out rows (est22)");
}

TEST_CASE("held-out fine-tuning rows, round est24 (LitGPT config hub rows of 2024-07..09: Llama 3.2 1B/3B, Phi-3-mini, Gemma 2 2B/9B LoRA/QLoRA)") {
    check_heldout("heldout_est24.yaml", 8, "held-out rows (est24)");
}

TEST_CASE("held-out rows, round est26 (transformers single-GPU guide of 2022-01: BERT-large classifier, fp32 / fp16 AMP, GC, Adafactor, 8-bit Adam, V100)") {
    check_heldout("heldout_est26.yaml", 9, "held-out rows (est26)");
}

TEST_CASE("held-out pretraining rows, round est28 (torchao float8 pre-training tutorial of 2025-06 and torchtitan PR #382: Llama 3 8B, FSDP 8, op SAC, compile, H100)") {
    check_heldout("heldout_est28.yaml", 5, "held-out rows (est28)");
}

TEST_CASE("held-out fine-tuning rows, round est30 (universal-llm-trainer GPU test of 2025-08: Llama 3 8B, Llama 2 13B, Gemma 7B, Phi-3-mini; full, LoRA, QLoRA; 1 x A100, 2 x 8192)") {
    check_heldout("heldout_est30.yaml", 10, "held-out rows (est30)");
}

TEST_CASE("held-out fine-tuning rows, round est31 (Axolotl example READMEs 2025-06..12: QLoRA of Devstral / Magistral 24B, Ministral 8B, OLMo 3 7B, MiMo 7B, Seed-OSS 36B, 2 x 2048 packed; LitGPT hub Gemma 7B QLoRA, Falcon 7B LoRA / QLoRA)") {
    check_heldout("heldout_est31.yaml", 9, "held-out rows (est31)");
}

TEST_CASE("held-out rows, round est32 (ms-swift example scripts 2025-03..08: Qwen2.5 7B / 14B LoRA, ZeRO-3, Megatron-SWIFT TP 4, packed, DeepSpeedExamples bf16 master weights, ZeRO-3 x 4, LitGPT Thunder README eager TinyLlama FSDP / DDP / 1 GPU)") {
    check_heldout("heldout_est32.yaml", 12, "held-out rows (est32)");
}

TEST_CASE("held-out rows, round est33 (Megatron-Bridge skill documents 2026-04..08: Llama 3 70B SFT FP8 current scaling on 32 H100, three layouts; Moonlight 16B MLA + MoE pretraining, TP 2 EP 8; Qwen3-8B and Qwen3-30B-A3B LoRA with TP + SP, 8192 packed; Qwen3-30B-A3B pretraining EP 16)") {
    check_heldout("heldout_est33.yaml", 8, "held-out rows (est33)");
}

// est72: the DDP and packed-8192 rows are withdrawn (the file's `withdrawn:` list: each figure is another script's)
TEST_CASE("held-out rows, round est34 (ms-swift 3.0 multi-GPU examples of 2024-12: Qwen2-7B LoRA, 1 GPU, ZeRO-2 / ZeRO-3 x 2; axolotl example READMEs 2025-09..12: Magistral Small 24B and Plano 4B QLoRA, 2 x 2048 packed; PEFT README of 2022-12: BLOOMZ 7B1 LoRA fp32)") {
    check_heldout("heldout_est34.yaml", 6, "held-out rows (est34)");
}

TEST_CASE("held-out rows, round est35 (Megatron-LM logs of 2023: GPT-2 345M fp16 on 4 x A800, DP 4 / TP 2 + PP 2 / TP 4 / PP 4; PR #482's swiglu GPT 6.6 B bf16 with the distributed optimizer on 8 x H800, DP / TP / PP; Lightning ModelParallelStrategy examples of 2024-05: Llama 2 7B FSDP2 x TP 2)") {
    check_heldout("heldout_est35.yaml", 12, "held-out rows (est35)");
}

TEST_CASE("held-out rows, round est36 (fms-acceleration granite reference run of 2024-10: PowerLM-3b full / LoRA / QLoRA, 1 GPU and FSDP x 2, 4096 packed; GLM-4 finetune demo of 2024-06: GLM-4-9B LoRA; axolotl PR #602 of 2023-09: OpenLLaMA 3B 8-bit LoRA, QLoRA, fp16 full)") {
    check_heldout("heldout_est36.yaml", 11, "held-out rows (est36)");
}

TEST_CASE("held-out rows, round est37 (torchao float8nocompile README of 2025-02: torchtitan Llama 3 8B on 8 H100, 1 x 4096, no / per-layer / full AC, bf16, eager float8, float8 + compile; torchtitan issue #1207 of 2025-05: FSDP 2 x TP 2, op SAC, bf16 and float8 rowwise; torchao MoE README of 2025-10: 2-layer Llama 4 Scout, FSDP 4 x EP 4 on B200)") {
    check_heldout("heldout_est37.yaml", 12, "held-out rows (est37)");
}

TEST_CASE("held-out rows, round est38 (LitGPT config hub of 2024-04: phi-2 LoRA / QLoRA on every linear and the head, 4 x 512; StableLM-base-alpha-3B LoRA / QLoRA on q, v, 1 x 512; one A10G; lit-gpt tutorial of 2023-09: Falcon 7B LoRA, 1 x 256)") {
    check_heldout("heldout_est38.yaml", 5, "held-out rows (est38)");
}

TEST_CASE("held-out rows, round est39 (torchao low-bit optimizer README of 2024-09: Llama 2 7B full fine-tuning in bf16 with torchtune 52d1b838 on one A100, fused AdamW, bitsandbytes and torchao 8-bit AdamW, torchao 4-bit AdamW)") {
    check_heldout("heldout_est39.yaml", 4, "held-out rows (est39)");
}

TEST_CASE("held-out rows, round est40 (verl's Ascend nightly CI of 2026-08: Qwen3-8B GSPO FSDP2 and PPO FSDP actors with Ulysses SP 2 and offload on 8 x 910B3, Qwen3-30B-A3B GSPO Megatron TP 2 EP 8 on 16 A3 dies)") {
    check_heldout("heldout_est40.yaml", 3, "held-out rows (est40)");
}

TEST_CASE("held-out rows, round est41 (Qwen v1 README of 2023-10: Qwen-1.8B LoRA and full ZeRO-3, Qwen-7B / 72B GPTQ Q-LoRA, Qwen-72B LoRA ZeRO-3 x 4; ms-swift scripts of 2024-12..2025-11: Qwen2.5-7B DoRA, FSDP2 LoRA x 2, bnb QLoRA; axolotl READMEs of 2025-08/09: Hunyuan 0.5B and AFM 4.5B QLoRA)") {
    check_heldout("heldout_est41.yaml", 11, "held-out rows (est41)");
}

TEST_CASE("held-out rows, round est42 (axolotl READMEs of 2023-08 / 2024-04: Llama-2-7B LoRA int8 and QLoRA packed 4k, Llama-3-70B QLoRA FSDP x 2 offload, Llama-3-8B full 8k; LitGPT 0_to_litgpt phi-2 LoRA; ms-swift scripts of 2024-12 / 2025-04: Qwen2-7B and Qwen2.5-3B full on one GPU)") {
    check_heldout("heldout_est42.yaml", 7, "held-out rows (est42)");
}

TEST_CASE("held-out rows, round est47 (ColossalAI-Pytorch-lightning GPT-2 benchmark of 2022-08: GPT2-XL DDP fp16 AMP x 4 and ZeRO-3 x 4, GPT-2-shaped 12B ZeRO-3 x 8 and 18B ZeRO-3 offload on one A100 40GB; lowmem_finetuning of 2025-07: Llama 3.2 1B fp32 Adam / Adafactor, bf16 Adafactor in backward, Llama 3.1 8B)") {
    check_heldout("heldout_est47.yaml", 8, "held-out rows (est47)");
}

TEST_CASE("held-out rows, round est49 (parameter offload: torchtune README of 2024-09 Llama 3.1 70B full FT, FSDP2 CPUOffloadPolicy x 8; PEFT README of 2022-12 bloomz-7b1 LoRA, DeepSpeed ZeRO-3 param + optimizer offload; ms-swift fsdp_qlora of 2025-03 Qwen2.5-7B QLoRA, FSDP1 offload x 2)") {
    check_heldout("heldout_est49.yaml", 3, "held-out rows (est49)");
}

TEST_CASE("held-out rows, round est52 (memory-efficient full-parameter training: BAdam README of 2024-04 Llama 3 8B / Llama 2 7B on one RTX 3090; GaLore and Q-GaLore single-GPU scripts of 2024-03..07, LLaMA-7B 8-bit layer-wise GaLore, INT8-weight Q-GaLore)") {
    check_heldout("heldout_est52.yaml", 7, "held-out rows (est52)");
}

TEST_CASE("held-out rows, round est45 (ms-swift rlhf scripts of 2025-01 / 2025-05: DPO LoRA Qwen2.5-7B on one GPU, SimPO full Qwen2.5-3B under ZeRO-2 x 2)") {
    check_heldout("heldout_est45.yaml", 2, "held-out rows (est45)");
}

TEST_CASE("own measurements on one H200 (HF Trainer, torch 2.11, transformers 5.17, peft 0.21: full and LoRA, allocated and reserved)") {
    check_heldout("measured_h200.yaml", 16, "measured rows (H200)");
}

TEST_CASE("held-out rows, round est50 (lightning-thunder benchmark_litgpt of 2024-06..10, PyTorch paths: Llama 2 7B / 13B-20-layer, Llama 3 8B, Mistral 7B, CodeLlama 34B, 16k Llama 2 variants; FSDP1 / FSDP2, ZeRO-2 / 3, AC, eager and torch.compile, 4096..32768 on H100)") {
    check_heldout("heldout_est50.yaml", 11, "held-out rows (est50)");
}

TEST_CASE("held-out rows, round est53 (PEFT method comparison on MetaMathQA, Llama-3.2-3B on one L40S, no AC, 4 x up to 768: LoRA r32 / r64 q,v, LoRA r10 MLP, DoRA r32, pure-bf16 full fine-tuning; builds of 2025-06, 2026-01, 2026-07)") {
    check_heldout("heldout_est53.yaml", 10, "held-out rows (est53)");
}

TEST_CASE("held-out rows, round est54 (Qwen-VL's fine-tuning profile: LoRA with trainable wte / lm_head, LoRA, Q-LoRA on the GPTQ Int4 chat model; 1 x 384..2048 padded, one image each, GC, eager attention, one A100 80G)") {
    check_heldout("heldout_est54.yaml", 12, "held-out rows (est54)");
}

TEST_CASE("held-out rows, round est55 (peft-experiments of 2024-07/08: torchtune vs PEFT + transformers on Llama 3 8B Instruct, LoRA q,v FSDP1 x 2 and one GPU, QLoRA torchao NF4 with and without AC vs bitsandbytes NF4; 2 x <=512 Alpaca-cleaned, RTX 4090; allocated and reserved; a torchtune 0.6.1 tutorial of 2026: Qwen2.5-0.5B LoRA FSDP2 x 8 on MI355X, 2 x 2048 packed)") {
    check_heldout("heldout_est55.yaml", 13, "held-out rows (est55)");
}

TEST_CASE("held-out rows, round est56 (Megatron-Core MoE functional tests of 2025-10..2026-08: 12 x 512 GPT with 4 / 8 experts, TP / SP / CP / PP / EP / expert TP, allgather and alltoall dispatchers, grouped GEMM, distributed optimizer, local and TE layers; 8 x H100)") {
    check_heldout("heldout_est56.yaml", 10, "held-out rows (est56)");
}

TEST_CASE("held-out rows, round est58 (ms-swift example scripts of 2024-12..2025-05: Qwen2 / Qwen2.5 7B LoRA with PiSSA init, HQQ 4-bit QLoRA, AWQ int4, Muon, Qwen2.5-3B with embedding / head copies and Liger, Qwen3-8B R1-distill LoRA; one GPU, GC, batch 1)") {
    check_heldout("heldout_est58.yaml", 7, "held-out rows (est58)");
}

TEST_CASE("held-out rows, round est59 (Qwen v1 README profile of 2023-11: Q-LoRA on Qwen-1.8B / 14B GPTQ Int4 at 256 / 2048 / 8192, LoRA with trainable wte / lm_head copies on Qwen-1.8B / 7B / 14B; 1 x padded length, GC, one A100 80G; statistic unstated)") {
    check_heldout("heldout_est59.yaml", 10, "held-out rows (est59)");
}
TEST_CASE("held-out rows, round est61 (LitGPT config-hub cells of 2024-03 / 04 that no round holds: TinyLlama LoRA / QLoRA on q, v at 8 x 512, Gemma 7B LoRA every linear + head on an A100, full fine-tuning of Gemma 2B / Llama 2 7B / Llama 3 8B / StableLM 3B under FSDP1 with every block checkpointed; allocated)") {
    check_heldout("heldout_est61.yaml", 7, "held-out rows (est61)");
}

TEST_CASE("held-out rows, round est62 (torchao float8 tensorwise with fp8 all-gather through lightning-thunder's benchmark script on the PyTorch path: Llama 2 7B / Llama 3 8B, FSDP2 x 8 zero2, torch.compile, no AC, 1-2 x block size, with and without force_recompute_fp8_weight_in_bwd; four Megatron-Core GPT functional tests: PP 4 interleaved with 5 micro-batches, TP 4 qk-layernorm, TP 2 PP 2 deferred embedding wgrad, TP 2 with two distributed-optimizer instances; 8 x H100, allocated)") {
    check_heldout("heldout_est62.yaml", 9, "held-out rows (est62)");
}

TEST_CASE("held-out rows, round est66 (MoE fine-tuning: axolotl gpt-oss-20b LoRA on one GPU and full FSDP2 x 2 offload / x 8 / x 4, Llama 4 Scout QLoRA on one H100 and FSDP2 x 4; ms-swift Megatron Qwen1.5-MoE and Moonlight-16B-A3B PP 2 EP 4, Qwen3-30B-A3B full TP 2 EP 8 / EP 4 with optimizer offload / LoRA EP 4, DPO Qwen3-4B TP 4 and Qwen3-30B-A3B TP 4 EP 8; 4096..8192 packed)") {
    check_heldout("heldout_est66.yaml", 13, "held-out rows (est66)");
}

TEST_CASE("held-out rows, round est68 (LitGPT resource tables of 2023-10 at 8641822, the cells the development rows leave out: phi-1.5 NF4 and mb 2, StableLM Alpha 3B LoRA / QLoRA mb 1-4 on one A100 40GB; LoRA under FSDP1 with every block checkpointed: phi-1.5, StableLM Alpha 3B, Llama 2 7B on 2 GPUs at mb 1 / 2 / 4, Llama 2 13B on 4; longest Alpaca sample, allocated)") {
    check_heldout("heldout_est68.yaml", 17, "held-out rows (est68)");
}

TEST_CASE("held-out rows, round est73 (torchtune's first README memory table, 2024-04-16: Llama 2 7B LoRA q,v FSDP1 x 2 without AC and on one GPU with AC, full fine-tuning with PagedAdamW in backward on one GPU and FSDP1 x 4; configs as shipped, 2 x <=512 Alpaca, RTX 4090; statistic unstated)") {
    check_heldout("heldout_est73.yaml", 4, "held-out rows (est73)");
}
