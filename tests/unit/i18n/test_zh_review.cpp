// Pins of the Chinese-report review (docs/i18n.md, "Review 2026-12-06"): Chinese set beside a spliced
// Latin value takes a space, values shown in sentences are phrases, producer sentences the review
// found in English have templates, and the report lines it found assembled from English pieces read
// in Chinese.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "engine/core/cjk_spacing.h"
#include "engine/core/message.h"
#include "engine/core/translations.h"
#include "engine/report/report_phrases.h"

using namespace oomdx;

namespace {

const translation_table& zh_table() { return translation_table::shipped("zh"); }

// An example's report in Chinese, run in its directory as tests/scripts/examples_zh.sh runs it.
std::string zh_report(const std::string& example) {
    const std::string dir = std::string(OOMDX_SOURCE_DIR) + "/examples/" + example;
    const std::string cmd = "cd '" + dir + "' && NO_COLOR=1 '" + OOMDX_BINARY + "' $(cat cmd) --lang zh --format text 2>/dev/null";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int st = pclose(p);
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) <= 1);
    return out;
}

}  // namespace

TEST_CASE("a value spliced between Chinese and Latin text is spaced from the Chinese") {
    CHECK(format_message("因此{x}中的失败", {{"x", "HCCL 通信缓冲区"}}) == "因此 HCCL 通信缓冲区中的失败");
    CHECK(format_message("step {n}的内存", {{"n", "3"}}) == "step 3 的内存");
    CHECK(format_message("出现在{phase}阶段", {{"phase", "loss 计算"}}) == "出现在 loss 计算阶段");
    CHECK(format_message("（{x}）", {{"x", "cuda"}}) == "（cuda）");            // full-width punctuation: none
    CHECK(format_message("增长的类别为{x}：", {{"x", "激活"}}) == "增长的类别为激活：");  // Chinese beside Chinese: none
    CHECK(format_message("in {x}", {{"x", "abc"}}) == "in abc");               // English is as it was
    CHECK(format_message("a{x}b", {{"x", "c"}}) == "acb");
    CHECK(format_message("无法满足 {x} 的申请", {{"x", "未知大小"}}) == "无法满足未知大小的申请");  // none between Chinese
    CHECK(format_message("无法满足 {x} 的申请", {{"x", "2.00 GiB"}}) == "无法满足 2.00 GiB 的申请");
    std::string s = "为HCCL留出";
    space_cjk_seams(s, {3, 7});
    CHECK(s == "为 HCCL 留出");
}

TEST_CASE("machine values shown in sentences have Chinese phrases") {
    CHECK(value_phrase("zh", "statistic", "max_reserved") == "最大已保留");
    CHECK(value_phrase("zh", "statistic", "max_allocated") == "最大已分配");
    CHECK(value_phrase("zh", "cost_term", "chunked_loss") == "分块 loss");
    CHECK(value_phrase("zh", "comparison", "progress") == "训练进度中的读数");
    CHECK(value_phrase("zh", "device_kind", "npu") == "NPU");
    CHECK(value_phrase("en", "device_kind", "npu") == "npu");
    CHECK(value_phrase("zh", "phase", "loss") == "loss 计算");
    CHECK(phrase("en", "report.oom.device_kind", {{"kind", "cuda"}}) == " (cuda)");
    CHECK(phrase("en", "report.snapshot.category", {{"category", "activation"}, {"bytes", "1 GiB"}, {"share", "5%"}}) ==
          "activation 1 GiB (5%)");
}

TEST_CASE("estimate sentences found in English in the review translate") {
    CHECK(zh_table().produced("estimate.formula.", "4.54B x 4 B (not sharded)") == "4.54B × 4 B（未分片）");
    CHECK(zh_table().produced("estimate.formula.", "8.03B x 2 B / 8") == "8.03B × 2 B / 8");
    const std::string act = zh_table().produced("estimate.formula.",
        "32 layer x micro-batch held x 65536 tokens x 200832.0 B/token/layer (AC none, TP 1, CP 1, flash attention, eager)");
    CHECK(act.find("（激活重计算 none，TP 1，CP 1，flash attention，eager 模式）") != std::string::npos);
    CHECK(zh_table().produced("estimate.formula.", "8192 tokens x 8192.0 B/token/layer (AC full, TP 2+SP, CP 1, eager attention, compiled)")
              .find("（激活重计算 full，TP 2+SP，CP 1，eager attention，已编译）") != std::string::npos);
    CHECK(zh_table().translate_produced("estimate.interval.",
        "torchtune recipes before mid-2024 (no `del logits`) keep the shifted fp32 logits through backward: 16 B per token x "
        "vocab element instead of 12 (high end; set job.framework_date)"));
    estimate_component bf16;
    bf16.id = "master_weights";
    bf16.label = "bf16 master weights";
    CHECK(estimate_label("zh", bf16) == "bf16 主权重");
    bf16.label = "fp32 master weights";
    CHECK(estimate_label("zh", bf16) == "fp32 主权重");
}

TEST_CASE("the log's timing reasons name the phase in Chinese") {
    CHECK(zh_table().produced("log.timing.", "the failure is inside evaluation") == "失败发生在评估阶段内");
    CHECK(zh_table().produced("log.timing.", "the failure is inside saving a checkpoint") == "失败发生在保存 checkpoint 阶段内");
    CHECK(zh_table().produced("log.timing.", "the failure is inside loading a checkpoint") == "失败发生在加载 checkpoint 阶段内");
}

TEST_CASE("report lines the review found assembled from English pieces read in Chinese") {
    const std::string frag = zh_report("fragmentation_snapshot");
    CHECK(frag.find("来源：缓存分配器（caching_allocator），设备类型 CUDA，失败于 step 3") != std::string::npos);
    CHECK(frag.find("每 step 内存（最大已保留）：step 1 58.10 GiB") != std::string::npos);
    CHECK(frag.find("类别：激活 40.50 GiB（69.2%），优化器状态 12.00 GiB（20.5%），参数 6.00 GiB（10.3%）") != std::string::npos);
    CHECK(frag.find("出现在 loss 计算阶段") != std::string::npos);
    CHECK(frag.find("训练进度中的读数：实测已保留 63.47 GiB") != std::string::npos);
    CHECK(frag.find("日志自身的内存读数（已保留 63.47 GiB）") != std::string::npos);
    CHECK(frag.find(" (cuda)") == std::string::npos);
    const std::string hccl = zh_report("hccl_oom");
    CHECK(hccl.find("因此 HCCL 通信缓冲区中的失败") != std::string::npos);
    CHECK(hccl.find("为 HCCL 通信缓冲区留出空间") != std::string::npos);
    CHECK(hccl.find("反向阶段的 fp32 main-grad 缓冲区") != std::string::npos);
    CHECK(hccl.find("step 1 的内存（已分配）") != std::string::npos);
    const std::string leak = zh_report("leak_three_snapshots");
    CHECK(leak.find("持续增长的类别是激活。") != std::string::npos);
    CHECK(leak.find("增长的类别为激活；") != std::string::npos);
    const std::string plan = zh_report("activation_bound");
    CHECK(plan.find("+1% 分块 loss：") != std::string::npos);
    CHECK(plan.find("| 分块 loss ->") != std::string::npos);
}

TEST_CASE("rev28: a list of settings inside a Chinese sentence is joined with Chinese commas; English keeps ', '") {
    // lora_long_batch: the plan's finding listed its overrides as "training.local_batch_size=2, training..." in a
    // Chinese sentence ({plan.overrides|list}, template.list_sep).
    const std::string zh = zh_report("lora_long_batch");
    // rev43: the finding lists the changes in the job's syntax (plan.changes), still joined with Chinese commas
    CHECK(zh.find("per_device_train_batch_size: 2，gradient_accumulation_steps: 16，enable_liger_kernel: true 使设备峰值") !=
          std::string::npos);
    CHECK(zh.find("放下：per_device_train_batch_size: 2, gradient") == std::string::npos);  // the fact's own value keeps ", "
    CHECK(zh_table().pick("template.list_sep", ", ") == "，");
    CHECK(translation_table::shipped("en").pick("template.list_sep", ", ") == ", ");
}

TEST_CASE("rev28: a change in code is labelled in Chinese; a VLM's parameter formula with its vision tower translates") {
    // The code line under a recommendation read "# code: 累加 loss.item()..." in Chinese reports (40 of 149 cases).
    CHECK(zh_table().produced("adapter.", "# code: 累加 loss.item()（而不是 loss 张量）") == "# 代码：累加 loss.item()（而不是 loss 张量）");
    // r1-v-qwen25-vl-7b-grpo-4xa100-zero3-to-zero3-offload: the estimate's parameter row stayed in English.
    CHECK(zh_table().produced("estimate.formula.",
                              "7.62B params on this rank (TP 1, PP stage 0, EP 1) x 0.5 B, FSDP/ZeRO-3 over 4 ranks; frozen vision "
                              "tower 1.24 GiB") ==
          "本 rank 上 7.62B 个参数（TP 1，PP stage 0，EP 1）× 0.5 B，FSDP/ZeRO-3，分布在 4 个 rank 上；冻结的视觉塔 1.24 GiB");
}

// zh29 (docs/i18n.md, "Review 2026-12-06 (zh29)"): producer sentences of est56, rev28 and the plan that the zh reports
// showed in English, and DeepSpeed's activation checkpointing written as a change in code.
TEST_CASE("zh29: the estimate's allocator notes, a VLM's vision tower and the plan's accumulation note translate") {
    // llama-cookbook-llama2-70b-fsdp-7xa100-cpu-offload: the allocator row kept ", FSDP1's unshard-stream pools ..." in English.
    const std::string head = "reserved 149.83 GiB = 1.00 x allocated (+2% segment rounding; at the loss the cache also holds blocks the "
                             "loss buffers cannot reuse: freed gradients and bf16 logits 37.68 GiB, one layer's freed intermediates "
                             "7.94 GiB (the largest temporaries dominate)";
    const std::string tail = "; capped at the device capacity less the runtime) + 0.93 GiB runtime outside the allocator (CUDA context, "
                             "NCCL, libraries)";
    const std::string unshard = zh_table().produced(
        "estimate.formula.", head + ", FSDP1's unshard-stream pools 3.19 GiB (all-gather and shard-copy blocks only later unshards reuse)" + tail);
    CHECK(unshard.find("，FSDP1 的 unshard 流内存池 3.19 GiB（all-gather 与分片复制的块，只有之后的 unshard 能复用）；以设备容量减去运行时为上限") !=
          std::string::npos);
    const std::string floors[] = {
        "; floor 5.00 GiB set it: FSDP1 wrapped a model already whole on the device, whose blocks stay cached beside the layer "
        "shards and the root's flat copy (est56)",
        "; floor 5.00 GiB set it: FSDP1's construction left the root unit's parameters and flat copy cached, which the "
        "unshard-stream and small-block (<= 1 MiB) pools cannot reuse",
        "; at the end of backward the root unit's fp32 reduce-scatter input 1.50 GiB is larger than any cached block, so a new "
        "segment is reserved on top (torchtitan before 2025-07-28)"};
    for (const auto& piece : floors) {
        const std::string zh = zh_table().produced("estimate.formula.", head + piece + tail);
        CAPTURE(zh);
        CHECK(zh.rfind("已保留 149.83 GiB", 0) == 0);
        CHECK(zh.find("set it") == std::string::npos);
        CHECK(zh.find("cached") == std::string::npos);
    }
    CHECK(zh_table().produced("estimate.formula.", head + floors[0] + tail).find("；由下限 5.00 GiB 决定：FSDP1 包装的是已完整放在设备上的模型") !=
          std::string::npos);
    // lmms-eval-qwen2-vl-7b-ocrbench-max-pixels: the assumption line of the estimate stayed in English.
    CHECK(zh_table().produced("estimate.assumption.",
                              "vision tower: 0.676 B parameters counted as frozen weights (2 B each) (freeze_vision_tower: true, "
                              "LLaMA-Factory's default); image tokens and the tower's activations not counted") ==
          "视觉塔：0.676B 个参数按冻结权重计入（每个 2 B；freeze_vision_tower: true，LLaMA-Factory 的默认值）；图像 token 和视觉塔自身的激活未计入");
    CHECK(zh_table().produced("estimate.assumption.",
                              "vision tower: 0.676 B parameters counted as frozen weights (2 B each); image tokens and the tower's "
                              "activations not counted") == "视觉塔：0.676B 个参数按冻结权重计入（每个 2 B）；图像 token 和视觉塔自身的激活未计入");
    CHECK(zh_table().produced("estimate.assumption.",
                              "vision tower: 0.676 B parameters trained with the language model (freeze_vision_tower: false); image "
                              "tokens and the tower's activations not counted") ==
          "视觉塔：0.676B 个参数与语言模型一起训练（freeze_vision_tower: false）；图像 token 和视觉塔自身的激活未计入");
    // llamafactory-llama3-8b-8k-flash-attn-default-off: the reason of LLaMA-Factory's load dtype stayed in English.
    CHECK(zh_table().produced("term.", "frozen weights in bf16 (LLaMA-Factory infers the compute dtype)") ==
          "冻结权重为 bf16，LLaMA-Factory 自动推断计算精度");
    // the plan of llama-cookbook-llama2-70b-fsdp-7xa100-cpu-offload: "global batch 28 -> 48 on 24 devices (gradient accumulation 1)".
    CHECK(zh_table().produced("plan.note.", "global batch 28 -> 48 on 24 devices (gradient accumulation 1)") ==
          "在 24 个设备上全局 batch 28 -> 48（梯度累积 1）");
}

TEST_CASE("zh29: DeepSpeed's activation checkpointing as a change in code reads in Chinese") {
    // deepspeed-llama2-70b-zero3-host-oom-zero-init: "# 代码修改：turn on activation checkpointing in the training script: ...".
    const std::string zh = zh_table().produced(
        "adapter.", "# code change: turn on activation checkpointing in the training script: model.gradient_checkpointing_enable() "
                    "for an HF model, deepspeed.checkpointing.checkpoint or torch.utils.checkpoint around each layer otherwise");
    CHECK(zh == "# 代码修改：在训练脚本中开启激活重计算：HF 模型调用 model.gradient_checkpointing_enable()，其他模型在每层外包一层 "
                "deepspeed.checkpointing.checkpoint 或 torch.utils.checkpoint");
    // A recommendation not offered read "未提供：X（rule）：ms_swift 没有对应的配置项：optimizer.offload = none" (three colons).
    CHECK(zh_table().produced("adapter.", "ms_swift has no setting for optimizer.offload = none") ==
          "ms_swift 没有与 optimizer.offload = none 对应的配置项");
    // The route of an OOM sent to the estimate first: the OOM "goes to" it (先转到), it does not "do" it (先做).
    const std::string frag = zh_report("fragmentation_snapshot");
    // rev33: the step that sent it is named once, after the title ("Step 1：...：Step 0：..." nested two prefixes)
    CHECK(frag.find("（由 Step 0 转入）——缓存分配器 OOM 先转到估算（Step 1）。") != std::string::npos);
    CHECK(frag.find("先做估算") == std::string::npos);
    // The code-review checklist ended each line with " - rg -n ..." (an English dash before the command).
    const std::string leak = zh_report("leak_three_snapshots");
    CHECK(leak.find("捕获了张量却从未移除的 hook；用 rg -n ") != std::string::npos);
    CHECK(leak.find(" - rg -n") == std::string::npos);
}
