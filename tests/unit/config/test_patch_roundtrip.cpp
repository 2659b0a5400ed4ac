// Overrides in the job's own syntax round-trip: render canonical overrides for a real config,
// apply the rendered lines to it (TOML edit, appended CLI flags, registry field edit,
// launch-arg edit, JSON merge patch, YAML edit, key=value operands), read the result again with
// the parsers and re-estimate: the figure equals the one from the canonical overrides (--set).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "engine/core/fact_store.h"
#include "engine/estimator/preflight.h"
#include "parsers/config/config_patch.h"
#include "parsers/config/override_syntax.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

const std::string repo = std::string(OOMDX_TEST_DIR) + "/..";
const std::string fixtures = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

struct rt_case {
    std::string config;       // path (registry: path:function)
    std::string framework;    // "" = detect
    std::string model, device;
    std::int64_t world = 8;
    std::vector<canonical_override> ovs;
    std::string syntax;       // expected detected syntax
    std::vector<std::string> expect;  // substrings of the rendered text
};

std::string slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string join(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

// A scratch copy of the config's directory (files it references stay resolvable).
fs::path scratch_copy(const fs::path& file, const std::string& tag) {
    const fs::path d = fs::temp_directory_path() / ("oomdx_rt_" + std::to_string(::getpid()) + "_" + tag);
    fs::create_directories(d);
    for (const auto& e : fs::directory_iterator(file.parent_path()))
        if (e.is_regular_file()) fs::copy_file(e.path(), d / e.path().filename(), fs::copy_options::overwrite_existing);
    return d / file.filename();
}

preflight_request request(const rt_case& c, const std::string& config) {
    preflight_request r;
    r.config = config;
    r.framework = c.framework;
    r.model = c.model;
    r.device = c.device;
    r.world_size = c.world;
    return r;
}

void round_trip(const rt_case& c, const std::string& tag) {
    CAPTURE(c.config);
    fact_store f0;
    override_syntax syn;
    gather_facts(request(c, c.config), f0, &syn);
    CHECK(syn.syntax == c.syntax);
    REQUIRE(can_express(syn, c.ovs).ok);
    const std::vector<std::string> lines = render_overrides(syn, c.ovs);
    const std::string text = join(lines);
    CAPTURE(text);
    for (const auto& e : c.expect) CHECK(text.find(e) != std::string::npos);
    CHECK(text.find("has no setting") == std::string::npos);

    // The canonical way: --set each override (with what the framework also reads back).
    preflight_request canon = request(c, c.config);
    for (const auto& o : canonical_closure(syn, c.ovs)) canon.sets.push_back(o.key + "=" + value_key(o.val));
    const preflight_result want = run_preflight(canon);
    const preflight_result before = run_preflight(request(c, c.config));

    // The job's way: the rendered lines applied to the config, read again.
    const std::string spec = c.config;
    const auto colon = spec.rfind(':');
    const std::string path = syn.syntax == "registry" ? spec.substr(0, colon) : spec;
    const fs::path copy = scratch_copy(path, tag);
    const std::string patched = apply_rendered(syn, slurp(path), lines);
    CAPTURE(patched);
    std::ofstream(copy) << patched;
    const std::string patched_spec = syn.syntax == "registry" ? copy.string() + spec.substr(colon) : copy.string();
    const preflight_result got = run_preflight(request(c, patched_spec));
    CHECK(got.framework == want.framework);
    for (const auto& o : c.ovs) {
        CAPTURE(o.key);
        const fact* f = got.facts.get(o.key);
        REQUIRE(f != nullptr);
        CHECK(value_key(f->val) == value_key(o.val));
    }
    CHECK(got.estimate.device_peak_bytes == want.estimate.device_peak_bytes);
    CHECK(got.estimate.peak_bytes == want.estimate.peak_bytes);
    CHECK(want.estimate.device_peak_bytes != before.estimate.device_peak_bytes);  // the overrides did something
    fs::remove_all(copy.parent_path());
}

}  // namespace

TEST_CASE("round trip: torchtitan-npu TOML (selective AC is mode + op, sharding, swap)") {
    round_trip({repo + "/examples/optimizer_bound_npu/job.toml", "torchtitan_npu", "qwen2.5-7b", "910b3", 8,
                {{"activation_checkpoint.mode", "selective"}, {"activation_checkpoint.selective_ac_option", "op"},
                 {"parallelism.data_parallel_shard_degree", 8}, {"parallelism.data_parallel_replicate_degree", 1},
                 {"optimizer.swap_optimizer", true}, {"optimizer.swap_optimizer_times", 16}},
                "toml",
                {"mode = \"selective\"", "selective_ac_option = \"op\"", "data_parallel_shard_degree = 8",
                 "swap_optimizer = true"}},
               "toml");
}

TEST_CASE("round trip: torchtitan-npu CLI flags") {
    round_trip({fixtures + "torchtitan_npu/launch_flags.sh", "", "qwen3-8b", "910b3", 16,
                {{"optimizer.swap_optimizer", true}, {"optimizer.swap_optimizer_times", 16},
                 {"training.local_batch_size", 2}, {"activation_checkpoint.mode", "selective"},
                 {"activation_checkpoint.selective_ac_option", "op"}},
                "cli",
                {"--optimizer.swap_optimizer\n", "--optimizer.swap_optimizer_times=16", "--training.local_batch_size=2",
                 "--activation_checkpoint.mode=selective", "--activation_checkpoint.selective_ac_option=op"}},
               "npu_cli");
}

TEST_CASE("round trip: torchtitan launch script with flags over an existing value") {
    round_trip({fixtures + "torchtitan/launch_overrides.sh", "", "llama3-8b", "h100-80gb", 8,
                {{"parallelism.tensor_parallel_degree", 4}, {"training.local_batch_size", 8}, {"compile.enable", true}},
                "cli",
                {"--parallelism.tensor_parallel_degree=4", "--compile.enable"}},
               "tt_cli");
}

TEST_CASE("round trip: torchtitan-npu config registry fields (returned call)") {
    round_trip({fixtures + "torchtitan_npu/config_registry.py:deepseek_v3_16b", "", "deepseek-v2-lite-16b", "910b3", 16,
                {{"optimizer.swap_optimizer_times", 16}, {"training.local_batch_size", 2},
                 {"activation_checkpoint.mode", "selective"}},
                "registry",
                {"optimizer=OptimizerConfig(swap_optimizer_times=16)", "training=TrainingConfig(local_batch_size=2)",
                 "activation_checkpoint=SelectiveAC.Config()"}},
               "npu_registry");
}

TEST_CASE("round trip: torchtitan config registry, new section and a changed field") {
    round_trip({fixtures + "torchtitan/config_registry.py:llama3_8b", "", "llama3-8b", "h100-80gb", 8,
                {{"parallelism.tensor_parallel_degree", 2}, {"activation_checkpoint.mode", "full"},
                 {"compile.enable", true}},
                "registry",
                {"parallelism=ParallelismConfig(tensor_parallel_degree=2)", "activation_checkpoint=FullAC.Config()",
                 "compile=CompileConfig(enable=True)"}},
               "tt_registry");
}

TEST_CASE("round trip: torchtitan config registry that returns `config`") {
    round_trip({fixtures + "torchtitan/config_registry.py:llama3_70b", "", "llama3-70b", "h100-80gb", 64,
                {{"training.local_batch_size", 1}, {"activation_checkpoint.mode", "selective"},
                 {"parallelism.context_parallel_degree", 2}},
                "registry",
                {"config.training.local_batch_size = 1", "config.activation_checkpoint = SelectiveAC.Config()",
                 "config.parallelism.context_parallel_degree = 2"}},
               "tt_registry_var");
}

TEST_CASE("round trip: Megatron launch arguments edited in place") {
    round_trip({fixtures + "megatron/pretrain_llama3_8b.sh", "", "llama3-8b", "h100-80gb", 16,
                {{"parallelism.tensor_parallel_degree", 4}, {"activation_checkpoint.mode", "selective"},
                 {"parallelism.pipeline_parallel_degree", 1}},
                "cli",
                {"--tensor-model-parallel-size 4", "--recompute-granularity selective"}},
               "megatron");
}

TEST_CASE("round trip: MindSpeed swap optimizer") {
    round_trip({fixtures + "mindspeed/pretrain_qwen25_72b_32k.sh", "", "qwen2.5-72b", "910b3", 0,
                {{"optimizer.swap_optimizer", true}, {"activation_checkpoint.mode", "full"}},
                "cli",
                {"--swap-optimizer", "--recompute-granularity full"}},
               "mindspeed");
}

TEST_CASE("round trip: DeepSpeed JSON merge patch") {
    round_trip({fixtures + "deepspeed/ds_z2_fp16.json", "", "llama3-8b", "a100-80gb", 8,
                {{"parallelism.zero_stage", 3}, {"optimizer.offload", "cpu"}},
                "json",
                {"\"stage\": 3", "\"device\": \"cpu\""}},
               "deepspeed");
}

TEST_CASE("round trip: HF TrainingArguments YAML") {
    round_trip({fixtures + "hf_trainer/training_args.yaml", "", "llama3-8b", "h100-80gb", 8,
                {{"training.local_batch_size", 2}, {"training.gradient_accumulation_steps", 8},
                 {"parallelism.zero_stage", 2}},
                "yaml",
                {"per_device_train_batch_size: 2", "fsdp: shard_grad_op auto_wrap"}},
               "hf_yaml");
}

TEST_CASE("round trip: HF --key value flags") {
    round_trip({fixtures + "hf_trainer/run_clm.sh", "", "qwen2.5-7b", "h100-80gb", 8,
                {{"training.local_batch_size", 1}, {"parallelism.zero_stage", 2}},
                "cli",
                {"--per_device_train_batch_size 1", "--fsdp 'shard_grad_op auto_wrap'"}},
               "hf_cli");
}

TEST_CASE("round trip: LLaMA-Factory YAML and key=value operands") {
    round_trip({fixtures + "llama_factory/llama3_lora_sft.yaml", "", "llama3-8b", "h100-80gb", 8,
                {{"activation_checkpoint.mode", "full"}, {"training.local_batch_size", 2}},
                "yaml",
                {"disable_gradient_checkpointing: false", "per_device_train_batch_size: 2"}},
               "lf_yaml");
    round_trip({fixtures + "llama_factory/train_cli.sh", "", "qwen3-8b", "h100-80gb", 8,
                {{"training.local_batch_size", 1}, {"training.seq_len", 4096}},
                "dotlist",
                {"per_device_train_batch_size=1", "cutoff_len=4096"}},
               "lf_cli");
}
