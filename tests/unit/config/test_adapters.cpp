// Adapters: rendering in each framework's syntax, round trips, a sixth adapter from a YAML file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>

#include <unistd.h>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/estimator/estimate.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/override_syntax.h"
#include "parsers/config/job_config.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

const std::string fixtures = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

fs::path scratch_dir() {
    fs::path d = fs::temp_directory_path() / ("oomdx_test_adapters_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

std::string write(const std::string& name, const std::string& text) {
    const fs::path p = scratch_dir() / name;
    std::ofstream(p) << text;
    return p.string();
}

// The canonical facts a parsed config emits, in a store over the shipped vocabulary.
fact_store shipped_facts(const job_config& c) {
    fact_store store(&vocabulary::shipped());
    emit_facts(c, store);
    return store;
}

// The one-line error of loading an adapter file with this text ("" and a failure when it loads).
std::string load_error(const std::string& name, const std::string& text) {
    try {
        framework_adapter::load(write(name, text));
    } catch (const input_error& e) {
        return e.what();
    }
    FAIL("expected an error loading " << name);
    return "";
}

std::string join(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

// Rendered lines -> a file the parser reads, in the adapter's syntax.
std::string as_file(const framework_adapter& a, const std::vector<std::string>& lines, const std::string& syntax,
                    const std::string& tag) {
    if (syntax == "toml") return write(tag + ".toml", join(lines));
    if (syntax == "json") return write(tag + ".json", join(lines));
    if (syntax == "yaml") {
        std::vector<std::string> keep;
        for (const auto& l : lines)
            if (l.rfind("export ", 0) != 0) keep.push_back(l);
        return write(tag + ".yaml", join(keep));
    }
    if (syntax == "registry") {
        std::string py = "def cfg():\n    config = Trainer.Config()\n";
        for (const auto& l : lines) py += "    " + l + "\n";
        py += "    return config\n";
        return write(tag + ".py", py);
    }
    // cli: a launch script; exports and comments stay on their own lines.
    std::string sh = "#!/bin/bash\n", cmd = "torchrun --nproc_per_node 8 train.py";
    for (const auto& l : lines) {
        if (l.rfind("export ", 0) == 0 || l.rfind("unset ", 0) == 0 || l.rfind("#", 0) == 0) sh += l + "\n";
        else cmd += " \\\n    " + l;
    }
    return write(tag + ".sh", sh + cmd + "\n");
}

// Every override comes back from the parsed config with its value.
fact_store check_read_back(const job_config& j, const std::vector<canonical_override>& ovs) {
    fact_store store = shipped_facts(j);
    for (const auto& o : ovs) {
        CAPTURE(o.key);
        const fact* f = store.get(o.key);
        REQUIRE(f != nullptr);
        CHECK(f->val == o.val);
    }
    return store;
}

void round_trip(const framework_adapter& a, const std::vector<canonical_override>& ovs, const std::string& syntax) {
    CAPTURE(a.name());
    CAPTURE(syntax);
    const auto lines = a.render_lines_as(ovs, syntax);
    const std::string text = join(lines);
    CAPTURE(text);
    for (const auto& l : lines) CHECK(l.find("has no setting") == std::string::npos);
    const std::string file = as_file(a, lines, syntax, a.name() + "_" + syntax);
    job_config j = parse_job_config(file, a);
    CHECK(j.framework == a.name());
    CHECK(j.unknown_keys.empty());
    CHECK(j.non_literal.empty());
    check_read_back(j, ovs);
}

}  // namespace

TEST_CASE("every shipped adapter loads and renders") {
    std::vector<std::string> names;
    for (const auto& a : framework_adapter::shipped()) names.push_back(a.name());
    for (const char* n : {"torchtitan", "torchtitan_npu", "megatron", "mindspeed", "deepspeed", "hf_trainer", "llama_factory", "axolotl", "ms_swift"})
        CHECK(std::find(names.begin(), names.end(), n) != names.end());
    CHECK(framework_adapter::get("no-such-framework").name() == "torchtitan");
    // Every canonical key an adapter maps is declared in the vocabulary.
    for (const auto& a : framework_adapter::shipped())
        for (const auto& k : a.keys()) {
            CAPTURE(a.name());
            CAPTURE(k.canonical);
            CHECK(vocabulary::shipped().find(k.canonical) != nullptr);
        }
    // ... and every fact a conditional render (render_when) reads (rev26)
    for (const auto& a : framework_adapter::shipped())
        for (const auto& k : a.context_keys()) {
            CAPTURE(a.name());
            CAPTURE(k);
            CHECK(vocabulary::shipped().find(k) != nullptr);
        }
}

TEST_CASE("renderers write each framework's own syntax") {
    const std::vector<canonical_override> full_ac{{"activation_checkpoint.mode", "full"}};
    // Megatron: full recomputation is three flags.
    CHECK(framework_adapter::get("megatron").render(full_ac) ==
          "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n");
    CHECK(framework_adapter::get("torchtitan").render(full_ac) == "[activation_checkpoint]\nmode = \"full\"\n");
    CHECK(join(framework_adapter::get("torchtitan").render_lines_as({{"training.local_batch_size", 2}}, "cli")) ==
          "--training.local_batch_size=2\n");
    CHECK(join(framework_adapter::get("torchtitan").render_lines_as({{"training.local_batch_size", 2}}, "registry")) ==
          "config.training.local_batch_size = 2\n");
    // DeepSpeed: ZeRO-3 is a JSON patch.
    const std::string z3 = framework_adapter::get("deepspeed").render({{"parallelism.zero_stage", 3}});
    CHECK(z3.find("\"zero_optimization\": {") != std::string::npos);
    CHECK(z3.find("\"stage\": 3") != std::string::npos);
    CHECK(z3.find("\"overlap_comm\": true") != std::string::npos);
    CHECK(framework_adapter::get("llama_factory").render(full_ac) == "disable_gradient_checkpointing: false\n");
    CHECK(framework_adapter::get("hf_trainer").render(full_ac) == "gradient_checkpointing: true\n");
    CHECK(framework_adapter::get("axolotl").render(full_ac) == "gradient_checkpointing: true\n");
    CHECK(framework_adapter::get("axolotl").render({{"training.local_batch_size", 1}, {"training.quantization_bit", 4}}) ==
          "micro_batch_size: 1\nload_in_4bit: true\n");
    CHECK(join(framework_adapter::get("ms_swift").render_lines_as(
              {{"activation_checkpoint.mode", "full"}, {"training.quantization_bit", 4}, {"parallelism.zero_stage", 3}}, "cli")) ==
          "--gradient_checkpointing true\n--quant_method bnb\n--quant_bits 4\n--deepspeed zero3\n");
    // Environment variables are exports in every framework.
    CHECK(framework_adapter::get("deepspeed").render({{"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}}) ==
          "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
    CHECK(framework_adapter::get("mindspeed").render({{"optimizer.swap_optimizer", true}}) ==
          "--swap-optimizer\n--use-distributed-optimizer\n");
    // What a framework cannot express is said, not silently dropped.
    // (DeepSpeed's JSON has no tensor parallelism; its checkpointing is a code change, tested below)
    CHECK(framework_adapter::get("deepspeed").render({{"parallelism.tensor_parallel_degree", 2}}).find("has no setting") !=
          std::string::npos);
}

TEST_CASE("each adapter round-trips canonical -> rendered -> parsed") {
    const std::vector<canonical_override> tt{{"training.local_batch_size", 2},
                                             {"training.global_batch_size", 128},
                                             {"training.seq_len", 4096},
                                             {"parallelism.tensor_parallel_degree", 4},
                                             {"parallelism.pipeline_parallel_degree", 2},
                                             {"parallelism.context_parallel_degree", 2},
                                             {"parallelism.expert_parallel_degree", 8},
                                             {"activation_checkpoint.mode", "full"},
                                             {"compile.enable", true},
                                             {"profiling.enable_memory_snapshot", true}};
    for (const char* syn : {"toml", "registry", "cli"}) round_trip(framework_adapter::get("torchtitan"), tt, syn);
    round_trip(framework_adapter::get("torchtitan"), {{"quantize.linear.float8", true}}, "toml");
    auto npu = tt;
    npu.push_back({"optimizer.swap_optimizer", true});
    npu.push_back({"optimizer.swap_optimizer_times", 8});
    npu.push_back({"training.torch_npu_memory_ratio", 0.9});
    for (const char* syn : {"toml", "registry", "cli"}) round_trip(framework_adapter::get("torchtitan_npu"), npu, syn);

    const std::vector<canonical_override> meg{{"training.local_batch_size", 2},
                                              {"training.global_batch_size", 64},
                                              {"training.seq_len", 4096},
                                              {"parallelism.tensor_parallel_degree", 4},
                                              {"parallelism.pipeline_parallel_degree", 2},
                                              {"parallelism.sequence_parallel", true},
                                              {"activation_checkpoint.mode", "full"},
                                              {"optimizer.distributed", true},
                                              {"training.mixed_precision_param", "bfloat16"},
                                              {"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
    round_trip(framework_adapter::get("megatron"), meg, "cli");
    round_trip(framework_adapter::get("megatron"), {{"activation_checkpoint.mode", "selective"}}, "cli");
    round_trip(framework_adapter::get("megatron"), {{"activation_checkpoint.mode", "none"}}, "cli");
    round_trip(framework_adapter::get("megatron"), {{"training.mixed_precision_reduce", "bfloat16"}}, "cli");
    auto ms = meg;
    ms.push_back({"optimizer.swap_optimizer", true});
    ms.push_back({"activation_checkpoint.swap_attention", true});
    ms.back() = {"activation_checkpoint.swap_attention", true};
    round_trip(framework_adapter::get("mindspeed"), ms, "cli");

    round_trip(framework_adapter::get("deepspeed"),
               {{"parallelism.zero_stage", 3}, {"optimizer.offload", "cpu"}, {"parallelism.offload_params", "cpu"},
                {"training.local_batch_size", 4}, {"training.gradient_accumulation_steps", 8},
                {"training.mixed_precision_param", "bfloat16"}},
               "json");
    round_trip(framework_adapter::get("deepspeed"), {{"parallelism.zero_stage", 2}}, "json");
    round_trip(framework_adapter::get("hf_trainer"),
               {{"training.local_batch_size", 4}, {"training.gradient_accumulation_steps", 2},
                {"activation_checkpoint.mode", "full"}, {"training.mixed_precision_param", "bfloat16"},
                {"optimizer.name", "adamw_torch"}, {"parallelism.zero_stage", 3}, {"training.seq_len", 2048}},
               "yaml");
    round_trip(framework_adapter::get("llama_factory"),
               {{"training.local_batch_size", 2}, {"training.seq_len", 8192}, {"activation_checkpoint.mode", "none"},
                {"training.finetuning_type", "lora"}, {"training.lora_rank", 16}},
               "yaml");
    // LLaMA-Factory v1: an adapter file alone (knowledge/frameworks/llama_factory_v1.yaml); plugin maps as nested keys
    round_trip(framework_adapter::get("llama_factory_v1"),
               {{"training.local_batch_size", 2}, {"training.seq_len", 8192}, {"activation_checkpoint.mode", "none"},
                {"training.finetuning_type", "lora"}, {"training.lora_rank", 16}, {"training.quantization_bit", 4},
                {"model.attn_impl", "flash"}, {"training.mixed_precision_param", "float32"},
                {"parallelism.context_parallel_degree", 2}, {"parallelism.zero_stage", 2}},
               "yaml");
    round_trip(framework_adapter::get("llama_factory_v1"),
               {{"activation_checkpoint.mode", "full"}, {"training.finetuning_type", "freeze"},
                {"training.freeze_trainable_layers", 4}, {"parallelism.zero_stage", 3}, {"parallelism.offload_params", "cpu"}},
               "yaml");
    round_trip(framework_adapter::get("llama_factory_v1"), {{"parallelism.zero_stage", 0}}, "yaml");
    // Axolotl: an adapter file alone (knowledge/frameworks/axolotl.yaml)
    round_trip(framework_adapter::get("axolotl"),
               {{"training.local_batch_size", 1}, {"training.gradient_accumulation_steps", 16},
                {"activation_checkpoint.mode", "full"}, {"training.seq_len", 2048},
                {"training.mixed_precision_param", "float16"}, {"optimizer.name", "paged_adamw_8bit"},
                {"training.finetuning_type", "qlora"}, {"training.quantization_bit", 4}, {"training.lora_rank", 8},
                {"training.lora_target", "all-linear"}, {"model.attn_impl", "sdpa"}, {"training.chunked_loss", true},
                {"parallelism.zero_stage", 3}, {"parallelism.offload_params", "cpu"}},
               "yaml");
    round_trip(framework_adapter::get("axolotl"),
               {{"activation_checkpoint.mode", "none"}, {"training.mixed_precision_param", "bfloat16"},
                {"parallelism.zero_stage", 2}, {"training.lora_target", "q_proj,v_proj"}},
               "yaml");
    // ms-swift: an adapter file alone (knowledge/frameworks/ms_swift.yaml); `--deepspeed` takes its presets
    round_trip(framework_adapter::get("ms_swift"),
               {{"training.local_batch_size", 1}, {"training.gradient_accumulation_steps", 16},
                {"activation_checkpoint.mode", "full"}, {"training.seq_len", 4096}, {"training.finetuning_type", "lora"},
                {"training.quantization_bit", 4}, {"training.lora_rank", 16}, {"training.lora_target", "q_proj,v_proj"},
                {"model.attn_impl", "flash"}, {"training.chunked_loss", true}, {"training.packing", true},
                {"parallelism.context_parallel_degree", 2}, {"parallelism.zero_stage", 3}, {"optimizer.offload", "cpu"}},
               "cli");
    // TRL GRPO: the engine's placement, share, sleep mode and length
    round_trip(framework_adapter::get("trl"),
               {{"training.rollout_memory_fraction", 0.25}, {"training.rollout_sleeps", true}, {"training.rollout_colocated", true},
                {"training.rollout_max_model_len", 4096}, {"training.local_batch_size", 4}},
               "yaml");
    // GRPO with a vLLM rollout engine: its share of the device and its maximum length
    round_trip(framework_adapter::get("ms_swift"),
               {{"training.rollout_memory_fraction", 0.45}, {"training.rollout_max_model_len", 8192}}, "cli");
    round_trip(framework_adapter::get("ms_swift"),
               {{"activation_checkpoint.mode", "none"}, {"training.finetuning_type", "full"}, {"parallelism.zero_stage", 2},
                {"training.lora_target", "all-linear"}, {"training.mixed_precision_param", "bfloat16"}},
               "yaml");
    // diffusers example scripts: an adapter file alone (knowledge/frameworks/diffusers.yaml)
    round_trip(framework_adapter::get("diffusers"),
               {{"training.local_batch_size", 1}, {"training.image_resolution", 768}, {"training.gradient_accumulation_steps", 4},
                {"activation_checkpoint.mode", "full"}, {"optimizer.name", "AdamW8bit"}, {"training.mixed_precision_param", "float16"},
                {"model.attn_impl", "flash"}, {"training.lora_rank", 8}},
               "cli");
    round_trip(framework_adapter::get("diffusers"), {{"activation_checkpoint.mode", "none"}, {"optimizer.name", "AdamW"}}, "cli");
    // kohya-ss sd-scripts: an adapter file alone (knowledge/frameworks/kohya_sd_scripts.yaml)
    round_trip(framework_adapter::get("kohya_sd_scripts"),
               {{"training.local_batch_size", 1}, {"training.image_resolution", 768}, {"activation_checkpoint.mode", "full"},
                {"optimizer.name", "AdamW8bit"}, {"training.mixed_precision_param", "bfloat16"}, {"model.attn_impl", "flash"},
                {"training.lora_rank", 16}},
               "cli");
    // torchtune: an adapter file alone (knowledge/frameworks/torchtune.yaml)
    round_trip(framework_adapter::get("torchtune"),
               {{"training.local_batch_size", 1}, {"training.gradient_accumulation_steps", 8},
                {"activation_checkpoint.mode", "full"}, {"training.seq_len", 2048}, {"compile.enable", true},
                {"training.mixed_precision_param", "bfloat16"}, {"training.chunked_loss", true},
                {"optimizer.in_backward", true}, {"activation_checkpoint.offload", true},
                {"parallelism.offload_params", "cpu"}, {"parallelism.zero_stage", 2}, {"training.lora_rank", 16}},
               "yaml");
    round_trip(framework_adapter::get("torchtune"),
               {{"activation_checkpoint.mode", "none"}, {"training.chunked_loss", false}, {"parallelism.zero_stage", 3},
                {"optimizer.offload", "cpu"}, {"training.packing", true}},
               "yaml");
}

TEST_CASE("match: patterns with groups give canonical values; join: several keys build one list") {
    const std::string adapter = write("pat_adapter.yaml", R"(name: pat
syntax: yaml
formats: [yaml]
keys:
  - {key: model._component_, canonical: job.model_name, render: false,
     match: {'^(?:\w+\.)*(?:q?lora_)?(\w+?)(?:_instruct)?$': "{1}"}}
  - {key: model._component_, canonical: training.quantization_bit, render: false,
     match: {'^(?:\w+\.)*qlora_\w+$': 4}, values: {"*": null}}
  - {key: loss, canonical: training.chunked_loss, match: {'.*Chunked.*': true, '.*CrossEntropyLoss': false}}
  - {key: model.attn, canonical: training.lora_target, join: ",", values: {"*": "{value}"}}
  - {key: model.mlp, canonical: training.lora_target, join: ",", values: {"true": "w1,w2,w3", "false": null}}
)");
    const framework_adapter a = framework_adapter::load(adapter);
    auto facts_of = [&](const std::string& name, const std::string& text) {
        job_config j = parse_job_config(write(name, text), a);
        fact_store store = shipped_facts(j);
        return std::make_pair(std::move(j), std::move(store));
    };
    {
        auto [j, store] = facts_of("pat1.yaml",
                                   "model:\n  _component_: torchtune.models.qwen2_5.qlora_qwen2_5_7b_instruct\n"
                                   "  mlp: true\n  attn: [q_proj, v_proj]\nloss: x.CEWithChunkedOutputLoss\n");
        CHECK(store.string("job.model_name") == "qwen2_5_7b");
        CHECK(store.integer("training.quantization_bit") == 4);
        CHECK(store.boolean("training.chunked_loss") == true);
        // the MLP part comes first in the file: joined, not replaced
        CHECK(store.string("training.lora_target") == "w1,w2,w3,q_proj,v_proj");
        CHECK(j.unknown_keys.empty());
    }
    {
        auto [j, store] = facts_of("pat2.yaml", "model:\n  _component_: m.lora_llama3_1_8b\n  attn: [q_proj]\n  mlp: false\n"
                                                "loss: torch.nn.CrossEntropyLoss\n");
        CHECK(store.string("job.model_name") == "llama3_1_8b");
        CHECK_FALSE(store.has("training.quantization_bit"));  // no pattern matched, values "*": no fact
        CHECK(store.boolean("training.chunked_loss") == false);
        CHECK(store.string("training.lora_target") == "q_proj");
        CHECK(j.unknown_keys.empty());
    }
    {
        // no pattern matches and no values: the value is reported, not guessed
        auto [j, store] = facts_of("pat3.yaml", "loss: my.SquaredLoss\n");
        CHECK_FALSE(store.has("training.chunked_loss"));
        REQUIRE(j.unknown_keys.size() == 1);
        CHECK(j.unknown_keys[0].find("my.SquaredLoss") != std::string::npos);
    }
    // a pattern RE2 cannot compile names its line
    CHECK(load_error("bad_match.yaml", "name: x\nsyntax: yaml\nkeys:\n  - {key: a, canonical: job.model_name,\n"
                                       "     match: {'(unclosed': x}}\n")
              .find("bad_match.yaml:5") != std::string::npos);
}

TEST_CASE("a sixth framework needs only a YAML file") {
    auto adapters = framework_adapter::load_dir(fixtures + "sixth/adapters");
    REQUIRE(adapters.size() == 1);
    const framework_adapter& nemo = adapters[0];
    CHECK(nemo.name() == "nemo");
    job_config j = parse_job_config(fixtures + "sixth/megatron_gpt_config.yaml", nemo);
    CHECK(j.framework == "nemo");
    fact_store store = shipped_facts(j);
    CHECK(store.integer("training.local_batch_size") == 4);
    CHECK(store.integer("parallelism.tensor_parallel_degree") == 2);
    CHECK(store.string("activation_checkpoint.mode") == "selective");
    CHECK(store.string("training.mixed_precision_param") == "bfloat16");
    CHECK(store.integer("job.world_size") == 16);
    REQUIRE(j.unknown_keys.size() == 1);
    CHECK(j.unknown_keys[0].find("model.megablocks_cache") != std::string::npos);
    CHECK(nemo.render({{"activation_checkpoint.mode", "full"}}) ==
          "model:\n  activations_checkpoint_granularity: full\n  activations_checkpoint_method: uniform\n"
          "  activations_checkpoint_num_layers: 1\n");
    round_trip(nemo, {{"training.local_batch_size", 2}, {"parallelism.tensor_parallel_degree", 4},
                      {"activation_checkpoint.mode", "full"}, {"training.seq_len", 8192}}, "yaml");
}

TEST_CASE("MindSpeed-LLM LoRA: --lora-target-modules takes every following word (nargs +) and turns LoRA on") {
    // the shape of MindSpeed-LLM's examples/mcore/qwen25/tune_qwen25_72b_4k_lora_ptd.sh
    const std::string sh = write("ms_lora.sh",
                                 "TUNE_ARGS=\"\n    --finetune \\\n    --lora-r 16 \\\n    --lora-alpha 32 \\\n"
                                 "    --lora-target-modules linear_qkv linear_proj linear_fc1 linear_fc2\n\"\n"
                                 "torchrun --nproc_per_node 8 posttrain_gpt.py --swap-attention --micro-batch-size 1 "
                                 "--tensor-model-parallel-size 4 $TUNE_ARGS --qlora --seq-length 4096\n");
    job_config j = parse_job_config(sh, framework_adapter::get("mindspeed"));
    CHECK(j.unknown_keys.empty());
    fact_store store = shipped_facts(j);
    CHECK(store.string("training.finetuning_type") == "lora");
    CHECK(store.string("training.lora_target") == "linear_qkv,linear_proj,linear_fc1,linear_fc2");
    CHECK(store.integer("training.lora_rank") == 16);
    CHECK(store.integer("training.quantization_bit") == 4);
    CHECK(store.integer("training.seq_len") == 4096);  // the list stops at the next flag
    // nargs takes only "+"
    CHECK(load_error("bad_nargs.yaml", "name: x\nsyntax: cli\nkeys:\n  - {key: --a, canonical: training.seq_len, nargs: 2}\n")
              .find("bad_nargs.yaml:4") != std::string::npos);
}

TEST_CASE("malformed adapter files name the line") {
    CHECK(load_error("bad_adapter.yaml", "name: x\nsyntax: cli\nkeys:\n  - {key: --a}\n").find("bad_adapter.yaml:4") !=
          std::string::npos);
    CHECK_THROWS_AS(framework_adapter::load(write("bad_syntax.yaml", "name: x\nsyntax: xml\n")), input_error);
    CHECK_THROWS_AS(framework_adapter::load(write("bad_extends.yaml", "name: x\nextends: nothing_like_it\n")), input_error);
    const std::string since = load_error(
        "bad_since.yaml", "name: x\nsyntax: cli\nkeys:\n  - {key: --a, canonical: training.seq_len,\n     since: 'June 2025'}\n");
    CHECK(since.find("bad_since.yaml:5") != std::string::npos);
    CHECK(since.find("June 2025") != std::string::npos);
    // misspelt fields are refused, not ignored
    const std::string field =
        load_error("bad_field.yaml", "name: x\nsyntax: cli\nkeys:\n  - {key: --a, canonical: training.seq_len, valeus: {a: 1}}\n");
    CHECK(field.find("bad_field.yaml:4") != std::string::npos);
    CHECK(field.find("valeus") != std::string::npos);
    const std::string top = load_error("bad_top.yaml", "name: x\nsyntax: cli\ndefualts: {training.seq_len: 4096}\n");
    CHECK(top.find("bad_top.yaml:3") != std::string::npos);
    CHECK(top.find("defualts") != std::string::npos);
    CHECK_NOTHROW(framework_adapter::load(write("good_since.yaml", "name: x\nsyntax: cli\nkeys:\n  - {key: --a, canonical: training.seq_len, since: 2025-06}\n")));
}

TEST_CASE("detect_required: shared keys alone never choose the adapter, a signature key does") {
    // ms_swift.yaml sets detect_required: --model / --dataset are every launcher's keys
    const job_config stranger = parse_cli_args({"--model", "resnet50", "--dataset", "imagenet", "--batch_size", "1"}, "", "cmd", 1);
    CHECK(stranger.framework != "ms_swift");
    const job_config swift = parse_cli_args({"--model", "Qwen/Qwen2.5-7B-Instruct", "--train_type", "lora", "--max_length", "2048"},
                                            "", "cmd", 1);
    CHECK(swift.framework == "ms_swift");
    // an HF line with the keys ms-swift shares stays HF without an ms-swift signature key
    const job_config hf = parse_cli_args({"--model_name_or_path", "gpt2", "--per_device_train_batch_size", "4", "--output_dir", "o"},
                                         "", "cmd", 1);
    CHECK(hf.framework == "hf_trainer");
}

TEST_CASE("verl: Hydra key=value overrides written and read back; prompt + response lengths make the sequence") {
    const override_syntax syn = override_syntax_for("verl");
    CHECK(syn.syntax == "dotlist");
    const std::vector<canonical_override> ovs{{"training.local_batch_size", 8},
                                              {"activation_checkpoint.mode", "full"},
                                              {"optimizer.offload", "cpu"},
                                              {"parallelism.offload_params", "cpu"},
                                              {"parallelism.context_parallel_degree", 2},
                                              {"training.chunked_loss", true}};
    const auto lines = render_overrides(syn, ovs);
    std::string cmd = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.max_prompt_length=512 "
                      "data.max_response_length=1024 actor_rollout_ref.rollout.name=vllm";
    for (const auto& l : lines) {
        CAPTURE(l);
        CHECK(l.find("has no setting") == std::string::npos);
        CHECK(l.rfind("actor_rollout_ref.", 0) == 0);  // key=value operands, no --flags
        cmd += " " + l;
    }
    job_config j = parse_job_config(write("verl_run.sh", cmd + "\n"));
    CHECK(j.framework == "verl");
    CHECK(j.unknown_keys.empty());
    const fact_store store = check_read_back(j, ovs);
    CHECK(store.integer("training.seq_len") == 1536);
    // a smaller micro-batch keeps verl's mini-batch: nothing to write for the accumulation
    CHECK(can_express(syn, {{"training.local_batch_size", 4}, {"training.gradient_accumulation_steps", 2}}).ok);
    // one of the two lengths alone gives that one
    job_config one = parse_job_config(write("verl_one.sh", "python3 -m verl.trainer.main_ppo data.max_response_length=2048 "
                                                           "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4\n"));
    fact_store s1 = shipped_facts(one);
    CHECK(s1.integer("training.seq_len") == 2048);
}

// rev41: verl's use_remove_padding unpads each micro-batch (the sequences keep their real lengths); the estimate fills each
// one to the length cap (or the token budget) and its assumptions say which.
TEST_CASE("rev41 verl GRPO: the estimate says each sequence is at its cap, or at the token budget the config states") {
    const std::string base =
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=256 "
        "data.max_prompt_length=1024 data.max_response_length=3072 actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct "
        "actor_rollout_ref.model.use_remove_padding=True actor_rollout_ref.actor.ppo_mini_batch_size=64 "
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 actor_rollout_ref.rollout.name=vllm "
        "actor_rollout_ref.rollout.n=5 trainer.n_gpus_per_node=8 trainer.nnodes=1 ";
    auto input = [&](const std::string& name, const std::string& extra) {
        const job_config j = parse_job_config(write(name, base + extra + "\n"));
        fact_store s = shipped_facts(j);
        emit_facts(*find_semantics("verl"), s);
        for (const auto& [k, v] : std::vector<std::pair<const char*, std::int64_t>>{
                 {"model.hidden_size", 3584}, {"model.num_layers", 28}, {"model.num_attention_heads", 28},
                 {"model.num_kv_heads", 4}, {"model.intermediate_size", 18944}, {"model.vocab_size", 152064}})
            s.emit(k, value(v), provenance{});
        s.emit("job.world_size", value(std::int64_t(8)), provenance{});
        return from_facts(s);
    };
    auto has = [](const estimate_input& in, const std::string& part) {
        return std::any_of(in.assumptions.begin(), in.assumptions.end(),
                           [&](const std::string& a) { return a.find(part) != std::string::npos; });
    };
    const estimate_input cap = input("verl_grpo_cap.sh", "");
    CHECK(cap.micro_batch == 4);
    CHECK(cap.seq_len == 4096);
    CHECK(has(cap, "micro-batch 4, every sequence at its length cap of 4096 tokens"));
    CHECK_FALSE(has(cap, "fill the token budget"));
    // the config states a token budget that verl reads: the estimate takes it
    const estimate_input dyn = input("verl_grpo_dyn.sh", "actor_rollout_ref.actor.use_dynamic_bsz=True "
                                                         "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384");
    CHECK(dyn.dynamic_budget);
    CHECK(dyn.micro_batch == 4);
    CHECK(has(dyn, "fill the token budget; estimated at the budget, 4 whole sequences of 4096 tokens"));
    CHECK_FALSE(has(dyn, "at its length cap"));
    // padded micro-batches (use_remove_padding off): no such line
    CHECK_FALSE(has(input("verl_grpo_pad.sh", "actor_rollout_ref.model.use_remove_padding=False"), "unpadded micro-batches"));
}

TEST_CASE("verl: with use_dynamic_bsz the token budget per GPU (x Ulysses) sets the micro-batch, not ppo_micro_batch_size_per_gpu") {
    const std::string base = "python3 -m verl.trainer.main_ppo data.max_prompt_length=1024 data.max_response_length=1024 "
                             "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=40 ";
    auto micro = [&](const std::string& name, const std::string& extra) {
        const job_config j = parse_job_config(write(name, base + extra + "\n"));
        fact_store s = shipped_facts(j);
        return s.integer("training.local_batch_size");
    };
    // off (verl's default): the sample micro-batch, whatever the token key says
    CHECK(micro("verl_static.sh", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000") == 40);
    // on: 24000 tokens / 2048 per sequence, rounded down
    CHECK(micro("verl_dyn.sh", "actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000") == 11);
    // on, budget unstated: verl's default 16384 tokens
    CHECK(micro("verl_dyn_default.sh", "actor_rollout_ref.actor.use_dynamic_bsz=True") == 8);
    // on, with Ulysses 2: the micro-batch holds 2 x 24000 tokens before the split
    CHECK(micro("verl_dyn_sp.sh", "actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000 "
                                  "actor_rollout_ref.actor.ulysses_sequence_parallel_size=2") == 23);
    // the budget is written back with the switch that makes verl read it
    const auto lines = render_overrides(override_syntax_for("verl"), {{"training.max_tokens_per_device", 12000}});
    CHECK(std::find(lines.begin(), lines.end(), "actor_rollout_ref.actor.use_dynamic_bsz=true") != lines.end());
    CHECK(std::find(lines.begin(), lines.end(), "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=12000") != lines.end());
    // the scoring passes' micro-batch is read from the rollout's key and written to both scoring workers
    const job_config sc = parse_job_config(write("verl_scoring.sh", base + "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16\n"));
    fact_store ss = shipped_facts(sc);
    CHECK(ss.integer("training.scoring_batch_size") == 16);
    CHECK(ss.integer("training.local_batch_size") == 40);
    const auto sl = render_overrides(override_syntax_for("verl"), {{"training.scoring_batch_size", 8}});
    CHECK(std::find(sl.begin(), sl.end(), "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8") != sl.end());
    CHECK(std::find(sl.begin(), sl.end(), "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8") != sl.end());
    // the rollout engine's share of each device: verl's default 0.5 when unset, the job's value when set, written back
    CHECK(ss.number("training.rollout_memory_fraction") == doctest::Approx(0.5));
    const job_config sh = parse_job_config(write("verl_share.sh", base + "actor_rollout_ref.rollout.gpu_memory_utilization=0.85 "
                                                                        "actor_rollout_ref.rollout.max_model_len=9000\n"));
    fact_store hs = shipped_facts(sh);
    CHECK(hs.number("training.rollout_memory_fraction") == doctest::Approx(0.85));
    CHECK(hs.integer("training.rollout_max_model_len") == 9000);
    const auto rl = render_overrides(override_syntax_for("verl"), {{"training.rollout_memory_fraction", 0.4}});
    CHECK(std::find(rl.begin(), rl.end(), "actor_rollout_ref.rollout.gpu_memory_utilization=0.4") != rl.end());
    // the scoring passes batched by tokens: their own budget read, and written back with the switch for both workers
    const job_config st = parse_job_config(write("verl_scoring_tokens.sh", base + "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True "
                                                                           "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=20000\n"));
    fact_store ts = shipped_facts(st);
    CHECK(ts.boolean("training.scoring_dynamic_batch") == true);
    CHECK(ts.integer("training.scoring_max_tokens_per_device") == 20000);
    const auto tl = render_overrides(override_syntax_for("verl"), {{"training.scoring_max_tokens_per_device", 10000}});
    for (const char* want : {"actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true", "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=10000",
                             "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true", "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=10000"})
        CHECK(std::find(tl.begin(), tl.end(), want) != tl.end());
}

TEST_CASE("TRL GRPO: a GRPOConfig is TRL's, one update sequence is prompt plus completion, a colocated engine keeps its pool") {
    const job_config j = parse_job_config("tests/fixtures/configs/trl/grpo_colocate.yaml");
    CHECK(j.framework == "trl");
    CHECK(j.unknown_keys.empty());
    fact_store s = shipped_facts(j);
    CHECK(s.integer("training.seq_len") == 2560);
    CHECK(s.boolean("training.rollout_colocated") == true);
    CHECK(s.number("training.rollout_memory_fraction") == doctest::Approx(0.7));
    CHECK(s.boolean("training.rollout_sleeps") == false);  // GRPOConfig's default
    CHECK(s.string("activation_checkpoint.mode") == "full");
    // a plain TrainingArguments file stays HF Trainer's
    const job_config h = parse_job_config(write("trl_plain.yaml", "per_device_train_batch_size: 4\ngradient_checkpointing: true\noutput_dir: out\n"));
    CHECK(h.framework == "hf_trainer");
    // without vLLM there is no engine pool on the device
    const job_config n = parse_job_config(write("trl_no_vllm.yaml", "num_generations: 8\nmax_completion_length: 1024\nuse_vllm: false\n"
                                                                     "per_device_train_batch_size: 4\n"));
    fact_store ns = shipped_facts(n);
    CHECK(n.framework == "trl");
    CHECK(ns.boolean("training.rollout_colocated") == false);
}

TEST_CASE("OpenRLHF: its launch scripts are its own, PPO's sequence is prompt plus response, bare flags say one value") {
    const job_config sft = parse_job_config("tests/fixtures/configs/openrlhf/sft_llama3_8b.sh");
    CHECK(sft.framework == "openrlhf");  // --flash_attn and --bf16 alone would sign it LLaMA-Factory's
    CHECK(sft.unknown_keys.empty());
    fact_store s = shipped_facts(sft);
    CHECK(s.integer("training.local_batch_size") == 4);
    CHECK(s.integer("training.seq_len") == 4096);
    CHECK(s.integer("parallelism.zero_stage") == 2);
    CHECK(s.string("activation_checkpoint.mode") == "full");
    CHECK(s.string("training.finetuning_type") == "full");
    CHECK(s.string("model.attn_impl") == "flash");

    const job_config ppo = parse_job_config("tests/fixtures/configs/openrlhf/ppo_colocate_qwen7b.sh");
    CHECK(ppo.framework == "openrlhf");
    CHECK(ppo.unknown_keys.empty());  // the `ray job submit` options before its `--` too
    fact_store p = shipped_facts(ppo);
    CHECK(p.integer("training.seq_len") == 4096);  // --prompt_max_len 1024 + --generate_max_len 3072
    CHECK(p.integer("training.scoring_batch_size") == 8);
    CHECK(p.integer("job.world_size") == 8);
    CHECK(p.boolean("training.rollout_colocated") == true);
    CHECK(p.boolean("training.rollout_sleeps") == true);
    CHECK(p.number("training.rollout_memory_fraction") == doctest::Approx(0.6));

    const override_syntax syn = override_syntax_for("openrlhf");
    const std::vector<canonical_override> ovs{{"training.local_batch_size", 2},
                                              {"activation_checkpoint.mode", "full"},
                                              {"optimizer.offload", "cpu"},
                                              {"parallelism.zero_stage", 3},
                                              {"training.finetuning_type", "lora"}};
    std::string cmd = "deepspeed --module openrlhf.cli.train_sft --pretrain meta-llama/Meta-Llama-3-8B --max_len 2048";
    for (const auto& l : render_overrides(syn, ovs)) {
        CAPTURE(l);
        CHECK(l.find("has no setting") == std::string::npos);
        cmd += " " + l;
    }
    const job_config back = parse_job_config(write("openrlhf_back.sh", cmd + "\n"));
    CHECK(back.framework == "openrlhf");
    CHECK(back.unknown_keys.empty());
    check_read_back(back, ovs);
    // --gradient_checkpointing is full checkpointing: leaving it out is "none", and selective has no spelling
    CHECK(can_express(syn, {{"activation_checkpoint.mode", "none"}}).ok);
    CHECK_FALSE(can_express(syn, {{"activation_checkpoint.mode", "selective"}}).ok);
}

TEST_CASE("OpenRLHF v0.10.2+: the dotted flags are a separate spelling, written back as such") {
    const job_config j = parse_job_config("tests/fixtures/configs/openrlhf/grpo_dotted_qwen3_8b.sh");
    CHECK(j.framework == "openrlhf_dotted");
    CHECK(j.unknown_keys.empty());
    fact_store s = shipped_facts(j);
    CHECK(s.integer("training.seq_len") == 8192);
    CHECK(s.integer("training.local_batch_size") == 1);
    CHECK(s.integer("parallelism.zero_stage") == 3);
    CHECK(s.integer("job.world_size") == 8);
    CHECK(s.boolean("training.rollout_colocated") == true);
    CHECK(s.string("activation_checkpoint.mode") == "full");
    const override_syntax syn = override_syntax_for("openrlhf_dotted");
    const std::vector<canonical_override> ovs{{"optimizer.offload", "cpu"}, {"training.scoring_batch_size", 2},
                                              {"parallelism.context_parallel_degree", 2}};
    std::string cmd = "python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-8B --train.micro_batch_size 1";
    for (const auto& l : render_overrides(syn, ovs)) {
        CAPTURE(l);
        CHECK((l.starts_with("--ds.") || l.starts_with("--rollout.")));  // a dotted flag
        cmd += " " + l;
    }
    const job_config back = parse_job_config(write("openrlhf_dotted_back.sh", cmd + "\n"));
    CHECK(back.framework == "openrlhf_dotted");
    check_read_back(back, ovs);
    // the flat spelling stays the flat adapter's
    CHECK(parse_job_config(write("openrlhf_flat.sh", "python3 -m openrlhf.cli.train_ppo_ray --micro_train_batch_size 2 --zero_stage 3\n"))
              .framework == "openrlhf");
}

TEST_CASE("aliases render in the job's own spelling: the key it wrote, else the flag namespace it writes") {
    // OpenRLHF v0.10.2+: an SFT script writes --model.*, a PPO script --actor.*; checkpointing follows.
    const std::string sft_cmd =
        "python3 -m openrlhf.cli.train_sft --model.model_name_or_path meta-llama/Meta-Llama-3-8B "
        "--train.micro_batch_size 4 --ds.zero_stage 2 --data.max_len 4096\n";
    const job_config sft = parse_job_config(write("openrlhf_dotted_sft.sh", sft_cmd));
    REQUIRE(sft.framework == "openrlhf_dotted");
    const std::vector<canonical_override> ac{{"activation_checkpoint.mode", "full"}};
    const auto sft_lines = render_overrides(detect_override_syntax(sft), ac);
    REQUIRE(sft_lines.size() == 1);
    CHECK(sft_lines[0] == "--model.gradient_checkpointing_enable");
    const job_config sft_back = parse_job_config(write("openrlhf_dotted_sft_back.sh",
                                                       sft_cmd.substr(0, sft_cmd.size() - 1) + " " + sft_lines[0] + "\n"));
    check_read_back(sft_back, ac);
    // the PPO script (--actor.*) keeps the actor's flag, and so does a job with no file to read
    const job_config ppo = parse_job_config("tests/fixtures/configs/openrlhf/grpo_dotted_qwen3_8b.sh");
    const auto ppo_lines = render_overrides(detect_override_syntax(ppo), {{"activation_checkpoint.mode", "none"}});
    REQUIRE(ppo_lines.size() == 1);
    CHECK(ppo_lines[0] == "# remove --actor.gradient_checkpointing_enable");
    CHECK(render_overrides(override_syntax_for("openrlhf_dotted"), ac)[0] == "--actor.gradient_checkpointing_enable");

    // ms-swift 4.x renamed --train_type to --tuner_type: a job that wrote the new name gets it back.
    const job_config v4 = parse_job_config(write("swift4.sh", "swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type lora "
                                                              "--per_device_train_batch_size 2 --max_length 2048\n"));
    REQUIRE(v4.framework == "ms_swift");
    const std::vector<canonical_override> full{{"training.finetuning_type", "full"}};
    CHECK(render_overrides(detect_override_syntax(v4), full) == std::vector<std::string>{"--tuner_type full"});
    const job_config v3 = parse_job_config(write("swift3.sh", "swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora "
                                                              "--per_device_train_batch_size 2 --max_length 2048\n"));
    CHECK(render_overrides(detect_override_syntax(v3), full) == std::vector<std::string>{"--train_type full"});
    // a TOML table header is not a spelling: torchtitan keeps its own key for the SAC option
    const job_config tt = parse_job_config(write("tt_sections.toml", "[activation_checkpoint]\nmode = \"full\"\n[training]\nlocal_batch_size = 2\n"));
    const auto tt_lines = render_overrides(detect_override_syntax(tt), {{"activation_checkpoint.selective_ac_option", "op"}});
    CHECK(std::find(tt_lines.begin(), tt_lines.end(), "selective_ac_option = \"op\"") != tt_lines.end());
}

TEST_CASE("est69: ms-swift 1.x / 2.x spellings keep their LoRA target default (the model's q/k/v), 3.x all-linear") {
    // 2.x: --sft_type lora and no target: lora_target_modules DEFAULT (LoRATM), the attention q/k/v
    const job_config v2 = parse_job_config(write("swift2_lora.sh", "swift sft --model_type qwen1half-7b-chat --sft_type lora "
                                                                   "--dataset alpaca-zh --max_length 2048\n"));
    REQUIRE(v2.framework == "ms_swift");
    const fact_store s2 = shipped_facts(v2);
    CHECK(s2.string("training.lora_target") == "qkv");
    CHECK(s2.get("training.lora_target")->prov.producer == "config.ms_swift.spelling_default");
    // the same job in 3.x spelling: all-linear
    const fact_store s3 = shipped_facts(parse_job_config(write("swift3_lora.sh", "swift sft --model Qwen/Qwen1.5-7B-Chat "
                                                                                 "--train_type lora --max_length 2048\n")));
    CHECK(s3.string("training.lora_target") == "all-linear");
    // a 2.x job that names its target keeps it; ALL is every linear, DEFAULT the q/k/v
    const fact_store all = shipped_facts(parse_job_config(write("swift2_all.sh", "swift sft --model_type qwen-7b-chat --sft_type lora "
                                                                                 "--lora_target_modules ALL\n")));
    CHECK(all.string("training.lora_target") == "all-linear");
    const fact_store def = shipped_facts(parse_job_config(write("swift2_def.sh", "swift sft --model_type qwen-7b-chat "
                                                                                 "--lora_target_modules DEFAULT --dtype bf16\n")));
    CHECK(def.string("training.lora_target") == "qkv");
    const fact_store two = shipped_facts(parse_job_config(write("swift2_two.sh", "swift sft --model_type qwen-7b-chat --sft_type lora "
                                                                                 "--lora_target_modules q_proj v_proj\n")));
    CHECK(two.string("training.lora_target") != "qkv");
}

TEST_CASE("est44: the preference stage, its loss and precomputed reference log-probs become canonical facts") {
    // LLaMA-Factory: stage and pref_loss (hparams/finetuning_args.py use_ref_model)
    job_config lf = parse_job_config(write("lf_dpo.yaml", "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n"
                                                          "stage: dpo\ndo_train: true\nfinetuning_type: full\npref_loss: orpo\n"
                                                          "template: llama3\ncutoff_len: 2048\n"));
    CHECK(lf.framework == "llama_factory");
    CHECK(lf.unknown_keys.empty());
    fact_store s = shipped_facts(lf);
    CHECK(s.string("training.stage") == "dpo");
    CHECK(s.string("training.pref_loss") == "orpo");
    // ms-swift: swift rlhf --rlhf_type kto (full tuning keeps a reference copy)
    job_config sw = parse_job_config(write("swift_kto.sh", "swift rlhf --rlhf_type kto --model Qwen/Qwen2.5-7B-Instruct "
                                                           "--train_type full --precompute_ref_log_probs true\n"));
    CHECK(sw.framework == "ms_swift");
    fact_store s2 = shipped_facts(sw);
    CHECK(s2.string("training.stage") == "kto");
    CHECK(s2.boolean("training.precompute_ref_log_probs") == true);
    // axolotl: rl ipo is DPO with another loss
    job_config ax = parse_job_config(write("axolotl_ipo.yaml", "base_model: meta-llama/Meta-Llama-3-8B\nrl: ipo\nmicro_batch_size: 1\n"
                                                               "sequence_len: 2048\nsample_packing: false\n"));
    CHECK(ax.framework == "axolotl");
    fact_store s3 = shipped_facts(ax);
    CHECK(s3.string("training.stage") == "dpo");
}

TEST_CASE("est45: the script a launch line runs names the preference stage (OpenRLHF train_dpo, TRL dpo.py / `trl dpo`)") {
    // OpenRLHF flat spelling: deepspeed --module openrlhf.cli.train_dpo, with the reference offloaded
    job_config o = parse_job_config(write("orlhf_dpo.sh", "deepspeed --module openrlhf.cli.train_dpo --pretrain meta-llama/Meta-Llama-3-8B "
                                                          "--micro_train_batch_size 1 --train_batch_size 128 --zero_stage 3 "
                                                          "--ref_offload --max_len 2048 --bf16 --flash_attn\n"));
    CHECK(o.framework == "openrlhf");
    fact_store s = shipped_facts(o);
    CHECK(s.string("job.entry_script") == "train_dpo.py");
    CHECK(s.string("training.stage") == "dpo");
    CHECK(s.boolean("training.reference_offload") == true);
    // its SFT script names no preference stage, and no --ref_offload means no fact
    job_config o2 = parse_job_config(write("orlhf_sft.sh", "deepspeed --module openrlhf.cli.train_sft --pretrain meta-llama/Meta-Llama-3-8B "
                                                           "--micro_train_batch_size 1 --zero_stage 2 --max_len 2048 --bf16\n"));
    CHECK(o2.framework == "openrlhf");
    fact_store s2 = shipped_facts(o2);
    CHECK(s2.string("job.entry_script") == "train_sft.py");
    CHECK_FALSE(s2.get("training.stage"));
    CHECK_FALSE(s2.get("training.reference_offload"));
    // the dotted spelling (v0.10.2+), launched with python -m
    job_config d = parse_job_config(write("orlhf_dpo_dotted.sh", "python -m openrlhf.cli.train_dpo --model.model_name_or_path Qwen/Qwen2.5-7B "
                                                                 "--train.micro_batch_size 2 --ds.zero_stage 3 --ref.offload\n"));
    CHECK(d.framework == "openrlhf_dotted");
    fact_store s3 = shipped_facts(d);
    CHECK(s3.string("training.stage") == "dpo");
    CHECK(s3.boolean("training.reference_offload") == true);
    // TRL's console script runs trl/scripts/dpo.py; its sft.py names no stage
    job_config t = parse_job_config(write("trl_dpo.sh", "trl dpo --model_name_or_path Qwen/Qwen2.5-0.5B --per_device_train_batch_size 2 "
                                                        "--gradient_checkpointing true --output_dir out\n"));
    fact_store s4 = shipped_facts(t);
    CHECK(s4.string("job.entry_script") == "dpo.py");
    CHECK(s4.string("training.stage") == "dpo");
    job_config t2 = parse_job_config(write("trl_sft.sh", "accelerate launch trl/scripts/sft.py --model_name_or_path Qwen/Qwen2.5-0.5B "
                                                         "--per_device_train_batch_size 2 --output_dir out\n"));
    fact_store s5 = shipped_facts(t2);
    CHECK(s5.string("job.entry_script") == "sft.py");
    CHECK_FALSE(s5.get("training.stage"));
}

TEST_CASE("a NAME=value prefix belongs to its own command, not to the job's launch line") {
    // ms-swift's examples train with `NPROC_PER_NODE=2 megatron sft ...` and then export with
    // `NPROC_PER_NODE=1 megatron export ...`: the export's prefix is not the job's world size.
    const job_config j = parse_job_config(write("swift_train_then_export.sh",
        "NPROC_PER_NODE=2 \\\nCUDA_VISIBLE_DEVICES=0,1 \\\nswift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora \\\n"
        "    --per_device_train_batch_size 2 --max_length 2048\n\n"
        "CUDA_VISIBLE_DEVICES=0 \\\nNPROC_PER_NODE=1 \\\nswift export --adapters output/checkpoint-100 --merge_lora true\n"));
    REQUIRE(j.framework == "ms_swift");
    const fact_store s = shipped_facts(j);
    CHECK(s.integer("job.world_size") == 2);
    // an exported variable stays the script's, whichever command follows
    const job_config e = parse_job_config(write("swift_exported.sh",
        "export NPROC_PER_NODE=4\nswift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --max_length 2048\n"
        "NPROC_PER_NODE=1 swift infer --adapters output/checkpoint-100\n"));
    CHECK(shipped_facts(e).integer("job.world_size") == 4);
}

TEST_CASE("a framework's own launcher decides over the keys its line shares with another framework") {
    // `swift rlhf --rlhf_type grpo` takes TRL's GRPO field names (num_generations, use_vllm, vllm_mode, ...):
    // by keys alone TRL's adapter scored higher and read neither --model nor --tuner_type nor NPROC_PER_NODE.
    const job_config g = parse_job_config(write("swift_grpo.sh",
        "NPROC_PER_NODE=4 \\\nswift rlhf \\\n    --rlhf_type grpo \\\n    --model Qwen/Qwen2.5-3B-Instruct \\\n"
        "    --tuner_type lora --quant_method bnb --quant_bits 4 \\\n    --use_vllm true --vllm_mode colocate \\\n"
        "    --vllm_gpu_memory_utilization 0.4 --sleep_level 1 \\\n    --max_length 2048 --max_completion_length 1024 \\\n"
        "    --num_generations 8 --epsilon_high 0.28 --scale_rewards none --per_device_train_batch_size 4 \\\n"
        "    --deepspeed zero2\n"));
    REQUIRE(g.framework == "ms_swift");
    const fact_store s = shipped_facts(g);
    CHECK(s.string("job.model_name") == "Qwen/Qwen2.5-3B-Instruct");
    CHECK(s.string("training.finetuning_type") == "lora");
    CHECK(s.integer("training.quantization_bit") == 4);
    CHECK(s.integer("job.world_size") == 4);
    CHECK(s.integer("parallelism.zero_stage") == 2);
    CHECK(s.boolean("training.rollout_colocated") == true);
    CHECK(s.boolean("training.rollout_sleeps") == true);
    CHECK(s.integer("training.seq_len") == 3072);  // the prompt plus the completion
    // the same keys behind TRL's own launcher stay TRL's
    const job_config t = parse_job_config(write("trl_grpo.sh",
        "accelerate launch train_grpo.py --model_name_or_path Qwen/Qwen2.5-3B-Instruct --num_generations 8 "
        "--use_vllm true --vllm_mode colocate --max_completion_length 1024\n"));
    CHECK(t.framework == "trl");
    // Megatron-SWIFT from its launcher, also when the line holds only a YAML config
    const job_config m = parse_job_config(write("megatron_swift_yaml.sh",
        "NPROC_PER_NODE=2 \\\nmegatron sft \\\n    nonexistent_sft.yaml\n"));
    CHECK(m.framework == "ms_swift_megatron");
    CHECK(shipped_facts(m).integer("job.world_size") == 2);
}

TEST_CASE("8-bit AdamW in each framework's own setting; where a framework has none it cannot be expressed (rev23)") {
    // knowledge/sources/optimizer_8bit_syntax.md: the recommendation used to carry no setting at all
    const std::vector<canonical_override> opt8{{"optimizer.name", "adamw8bit"}};
    CHECK(framework_adapter::get("hf_trainer").render(opt8) == "optim: adamw_bnb_8bit\n");
    CHECK(framework_adapter::get("llama_factory").render(opt8) == "optim: adamw_bnb_8bit\n");
    CHECK(framework_adapter::get("trl").render(opt8) == "optim: adamw_bnb_8bit\n");
    CHECK(framework_adapter::get("axolotl").render(opt8) == "optimizer: adamw_bnb_8bit\n");
    CHECK(framework_adapter::get("torchtune").render(opt8) == "optimizer:\n  _component_: bitsandbytes.optim.AdamW8bit\n");
    CHECK(join(framework_adapter::get("ms_swift").render_lines(opt8)).find("--optim adamw_bnb_8bit") != std::string::npos);
    CHECK(join(framework_adapter::get("kohya_sd_scripts").render_lines(opt8)).find("--optimizer_type AdamW8bit") != std::string::npos);
    CHECK(join(framework_adapter::get("diffusers").render_lines(opt8)).find("--use_8bit_adam") != std::string::npos);
    for (const char* fw : {"deepspeed", "megatron", "torchtitan"}) {
        CAPTURE(fw);
        CHECK_FALSE(can_express(override_syntax_for(fw), "optimizer.name", value("adamw8bit")).ok);
    }
}

TEST_CASE("Megatron's optimizer CPU offload renders with the flags its argument checks require (rev23)") {
    // arguments.py asserts --use-precision-aware-optimizer with --optimizer-cpu-offload, and the precision-aware
    // optimizer raises without the distributed optimizer (knowledge/sources/megatron_optimizer_offload.md)
    const std::string m = framework_adapter::get("megatron").render({{"optimizer.offload", "cpu"}});
    CHECK(m.find("--optimizer-cpu-offload") != std::string::npos);
    CHECK(m.find("--optimizer-offload-fraction 1") != std::string::npos);
    CHECK(m.find("--use-precision-aware-optimizer") != std::string::npos);
    CHECK(m.find("--use-distributed-optimizer") != std::string::npos);
}

TEST_CASE("sweep24: detect_spelling exact, shared HF keys sign nothing, verl's SFT trainer is its own") {
    // Megatron-LM writes its parallel sizes with hyphens, Megatron-SWIFT with underscores: a Megatron-LM line
    // carrying MoE and context-parallel sizes (which only Megatron-SWIFT's detect list named) stays Megatron-LM
    const job_config lm = parse_cli_args({"--tensor-model-parallel-size", "2", "--expert-model-parallel-size", "4",
                                          "--expert-tensor-parallel-size", "1", "--context-parallel-size", "2",
                                          "--pipeline-model-parallel-size", "1"}, "", "cmd", 1);
    CHECK(lm.framework == "megatron");
    const job_config sw = parse_cli_args({"--tensor_model_parallel_size", "2", "--expert_model_parallel_size", "4",
                                          "--micro_batch_size", "1"}, "", "cmd", 1);
    CHECK(sw.framework == "ms_swift_megatron");
    // an HF TrainingArguments key alone (output_dir) does not make a custom DeepSpeed script an ms-swift LoRA job
    const job_config ds = parse_cli_args({"--model_name", "x", "--batch_size", "1", "--max_length", "4096", "--output_dir", "o"},
                                         "", "cmd", 1);
    CHECK(ds.framework != "ms_swift");
    // verl's SFT trainer: model.partial_pretrain, a per-GPU micro-batch, LoRA from lora_rank
    const job_config v = parse_job_config(write("verl_sft.sh",
        "torchrun --standalone --nnodes=1 --nproc_per_node=4 -m verl.trainer.fsdp_sft_trainer \\\n"
        "    data.prompt_key=question data.micro_batch_size_per_gpu=2 data.max_length=2048 \\\n"
        "    model.partial_pretrain=Qwen/Qwen2.5-0.5B-Instruct model.lora_rank=32 ulysses_sequence_parallel_size=2\n"));
    REQUIRE(v.framework == "verl_sft");
    const fact_store s = shipped_facts(v);
    CHECK(s.string("job.model_name") == "Qwen/Qwen2.5-0.5B-Instruct");
    CHECK(s.integer("training.local_batch_size") == 2);
    CHECK(s.integer("training.seq_len") == 2048);
    CHECK(s.string("training.finetuning_type") == "lora");
    CHECK(s.integer("parallelism.context_parallel_degree") == 2);
    CHECK(s.integer("parallelism.zero_stage") == 3);
    CHECK(s.string("activation_checkpoint.mode") == "full");
}

TEST_CASE("a launch line inside `bash -c \"...\"` (SLURM's srun) is read as the job's launch line") {
    // SLURM scripts build the launcher and the arguments in variables and run them on every node through
    // `srun bash -c "$LAUNCHER --node_rank \$SLURM_PROCID $CMD"`: the outer shell expands the variables,
    // the inner one runs the line.
    const job_config j = parse_job_config(write("slurm_bash_c.sh",
        "#!/bin/bash\n#SBATCH --nodes=2\nGPUS_PER_NODE=8\n"
        "LAUNCHER=\"torchrun --nproc_per_node $GPUS_PER_NODE --nnodes 2\"\n"
        "CMD=\"pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 2 --num-layers 32 --hidden-size 4096 \\\n"
        "  --num-attention-heads 32 --seq-length 4096 --bf16\"\n"
        "srun --jobid $SLURM_JOB_ID bash -c \"$LAUNCHER --node_rank \\$SLURM_PROCID $CMD\"\n"));
    REQUIRE(j.framework == "megatron");
    const fact_store s = shipped_facts(j);
    CHECK(s.integer("parallelism.tensor_parallel_degree") == 2);
    CHECK(s.integer("training.local_batch_size") == 2);
    CHECK(s.string("job.entry_script") == "pretrain_gpt.py");
    CHECK(s.integer("job.world_size") == 16);
    // single quotes: the inner shell expands; `bash -lc`; a string with an unterminated quote adds nothing
    const job_config q = parse_job_config(write("bash_lc.sh",
        "MBS=4\nbash -lc 'torchrun --nproc_per_node 4 pretrain_gpt.py --micro-batch-size $MBS --num-layers 2'\n"));
    CHECK(shipped_facts(q).integer("training.local_batch_size") == 4);
    CHECK_NOTHROW(parse_job_config(write("bash_c_broken.sh", "bash -c 'echo \"unterminated'\n")));
}

TEST_CASE("rev25: a job that runs DeepSpeed through accelerate gets its ZeRO settings in accelerate's config syntax") {
    // accelerate's config file keeps them in its deepspeed_config section (accelerate commands/config/cluster.py);
    // stage 3 also partitions the model as it is built and gathers 16-bit weights on save
    override_syntax s = override_syntax_for("trl");
    s.deepspeed_file = "the job's accelerate config";
    s.deepspeed_adapter = "accelerate_deepspeed";
    const std::string z3 = join(render_overrides(s, {{"parallelism.zero_stage", 3}}));
    CHECK(z3.find("# the job's accelerate config (YAML):") != std::string::npos);
    CHECK(z3.find("deepspeed_config:\n  zero_stage: 3\n") != std::string::npos);
    CHECK(z3.find("  zero3_init_flag: true") != std::string::npos);
    CHECK(z3.find("  zero3_save_16bit_model: true") != std::string::npos);
    CHECK(z3.find("fsdp") == std::string::npos);             // not FSDP full shard
    CHECK(z3.find("zero_optimization") == std::string::npos);  // not the DeepSpeed JSON
    CHECK(join(render_overrides(s, {{"optimizer.offload", "cpu"}})).find("offload_optimizer_device: cpu") != std::string::npos);
    CHECK(can_express(s, "parallelism.zero_stage", value(3)).ok);
    // what the job runs with once applied: stage 3
    bool z = false;
    for (const auto& o : canonical_closure(s, {{"parallelism.zero_stage", 3}}))
        z |= o.key == "parallelism.zero_stage" && o.val == value(3);
    CHECK(z);
    // an accelerate config read as HF's (distributed_type: DEEPSPEED, its deepspeed_config) says so
    const job_config a = parse_job_config(write("accelerate_ds.yaml",
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"
        "  offload_optimizer_device: none\nnum_processes: 2\nper_device_train_batch_size: 1\n"), "hf_trainer");
    CHECK(shipped_facts(a).boolean("job.deepspeed_via_accelerate").value_or(false));
    CHECK(shipped_facts(a).integer("parallelism.zero_stage") == 2);
}

TEST_CASE("accelerate launch --config_file with FSDP: the file is the base, and sharding / offload are written into it") {
    write("acc_fsdp.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
                           "  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: false\n  fsdp_version: 1\n"
                           "mixed_precision: bf16\nnum_machines: 1\nnum_processes: 4\n");
    const job_config j = parse_job_config(write("acc_fsdp_run.sh",
        "accelerate launch --config_file acc_fsdp.yaml train_sft.py --model_name_or_path meta-llama/Meta-Llama-3-8B "
        "--per_device_train_batch_size 8 --max_seq_length 4096 --gradient_checkpointing --bf16 --output_dir out\n"));
    const fact_store f = shipped_facts(j);
    CHECK(f.integer("parallelism.zero_stage") == 3);  // the accelerate config's FULL_SHARD
    CHECK(f.integer("job.world_size") == 4);
    CHECK(f.integer("training.local_batch_size") == 8);  // the launch line's flags stay
    CHECK(f.boolean("job.fsdp_via_accelerate").value_or(false));
    override_syntax s = detect_override_syntax(j);
    CHECK(s.deepspeed_adapter == "accelerate_fsdp");
    CHECK(s.deepspeed_file == "acc_fsdp.yaml");
    const std::string off = join(render_overrides(s, {{"parallelism.offload_params", "cpu"}}));
    CHECK(off.find("# acc_fsdp.yaml (YAML):") != std::string::npos);
    CHECK(off.find("fsdp_config:\n  fsdp_offload_params: true") != std::string::npos);
    CHECK(off.find("--fsdp") == std::string::npos);  // not HF's flag, whose value is another spelling
    CHECK(join(render_overrides(s, {{"parallelism.zero_stage", 2}})).find("fsdp_sharding_strategy: SHARD_GRAD_OP") !=
          std::string::npos);
}

TEST_CASE("an alias the job spelled is used only where it spells the value the same way") {
    // HF's `fsdp: "full_shard auto_wrap offload"` renders offload; the job's fsdp_config.fsdp_offload_params (true|false)
    // is another spelling of the value, so the rendered key stays `fsdp`
    const framework_adapter& hf = framework_adapter::get("hf_trainer");
    const auto items = hf.translate({{"parallelism.offload_params", "cpu"}}, {"fsdp_config.fsdp_offload_params"}, {});
    bool fsdp = false, wrong = false;
    for (const auto& it : items) {
        fsdp |= it.key == "fsdp";
        wrong |= it.key == "fsdp_config.fsdp_offload_params" && it.val.is_string();
    }
    CHECK(fsdp);
    CHECK_FALSE(wrong);
}

TEST_CASE("cases69: a length the job wrote as prompt + answer is a note with the total, not the total in one part") {
    // hiyouga/LlamaFactory#24: the what-if on the length rendered `max_source_length: 512` for a total of 512 over
    // max_source_length 512 + max_target_length 512
    const framework_adapter& lf = framework_adapter::get("llama_factory");
    const auto items = lf.translate({{"training.seq_len", 512}}, {"max_source_length", "max_target_length"}, {});
    bool note = false, part = false;
    for (const auto& it : items) {
        note |= it.key == "note.training.seq_len" && it.val.is_string() &&
                it.val.as_string() == "max_source_length + max_target_length = 512 in all";
        part |= it.key == "max_source_length" || it.key == "max_target_length";
    }
    CHECK(note);
    CHECK_FALSE(part);
    // a job that wrote cutoff_len keeps its key
    bool cutoff = false;
    for (const auto& it : lf.translate({{"training.seq_len", 512}}, {"cutoff_len"}, {})) cutoff |= it.key == "cutoff_len";
    CHECK(cutoff);
}

TEST_CASE("cases69: fp16 mixed precision renders as HF's fp16 flag, not bf16") {
    // Chinese-LLaMA-Alpaca-3#44 (a T4): the fp16 lever rendered "# code: ... bf16"
    const std::string fp16 = framework_adapter::get("hf_trainer").render({{"training.mixed_precision_param", "float16"}});
    CHECK(fp16.find("fp16") != std::string::npos);
    CHECK(fp16.find("bf16") == std::string::npos);
    const std::string bf16 = framework_adapter::get("hf_trainer").render({{"training.mixed_precision_param", "bfloat16"}});
    CHECK(bf16.find("bf16") != std::string::npos);
}

TEST_CASE("rev25: Megatron's bf16 Adam moments render with the precision-aware and distributed optimizer flags") {
    // arguments.py --exp-avg-dtype / --exp-avg-sq-dtype; core/optimizer/__init__.py refuses the precision-aware
    // optimizer without the distributed one (knowledge/sources/megatron_precision_aware_optimizer.md)
    const std::string m = framework_adapter::get("megatron").render({{"optimizer.state_dtype", "bfloat16"}});
    CHECK(m.find("--use-precision-aware-optimizer") != std::string::npos);
    CHECK(m.find("--exp-avg-dtype bf16") != std::string::npos);
    CHECK(m.find("--exp-avg-sq-dtype bf16") != std::string::npos);
    CHECK(m.find("--use-distributed-optimizer") != std::string::npos);
    // a store_true flag renders bare (argparse refuses `--use-precision-aware-optimizer true`), in the offload too
    CHECK(m.find("--use-precision-aware-optimizer true") == std::string::npos);
    CHECK(framework_adapter::get("megatron").render({{"optimizer.offload", "cpu"}}).find("--use-precision-aware-optimizer true") ==
          std::string::npos);
    // read back: the moments in bf16 on the distributed optimizer
    const job_config j = parse_cli_args({"--use-distributed-optimizer", "--use-precision-aware-optimizer", "--exp-avg-dtype", "bf16",
                                         "--exp-avg-sq-dtype", "bf16", "--tensor-model-parallel-size", "2"}, "", "cmd", 1);
    CHECK(j.framework == "megatron");
    CHECK(shipped_facts(j).string("optimizer.state_dtype") == std::optional<std::string>("bfloat16"));
}

TEST_CASE("rev25: axolotl's eval_batch_size is its evaluation batch, rendered as the setting") {
    // utils/schemas/training.py eval_batch_size (unset: micro_batch_size), passed as per_device_eval_batch_size
    CHECK(framework_adapter::get("axolotl").render({{"training.eval_batch_size", 2}}) == "eval_batch_size: 2\n");
    const job_config j = parse_job_config(write("axolotl_eval.yaml",
        "base_model: mistralai/Mistral-7B-v0.1\nmicro_batch_size: 4\neval_batch_size: 8\nsequence_len: 2048\n"), "");
    CHECK(j.framework == "axolotl");
    CHECK(j.unknown_keys.empty());
    CHECK(shipped_facts(j).integer("training.eval_batch_size") == 8);
}

TEST_CASE("rev26: Megatron-SWIFT's bf16 Adam moments render in its underscore flags with values") {
    // modelscope/ms-swift swift/megatron/arguments/megatron_args.py: use_precision_aware_optimizer (bool, HfArgumentParser
    // takes a value), exp_avg_dtype / exp_avg_sq_dtype (fp32 | fp16 | bf16 | fp8)
    const framework_adapter& a = framework_adapter::get("ms_swift_megatron");
    const std::string m = a.render({{"optimizer.state_dtype", "bfloat16"}});
    CHECK(m.find("--use_precision_aware_optimizer true") != std::string::npos);
    CHECK(m.find("--exp_avg_dtype bf16") != std::string::npos);
    CHECK(m.find("--exp_avg_sq_dtype bf16") != std::string::npos);
    CHECK(m.find("--use_distributed_optimizer true") != std::string::npos);
    CHECK(m.find("--use-precision-aware-optimizer") == std::string::npos);  // Megatron-LM's hyphens are not its flags
    CHECK(m.find("has no setting") == std::string::npos);
    // the rule's lever is offered here (framework.precision_aware_optimizer)
    const framework_semantics* s = find_semantics("ms_swift_megatron");
    REQUIRE(s != nullptr);
    REQUIRE(s->features.count("precision_aware_optimizer") == 1);
    CHECK(s->features.at("precision_aware_optimizer") == value(true));
    // read back from a `megatron sft` argument list
    const job_config j = parse_job_config(write("megatron_swift_moments.sh",
        "megatron sft --model Qwen/Qwen3-8B --micro_batch_size 1 --global_batch_size 16 --use_precision_aware_optimizer true "
        "--exp_avg_dtype bf16 --exp_avg_sq_dtype bf16\n"));
    CHECK(j.framework == "ms_swift_megatron");
    CHECK(j.unknown_keys.empty());
    CHECK(shipped_facts(j).string("optimizer.state_dtype") == std::optional<std::string>("bfloat16"));
    CHECK(shipped_facts(j).boolean("optimizer.precision_aware") == std::optional<bool>(true));
}

TEST_CASE("rev26: a render keyed by another fact: kohya's LoRA module follows the model family") {
    // kohya-ss/sd-scripts: flux_train_network.py takes networks.lora_flux, sd3_train_network.py networks.lora_sd3,
    // train_network.py / sdxl_train_network.py networks.lora
    const framework_adapter& k = framework_adapter::get("kohya_sd_scripts");
    const std::vector<canonical_override> lora{{"training.finetuning_type", "lora"}};
    CHECK(k.render_lines_as(lora, "cli", {}, {{"model.diffusion_family", "flux"}}) ==
          std::vector<std::string>{"--network_module networks.lora_flux"});
    CHECK(k.render_lines_as(lora, "cli", {}, {{"model.diffusion_family", "sd3"}}) ==
          std::vector<std::string>{"--network_module networks.lora_sd3"});
    CHECK(k.render_lines_as(lora, "cli", {}, {{"model.diffusion_family", "sdxl"}}) ==
          std::vector<std::string>{"--network_module networks.lora"});
    CHECK(k.render_lines(lora) == std::vector<std::string>{"--network_module networks.lora"});
    const std::vector<std::string> keys = k.context_keys();
    CHECK(std::find(keys.begin(), keys.end(), "model.diffusion_family") != keys.end());
    // the family from the script a launch line runs, and through the job's override syntax
    const job_config j = parse_job_config(write("flux_full.sh",
        "accelerate launch --mixed_precision bf16 flux_train.py --pretrained_model_name_or_path flux1-dev.safetensors "
        "--train_batch_size 1 --optimizer_type adafactor --full_bf16 --gradient_checkpointing --xformers\n"), "kohya_sd_scripts");
    CHECK(j.framework == "kohya_sd_scripts");
    const fact_store f = shipped_facts(j);
    CHECK(f.string("model.diffusion_family") == std::optional<std::string>("flux"));
    override_syntax s = detect_override_syntax(j);
    set_runtime(s, f);
    // rev27: flux_train.py is the full trainer: the line says which script trains LoRA
    CHECK(render_overrides(s, lora) ==
          std::vector<std::string>{"# LoRA is trained by flux_train_network.py: run it in place of flux_train.py",
                                   "--network_module networks.lora_flux"});
    // an adapter file may not misspell the block
    CHECK_THROWS_AS(framework_adapter::load(write("bad_when.yaml",
        "name: bad_when\nsyntax: cli\nrender_when:\n  - when: {model.diffusion_family: flux}\n    renders: {}\n")), input_error);
}

TEST_CASE("A DeepSpeed JSON job turns on activation checkpointing in its script: a code change, not 'no setting'") {
    // The JSON has no checkpointing switch of its own (its activation_checkpointing section configures
    // deepspeed.checkpointing for code that calls it), so the plan may offer full checkpointing as a code change.
    const auto& ds = framework_adapter::get("deepspeed");
    const std::string full = ds.render({{"activation_checkpoint.mode", "full"}});
    CHECK(full.find("# code change: turn on activation checkpointing in the training script") != std::string::npos);
    CHECK(full.find("has no setting") == std::string::npos);
    CHECK(can_express(override_syntax_for("deepspeed"), "activation_checkpoint.mode", value("full")).ok);
    // selective checkpointing has no general spelling in a script
    CHECK_FALSE(can_express(override_syntax_for("deepspeed"), "activation_checkpoint.mode", value("selective")).ok);
}

TEST_CASE("rev33: Megatron-SWIFT's --load X-mcore names the model the checkpoint was converted from") {
    // ms-swift's docs: `swift export --model Qwen/Qwen2.5-7B-Instruct --to_mcore true --output_dir Qwen2.5-7B-Instruct-mcore`,
    // then `megatron sft --load Qwen2.5-7B-Instruct-mcore`: the job named no model the parser read, so no estimate
    const job_config j = parse_job_config(write("megatron_swift_load.sh",
        "NPROC_PER_NODE=8 megatron sft --load Qwen3-30B-A3B-mcore --micro_batch_size 4 --global_batch_size 64 "
        "--max_length 8192\n"));
    REQUIRE(j.framework == "ms_swift_megatron");
    CHECK(shipped_facts(j).string("job.model_name") == std::optional<std::string>("Qwen3-30B-A3B"));
    const job_config p = parse_job_config(write("megatron_swift_load_path.sh",
        "megatron sft --load /ckpt/converted/Qwen2.5-7B-Instruct-mcore/ --micro_batch_size 1\n"));
    CHECK(shipped_facts(p).string("job.model_name") == std::optional<std::string>("Qwen2.5-7B-Instruct"));
    // a checkpoint the name does not tie to a model (a training run's own save folder): no model from it
    const job_config r = parse_job_config(write("megatron_swift_resume.sh",
        "megatron sft --load megatron_output/run1/iter_0001000 --micro_batch_size 1\n"));
    CHECK_FALSE(shipped_facts(r).get("job.model_name"));
}

TEST_CASE("two overrides that render to one key: the later one does not undo words the earlier one holds") {
    // the plan's offload alternative sets the ZeRO stage and the parameter offload; for HF (and LLaMA-Factory, which
    // extends it) both are words of `fsdp`, in either order
    const framework_adapter& lf = framework_adapter::get("llama_factory");
    for (const bool offload_first : {true, false}) {
        std::vector<canonical_override> ovs{{"parallelism.zero_stage", 3}, {"parallelism.offload_params", "cpu"}};
        if (offload_first) std::swap(ovs[0], ovs[1]);
        std::string fsdp;
        for (const auto& it : lf.translate(ovs, {}, {}))
            if (it.key == "fsdp") fsdp = it.val.as_string();
        CHECK(fsdp == "full_shard auto_wrap offload");
    }
    // a later value with a word the earlier one lacks replaces it
    std::string stage;
    for (const auto& it : lf.translate({{"parallelism.zero_stage", 3}, {"parallelism.zero_stage", 2}}, {}, {}))
        if (it.key == "fsdp") stage = it.val.as_string();
    CHECK(stage == "shard_grad_op auto_wrap");
}

TEST_CASE("file_syntax dotlist: a Hydra config file's overrides are key=value operands, not a YAML patch (NeMo, Megatron-Bridge)") {
    // the generic field: any adapter may say how its config files are overridden
    const std::string dir = (scratch_dir() / "file_syntax").string();
    fs::create_directories(dir);
    std::ofstream(dir + "/hydra_fw.yaml") << "name: hydra_fw\nsyntax: dotlist\nfile_syntax: dotlist\nformats: [yaml]\n"
                                             "detect: [model.mbs]\nkeys:\n"
                                             "  - {key: model.mbs, canonical: training.local_batch_size}\n";
    const auto own = framework_adapter::load_dir(dir);
    REQUIRE(own.size() == 1);
    CHECK(own[0].file_syntax() == "dotlist");
    CHECK(framework_adapter::get("hf_trainer").file_syntax().empty());  // others keep their file's own format
    CHECK(load_error("bad_file_syntax.yaml", "name: x\nsyntax: yaml\nfile_syntax: toml\n").find("bad_file_syntax.yaml:3") !=
          std::string::npos);
    // NeMo 1.x YAML: rendered as Hydra operands in its own keys; read back from a launch line
    job_config j = parse_job_config(fixtures + "nemo/llama3_8b_pretrain.yaml");
    CHECK(j.framework == "nemo");
    CHECK(j.unknown_keys.empty());
    const override_syntax syn = detect_override_syntax(j);
    CHECK(syn.syntax == "dotlist");
    const std::vector<canonical_override> ovs{{"parallelism.tensor_parallel_degree", 2},
                                              {"training.local_batch_size", 1},
                                              {"activation_checkpoint.mode", "full"},
                                              {"parallelism.context_parallel_degree", 2},
                                              {"parallelism.sequence_parallel", true}};
    const std::string text = join(render_overrides(syn, ovs));
    CHECK(text.find("model.tensor_model_parallel_size=2\n") != std::string::npos);
    CHECK(text.find("model.micro_batch_size=1\n") != std::string::npos);
    CHECK(text.find("model.activations_checkpoint_granularity=full\n") != std::string::npos);
    CHECK(text.find("model.context_parallel_size=2\n") != std::string::npos);
    // written on the launch line, read back as the same canonical values
    auto hydra_round_trip = [](const std::string& fw, const std::string& launch, const std::vector<canonical_override>& o) {
        CAPTURE(fw);
        std::string cmd = launch;
        for (const auto& l : render_overrides(override_syntax_for(fw), o)) {
            CHECK(l.find("has no setting") == std::string::npos);
            if (l.rfind("#", 0) != 0) cmd += " " + l;
        }
        CAPTURE(cmd);
        job_config r = parse_job_config(write(fw + "_hydra.sh", cmd + "\n"));
        CHECK(r.framework == fw);
        CHECK(r.unknown_keys.empty());
        check_read_back(r, o);
    };
    const std::string nemo_py = "python megatron_gpt_pretraining.py model.mcore_gpt=true";
    hydra_round_trip("nemo", nemo_py, ovs);
    hydra_round_trip("nemo", nemo_py, {{"activation_checkpoint.mode", "selective"}, {"optimizer.distributed", true}});
    hydra_round_trip("nemo", nemo_py, {{"activation_checkpoint.mode", "none"}, {"training.mixed_precision_param", "bfloat16"}});
    // Megatron-Bridge override YAML and NeMo 2.0 recipe lines: the same, in their keys
    job_config b = parse_job_config(fixtures + "nemo/bridge_llama3_8b_override.yaml");
    CHECK(b.framework == "megatron_bridge");
    const std::string bt = join(render_overrides(detect_override_syntax(b), ovs));
    CHECK(bt.find("model.tensor_model_parallel_size=2\n") != std::string::npos);
    CHECK(bt.find("train.micro_batch_size=1\n") != std::string::npos);
    CHECK(bt.find("model.recompute_granularity=full\n") != std::string::npos);
    hydra_round_trip("megatron_bridge", "torchrun --nproc-per-node=8 run_recipe.py --recipe llama3_8b_pretrain_config", ovs);
    hydra_round_trip("megatron_bridge", "torchrun --nproc-per-node=8 run_recipe.py --recipe llama3_8b_pretrain_config",
                     {{"optimizer.distributed", true}, {"training.seq_len", 4096}, {"activation_checkpoint.mode", "selective"}});
    job_config n2 = parse_job_config(fixtures + "nemo/nemo2_pretrain_llama3_70b.sh");
    CHECK(n2.framework == "nemo2");
    const std::string nt = join(render_overrides(detect_override_syntax(n2), ovs));
    CHECK(nt.find("trainer.strategy.tensor_model_parallel_size=2\n") != std::string::npos);
    CHECK(nt.find("data.micro_batch_size=1\n") != std::string::npos);
    hydra_round_trip("nemo2", "nemo llm pretrain --factory llama3_8b", ovs);
    hydra_round_trip("nemo2", "nemo llm pretrain --factory llama3_8b", {{"training.seq_len", 4096}, {"optimizer.distributed", false}});
}

TEST_CASE("cases78: PEFT modules_to_save is read from TRL's ModelConfig and from a script's --modules_to_save") {
    // TRL ModelConfig lora_modules_to_save is a list: the names are joined with commas
    const job_config t = parse_job_config(write("trl_mts.yaml", "use_peft: true\nlora_r: 16\nlora_modules_to_save: [embed_tokens, lm_head]\n"
                                                                "per_device_train_batch_size: 2\noutput_dir: out\n"));
    fact_store ts = shipped_facts(t);
    CHECK(ts.string("training.lora_modules_to_save") == "embed_tokens,lm_head");
    CHECK(ts.string("training.finetuning_type") == "lora");
    // a PEFT training script's own flag (Chinese-LLaMA-Alpaca run_clm_sft_with_peft.py)
    const job_config s = parse_job_config(write("peft_mts.sh", "torchrun --nproc_per_node 1 run_clm_sft_with_peft.py --lora_rank 64 \\\n"
                                                               "    --modules_to_save embed_tokens,lm_head --per_device_train_batch_size 1\n"));
    fact_store ss = shipped_facts(s);
    CHECK(ss.string("training.lora_modules_to_save") == "embed_tokens,lm_head");
    // without either key no modules are said to train in full
    const job_config n = parse_job_config(write("trl_no_mts.yaml", "use_peft: true\nlora_r: 16\nper_device_train_batch_size: 2\noutput_dir: out\n"));
    CHECK_FALSE(shipped_facts(n).has("training.lora_modules_to_save"));
}
