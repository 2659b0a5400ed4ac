// cfg67: mmengine `_base_` inheritance, OpenMMLab configs that are not XTuner, the `xtuner train --deepspeed` line,
// Hydra's --config-name / + / ++ / ~ on a NeMo line, NeMo LoRA module names and fp32 weights without megatron_amp_O2.
// Each read on both sides (read / refused); hostile chains are one-line errors naming file:line and `_base_`.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/estimator/estimate.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/job_config.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

const std::string c67_fx = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

fs::path c67_dir() {
    fs::path d = fs::temp_directory_path() / ("oomdx_test_cfg67_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

std::string c67_write(const std::string& name, const std::string& text) {
    const fs::path p = c67_dir() / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
}

std::string c67_error(const std::string& path) {
    try {
        (void)parse_job_config(path);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

const raw_entry* c67_entry(const job_config& j, const std::string& key) {
    for (const auto& e : j.entries)
        if (e.key == key) return &e;
    return nullptr;
}

std::string c67_text(const job_config& j, const std::string& name) {
    const fact* f = j.find(name);
    return f ? value_key(f->val) : "(none)";
}

fact_store c67_facts(const job_config& j) {
    fact_store s(&vocabulary::shipped());
    emit_facts(j, s);
    return s;
}

}  // namespace

TEST_CASE("cfg67 _base_: an MMDetection config is its four bases merged, each fact at the file that wrote it") {
    const job_config j = parse_job_config(c67_fx + "mmengine/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py");
    CHECK(j.framework == "mmengine");
    CHECK_FALSE(j.framework_guessed);
    CHECK(j.format == "module");
    REQUIRE(j.find("training.local_batch_size"));
    CHECK(j.find("training.local_batch_size")->val == value(std::int64_t{2}));
    CHECK(j.find("training.local_batch_size")->prov.file.ends_with("_base_/datasets/coco_detection.py"));
    CHECK(j.find("training.local_batch_size")->prov.line == 10);
    CHECK(c67_text(j, "optimizer.name") == "SGD");
    CHECK(c67_text(j, "training.mixed_precision_param") == "float32");  // OptimWrapper: no AMP
    CHECK(j.unknown_keys.empty());
    REQUIRE(c67_entry(j, "model.backbone.depth"));
    CHECK(c67_entry(j, "model.backbone.depth")->val == value(std::int64_t{50}));
    CHECK(c67_entry(j, "default_scope"));
    // an MMPretrain classifier, the same way
    const job_config p = parse_job_config(c67_fx + "mmengine/resnet/resnet50_8xb32_in1k.py");
    CHECK(p.framework == "mmengine");
    CHECK(c67_text(p, "training.local_batch_size") == "32");
    CHECK(p.unknown_keys.empty());
}

TEST_CASE("cfg67 _base_: a child merges into its bases (dicts key by key, _delete_ replaces, _base_.x = v sets one field)") {
    const job_config amp = parse_job_config(c67_fx + "mmengine/faster_rcnn/faster_rcnn_r50_fpn_amp_1x_coco.py");
    CHECK(c67_text(amp, "training.mixed_precision_param") == "float16");  // AmpOptimWrapper over the base's
    CHECK(c67_text(amp, "optimizer.name") == "SGD");                      // the rest of the base's wrapper kept
    CHECK(amp.find("training.mixed_precision_param")->prov.file.ends_with("faster_rcnn_r50_fpn_amp_1x_coco.py"));

    const job_config j = parse_job_config(c67_fx + "mmengine/faster_rcnn/faster_rcnn_r50_fpn_bs8_cp_adamw.py");
    CHECK(c67_text(j, "training.local_batch_size") == "8");
    CHECK(c67_text(j, "activation_checkpoint.mode") == "full");  // backbone with_cp
    CHECK(c67_text(j, "optimizer.name") == "AdamW");
    CHECK(c67_text(j, "training.mixed_precision_param") == "bfloat16");
    CHECK_FALSE(c67_entry(j, "optim_wrapper.optimizer.momentum"));  // _delete_=True: nothing of the base's wrapper
    CHECK_FALSE(c67_entry(j, "optim_wrapper._delete_"));
    REQUIRE(c67_entry(j, "model.backbone.depth"));  // merged: the base's backbone keys stay
    CHECK(c67_entry(j, "model.roi_head.bbox_head.num_classes")->val == value(std::int64_t{8}));
    CHECK(c67_entry(j, "model.roi_head.bbox_head.type"));
    REQUIRE(c67_entry(j, "train_dataloader.num_workers"));  // the base's loader keys stay beside the child's batch
    CHECK(j.unknown_keys.empty());
}

TEST_CASE("cfg67 _base_: a missing base, a cycle, a package base, a shared key and a deep chain are one-line errors") {
    const std::string missing = c67_error(c67_fx + "mmengine/bad/missing_base.py");
    CHECK(missing.find("missing_base.py:1: _base_ names './no_such_base.py': not found") != std::string::npos);
    CHECK(missing.find('\n') == std::string::npos);
    const std::string cycle = c67_error(c67_fx + "mmengine/bad/cycle_a.py");
    CHECK(cycle.find("cycle_b.py:1: _base_ names './cycle_a.py', which is already being read: a cycle") != std::string::npos);
    CHECK(cycle.find("cycle_a.py -> cycle_b.py -> cycle_a.py") != std::string::npos);
    CHECK(c67_error(c67_fx + "mmengine/bad/package_base.py").find("installed package 'mmdet'") != std::string::npos);
    CHECK(c67_error(c67_fx + "mmengine/bad/shared_key.py").find("shared_key.py:1: _base_ bases ") != std::string::npos);
    // a chain of 20 files stops at the bound, naming the file that went past it
    for (int i = 0; i < 20; ++i)
        c67_write("deep/d" + std::to_string(i) + ".py",
                  "_base_ = './d" + std::to_string(i + 1) + ".py'\ntrain_dataloader = dict(batch_size=" + std::to_string(i + 1) + ")\n");
    c67_write("deep/d20.py", "optim_wrapper = dict(optimizer=dict(type='SGD'))\n");
    const std::string deep = c67_error((c67_dir() / "deep/d0.py").string());
    CHECK(deep.find("d15.py:1: _base_ nests deeper than 16 files") != std::string::npos);
    // a base nested past the tokenizer's bound: its own file:line
    std::string nest = "x = ";
    for (int i = 0; i < 200; ++i) nest += "dict(a=";
    nest += "1" + std::string(200, ')') + "\n";
    c67_write("nest/huge.py", nest);
    c67_write("nest/child.py", "_base_ = './huge.py'\ntrain_dataloader = dict(batch_size=1)\n");
    CHECK(c67_error((c67_dir() / "nest/child.py").string()).find("huge.py:1:") != std::string::npos);
    // a _base_ that is not a file name
    c67_write("bad_decl.py", "_base_ = [1, 2]\ntrain_dataloader = dict(batch_size=1)\n");
    CHECK(c67_error((c67_dir() / "bad_decl.py").string()).find("bad_decl.py:1: _base_ is not a list of file names") !=
          std::string::npos);
    // 16 files (d5 .. d20) read
    CHECK(c67_error((c67_dir() / "deep/d5.py").string()).empty());
    CHECK(c67_text(parse_job_config((c67_dir() / "deep/d5.py").string()), "training.local_batch_size") == "6");
}

TEST_CASE("cfg67 mmengine: an OpenMMLab config is not read as XTuner; an XTuner config still is") {
    // signs nothing: the generic mmengine adapter, marked guessed, with no XTuner defaults (checkpointing)
    const job_config g = parse_job_config(c67_write("plain_mm.py", "_base_ = []\nlr = 0.1\nmax_epochs = 3\n"));
    CHECK(g.framework == "mmengine");
    CHECK(g.framework_guessed);
    CHECK_FALSE(g.find("activation_checkpoint.mode"));
    const job_config x = parse_job_config(c67_fx + "xtuner/qlora_chat_7b.py");
    CHECK(x.framework == "xtuner");
    CHECK_FALSE(x.framework_guessed);
}

TEST_CASE("cfg67 xtuner train: the config named on the line, --cfg-options over it, --deepspeed a shipped file or a path") {
    const job_config j = parse_job_config(c67_fx + "xtuner/train_zero2_offload.sh");
    CHECK(j.framework == "xtuner");
    CHECK(c67_text(j, "parallelism.zero_stage") == "2");
    CHECK(c67_text(j, "optimizer.offload") == "cpu");
    CHECK_FALSE(j.find("parallelism.offload_params"));
    CHECK(c67_text(j, "job.deepspeed_preset") == "zero2_offload");
    CHECK(c67_text(j, "training.local_batch_size") == "2");  // --cfg-options over `batch_size = 1`
    CHECK(c67_text(j, "training.lora_rank") == "16");
    CHECK(c67_text(j, "training.quantization_bit") == "4");  // from the config file
    CHECK(c67_text(j, "training.gradient_accumulation_steps") == "16");
    CHECK(c67_text(j, "job.nproc_per_node") == "8");
    CHECK(c67_text(j, "job.entry_script") == "train.py");  // xtuner/tools/train.py, not the config
    for (const auto& u : j.unknown_keys) CHECK(u.find("train_zero2_offload.sh") == std::string::npos);
    // a JSON path that is here: read as DeepSpeed's; one that is not: listed as missing, no stage invented
    c67_write("xt/ds_z3.json", R"({"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"})");
    fs::copy_file(c67_fx + "xtuner/qlora_chat_7b.py", c67_dir() / "xt/qlora_chat_7b.py", fs::copy_options::overwrite_existing);
    const job_config ds = parse_job_config(c67_write("xt/run.sh", "xtuner train qlora_chat_7b.py --deepspeed ds_z3.json\n"));
    CHECK(c67_text(ds, "parallelism.zero_stage") == "3");
    CHECK(c67_text(ds, "training.local_batch_size") == "1");
    const job_config no = parse_job_config(c67_write("xt/run2.sh", "xtuner train qlora_chat_7b.py --deepspeed zero9.json\n"));
    CHECK_FALSE(no.find("parallelism.zero_stage"));
    CHECK(c67_text(no, "job.missing_files").find("zero9.json") != std::string::npos);
}

TEST_CASE("cfg67 Hydra: --config-name read under the line; +key, ++key applied, ~key deletes the base's value") {
    const job_config j = parse_job_config(c67_fx + "nemo/finetune_hydra.sh");
    CHECK(j.framework == "nemo");
    CHECK(c67_text(j, "training.local_batch_size") == "4");                    // ++ over the YAML's 2
    CHECK(c67_text(j, "parallelism.tensor_parallel_degree") == "2");            // the YAML's
    CHECK(c67_text(j, "training.lora_rank") == "16");                           // the YAML's
    CHECK(c67_text(j, "parallelism.context_parallel_degree") == "2");           // + adds
    CHECK(c67_text(j, "training.lora_target") == "linear_qkv,linear_proj,linear_fc1");  // NeMo names mapped
    CHECK(c67_text(j, "parallelism.sequence_parallel") == "false");             // ~: the code's default again
    CHECK(j.find("parallelism.sequence_parallel")->prov.from_default());
    CHECK(c67_text(j, "activation_checkpoint.mode") == "none");
    CHECK(j.unknown_keys.empty());
    // the config is not here: listed as missing, the settings of the file NeMo ships under that name below the line's
    const job_config s = parse_job_config(c67_fx + "nemo/pretrain_gpt_shipped.sh");
    CHECK(c67_text(s, "job.missing_files").find("megatron_gpt_config.yaml") != std::string::npos);
    CHECK(c67_text(s, "training.mixed_precision_param") == "bfloat16");
    CHECK(c67_text(s, "training.autocast_fp32_params") == "false");
    CHECK(s.find("training.autocast_fp32_params")->prov.producer == "config.nemo.shipped_file");
    CHECK(c67_text(s, "training.local_batch_size") == "2");  // the line's
    CHECK(c67_text(s, "training.seq_len") == "4096");
    // a Hydra word that is no override stays out: `~` alone, `+=` with no key
    const job_config odd = parse_job_config(
        c67_write("odd_hydra.sh", "python megatron_gpt_pretraining.py model.micro_batch_size=1 '~' +=3 model.global_batch_size=8\n"));
    CHECK(c67_text(odd, "training.local_batch_size") == "1");
    CHECK(odd.unknown_keys.empty());
}

TEST_CASE("cfg67 NeMo LoRA targets: NeMo 1.x names become Megatron Core's, unset is attention_qkv") {
    const std::string yaml =
        "trainer: {precision: bf16}\nmodel:\n  micro_batch_size: 1\n  megatron_amp_O2: true\n  peft:\n    peft_scheme: lora\n"
        "    lora_tuning:\n      adapter_dim: 8\n";
    CHECK(c67_text(parse_job_config(c67_write("lora_unset.yaml", yaml)), "training.lora_target") == "linear_qkv");
    CHECK(c67_text(parse_job_config(c67_write("lora_all.yaml", yaml + "      target_modules: [all]\n")), "training.lora_target") ==
          "linear_qkv,linear_proj,linear_fc1,linear_fc2");
    CHECK(c67_text(parse_job_config(c67_write("lora_mlp.yaml", yaml + "      target_modules: [mlp, attention_dense]\n")),
                   "training.lora_target") == "linear_fc1,linear_fc2,linear_proj");
    // a name NeMo does not have is kept as written (the estimator says it does not know it)
    CHECK(c67_text(parse_job_config(c67_write("lora_odd.yaml", yaml + "      target_modules: [qkv_weird]\n")),
                   "training.lora_target") == "qkv_weird");
}

TEST_CASE("cfg67 NeMo megatron_amp_O2: fp32 weights under autocast are 2 B per parameter less, and said when assumed") {
    const std::string yaml =
        "trainer: {precision: bf16, devices: 8}\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 8\n"
        "  encoder_seq_length: 4096\n  tensor_model_parallel_size: 1\n  num_layers: 32\n  hidden_size: 4096\n"
        "  ffn_hidden_size: 14336\n  num_attention_heads: 32\n  num_query_groups: 8\n  optim: {name: fused_adam}\n";
    auto input = [&](const std::string& name, const std::string& extra) {
        fact_store s = c67_facts(parse_job_config(c67_write(name, yaml + extra)));
        emit_facts(*find_semantics("nemo"), s);
        s.emit("model.vocab_size", value(std::int64_t{128256}), provenance{});
        s.emit("job.world_size", value(std::int64_t{8}), provenance{});
        return from_facts(s);
    };
    auto said = [](const estimate_input& in) {
        return std::any_of(in.assumptions.begin(), in.assumptions.end(),
                           [](const std::string& a) { return a.find("training.autocast_fp32_params = true") != std::string::npos; });
    };
    const estimate_input o2 = input("amp_o2.yaml", "  megatron_amp_O2: true\n");
    const estimate_input o1 = input("amp_o1.yaml", "  megatron_amp_O2: false\n");
    const estimate_input unset = input("amp_unset.yaml", "");
    CHECK_FALSE(o2.autocast_fp32_params);
    CHECK(o1.autocast_fp32_params);
    CHECK(unset.autocast_fp32_params);
    CHECK_FALSE(said(o2));
    CHECK_FALSE(said(o1));  // stated by the config: no assumption
    CHECK(said(unset));
    const estimate_result r2 = estimate(o2), r1 = estimate(o1);
    // Megatron O2: bf16 weights 2 + fp32 main grads 4 + fp32 master 4 + Adam 8 = 18 B; O1: 4 + 4 + 8 = 16 B
    const double params = double(r2.peak_bytes - r1.peak_bytes) / 2.0;
    CHECK(r1.peak_bytes < r2.peak_bytes);
    CHECK(params == doctest::Approx(8.03e9).epsilon(0.02));  // Llama 3 8B's parameters
}
