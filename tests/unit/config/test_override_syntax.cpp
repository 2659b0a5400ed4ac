// Override syntax: detected from the input, rendered as the job writes it, what a framework
// cannot express, the allocator variable per device and PyTorch version.
#include <doctest/doctest.h>

#include "engine/core/fact_store.h"
#include "parsers/config/job_config.h"
#include "parsers/config/override_syntax.h"

using namespace oomdx;

namespace {

const std::string fixtures = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";
const std::string repo = std::string(OOMDX_TEST_DIR) + "/..";

std::string join(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

override_syntax of(const std::string& path, const std::string& fw = "") {
    return detect_override_syntax(parse_job_config(path, fw));
}

}  // namespace

TEST_CASE("the syntax is the one the job used") {
    CHECK(of(repo + "/examples/optimizer_bound_npu/job.toml").syntax == "toml");
    CHECK(of(fixtures + "torchtitan_npu/launch_flags.sh").syntax == "cli");
    CHECK(of(fixtures + "torchtitan_npu/launch_flags.sh").framework == "torchtitan_npu");
    const override_syntax reg = of(fixtures + "torchtitan_npu/config_registry.py:deepseek_v3_16b");
    CHECK(reg.syntax == "registry");
    CHECK(reg.function == "deepseek_v3_16b");
    CHECK(reg.return_var.empty());
    CHECK(reg.classes.at("optimizer") == "OptimizerConfig");
    CHECK(of(fixtures + "torchtitan/config_registry.py:llama3_70b").return_var == "config");
    CHECK(of(fixtures + "megatron/pretrain_llama3_8b.sh").syntax == "cli");
    CHECK(of(fixtures + "deepspeed/ds_z2_fp16.json").syntax == "json");
    CHECK(of(fixtures + "hf_trainer/training_args.yaml").syntax == "yaml");
    CHECK(of(fixtures + "llama_factory/train_cli.sh").syntax == "dotlist");
}

TEST_CASE("torchtitan: selective AC is mode selective + op, in every syntax") {
    const std::vector<canonical_override> sac{{"activation_checkpoint.mode", "selective"},
                                              {"activation_checkpoint.selective_ac_option", "op"}};
    const std::string toml = join(render_overrides(override_syntax_for("torchtitan"), sac));
    CHECK(toml == "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n");
    CHECK(toml.find("memory_budget") == std::string::npos);
    override_syntax cli = override_syntax_for("torchtitan_npu");
    cli.syntax = "cli";
    CHECK(join(render_overrides(cli, sac)) ==
          "--activation_checkpoint.mode=selective\n--activation_checkpoint.selective_ac_option=op\n");
}

TEST_CASE("torchtitan-npu CLI flags for swap_optimizer, as the method writes them") {
    override_syntax s = of(fixtures + "torchtitan_npu/launch_flags.sh");
    CHECK(join(render_overrides(s, {{"optimizer.swap_optimizer", true}, {"optimizer.swap_optimizer_times", 16}})) ==
          "--optimizer.swap_optimizer\n--optimizer.swap_optimizer_times=16\n");
    CHECK(join(render_overrides(s, {{"optimizer.swap_optimizer", false}})) == "--optimizer.no_swap_optimizer\n");
}

TEST_CASE("the config registry gets the function's own dataclass fields") {
    const override_syntax s = of(fixtures + "torchtitan_npu/config_registry.py:deepseek_v3_16b");
    const std::string text = join(render_overrides(s, {{"optimizer.swap_optimizer", true},
                                                       {"optimizer.swap_optimizer_times", 16},
                                                       {"parallelism.tensor_parallel_degree", 2}}));
    CHECK(text.find("optimizer=OptimizerConfig(swap_optimizer=True, swap_optimizer_times=16)") != std::string::npos);
    CHECK(text.find("parallelism=ParallelismConfig(tensor_parallel_degree=2)") != std::string::npos);
    CHECK(text.find("TOML") == std::string::npos);
    CHECK(text.find("[optimizer]") == std::string::npos);
}

TEST_CASE("what a framework cannot express is said, and can be asked") {
    const override_syntax hf = override_syntax_for("hf_trainer");
    const expressibility sel = can_express(hf, "activation_checkpoint.mode", value("selective"));
    CHECK_FALSE(sel.ok);
    CHECK(sel.why.find("hf_trainer has no setting for activation_checkpoint.mode = selective") != std::string::npos);
    CHECK(can_express(hf, "activation_checkpoint.mode", value("full")).ok);
    CHECK(can_express(hf, "parallelism.zero_stage", value(3)).ok);
    CHECK_FALSE(can_express(hf, "parallelism.zero_stage", value(1)).ok);  // FSDP has no ZeRO-1
    CHECK_FALSE(can_express(hf, "optimizer.swap_optimizer", value(true)).ok);
    const override_syntax tt = override_syntax_for("torchtitan");
    CHECK(can_express(tt, "parallelism.zero_stage", value(3)).ok);        // dp_shard = -1, dp_replicate = 1
    CHECK_FALSE(can_express(tt, "parallelism.zero_stage", value(1)).ok);
    CHECK_FALSE(can_express(tt, "optimizer.swap_optimizer", value(true)).ok);
    CHECK(can_express(override_syntax_for("torchtitan_npu"), "optimizer.swap_optimizer", value(true)).ok);
    CHECK(can_express(override_syntax_for("megatron"), "optimizer.distributed", value(true)).ok);
    CHECK(can_express(override_syntax_for("deepspeed"), "parallelism.zero_stage", value(2)).ok);
    CHECK(join(render_overrides(tt, {{"parallelism.zero_stage", 3}})) ==
          "[parallelism]\ndata_parallel_shard_degree = -1\ndata_parallel_replicate_degree = 1\n");
}

TEST_CASE("expressible: Megatron's selective recomputation is per submodule, so per-op selective AC needs no extra flag") {
    // step4_enable_selective_ac sets mode = selective and selective_ac_option = op; Megatron (and MindSpeed, which
    // extends it, and ms-swift's Megatron syntax) recompute core attention under --recompute-granularity selective.
    const std::vector<canonical_override> sel{{"activation_checkpoint.mode", "selective"},
                                              {"activation_checkpoint.selective_ac_option", "op"}};
    for (const char* fw : {"megatron", "mindspeed", "ms_swift_megatron"}) {
        CAPTURE(fw);
        CHECK(can_express(override_syntax_for(fw), sel).ok);
        // every N layers is torchtitan's other option: Megatron's selective granularity has no such setting
        CHECK_FALSE(can_express(override_syntax_for(fw), "activation_checkpoint.selective_ac_option", value("2")).ok);
    }
    const std::string mg = join(render_overrides(override_syntax_for("megatron"), sel));
    CHECK(mg.find("--recompute-granularity") != std::string::npos);
    CHECK(mg.find("selective") != std::string::npos);
    CHECK(mg.find("selective_ac_option") == std::string::npos);
    CHECK_FALSE(can_express(override_syntax_for("deepspeed"), sel).ok);  // no selective setting there
}

TEST_CASE("closure: torchtitan's CPU offload moves parameters and optimizer together") {
    const auto c = canonical_closure(override_syntax_for("torchtitan"), {{"optimizer.offload", "cpu"}});
    bool params = false;
    for (const auto& o : c)
        if (o.key == "parallelism.offload_params") params = value_key(o.val) == "cpu";
    CHECK(params);
}

// rev32: torchtune's 8-bit AdamW rendered bitsandbytes' PagedAdamW8bit, which reads back as a paged optimizer (its
// states off the device figure): the "2 bytes per parameter" recommendation was estimated as an offload.
TEST_CASE("closure: torchtune's 8-bit AdamW reads back as the non-paged optimizer it claims to be") {
    std::string name;
    for (const auto& o : canonical_closure(override_syntax_for("torchtune"), {{"optimizer.name", "adamw8bit"}}))
        if (o.key == "optimizer.name") name = value_key(o.val);
    CHECK(name.find("8bit") != std::string::npos);
    CHECK(name.find("aged") == std::string::npos);
}

TEST_CASE("allocator variable per device and PyTorch version") {
    CHECK(allocator_env_var("npu", "") == "PYTORCH_NPU_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "") == "PYTORCH_CUDA_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "2.4.1") == "PYTORCH_CUDA_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "2.9.1+cu128") == "PYTORCH_CUDA_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "2.11.0") == "PYTORCH_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "2.10.2") == "PYTORCH_CUDA_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "3") == "PYTORCH_ALLOC_CONF");
    CHECK(allocator_env_var("cuda", "nightly") == "PYTORCH_CUDA_ALLOC_CONF");
    override_syntax s = override_syntax_for("torchtitan_npu");
    s.device_kind = "npu";
    CHECK(join(render_overrides(s, {{"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}})) ==
          "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\n");
    s = override_syntax_for("megatron");
    s.device_kind = "cuda";
    s.torch_version = "2.11.0";
    CHECK(join(render_overrides(s, {{"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}})) ==
          "export PYTORCH_ALLOC_CONF=expandable_segments:True\n");
    fact_store f;
    provenance p;
    f.emit("device.kind", value("npu"), p);
    override_syntax r = override_syntax_for("torchtitan");
    set_runtime(r, f);
    CHECK(r.device_kind == "npu");
}

TEST_CASE("rev31: the ZeRO-3 patch's overlap_comm, read back into the plan, is written in the trainer's DeepSpeed JSON") {
    // An HF Trainer (or LLaMA-Factory) job with a DeepSpeed JSON beside it: the plan's ZeRO-3 patch sets
    // zero_optimization.overlap_comm, which the closure reads back as parallelism.overlap_comm. It belongs to the
    // JSON: no "# hf_trainer has no setting for parallelism.overlap_comm" beside the very patch that sets it, and
    // the offload that needs it is expressible.
    override_syntax s = override_syntax_for("hf_trainer");
    s.syntax = "yaml";
    s.deepspeed_file = "ds_z2.json";
    const std::vector<canonical_override> plan =
        canonical_closure(s, {{"parallelism.zero_stage", std::int64_t(3)}, {"optimizer.offload", "cpu"}});
    bool read_back = false;
    for (const auto& o : plan) read_back |= o.key == "parallelism.overlap_comm";
    CHECK(read_back);
    const std::string text = join(render_overrides(s, plan));
    CAPTURE(text);
    CHECK(text.find("has no setting") == std::string::npos);
    CHECK(text.find("\"overlap_comm\": true") != std::string::npos);
    CHECK(text.find("\"offload_optimizer\"") != std::string::npos);
    CHECK(can_express(s, plan).ok);
    // the key alone still needs a DeepSpeed JSON to go to (look-alike: a trainer without one)
    override_syntax plain = override_syntax_for("hf_trainer");
    plain.syntax = "yaml";
    CHECK_FALSE(can_express(plain, "parallelism.overlap_comm", value(true)).ok);
}
