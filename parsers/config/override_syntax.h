// How overrides are written for one job: its framework adapter plus the syntax the job itself
// used, detected from the input (a torchtitan TOML file, `--section.field=value` flags on a
// launch line, the fields of a config-registry function, Megatron/MindSpeed launcher
// arguments, a DeepSpeed JSON merge patch, HF / LLaMA-Factory YAML, `--key value` flags or
// `key=value` operands). Renders canonical overrides in that syntax, says which ones the
// framework cannot express, and names the allocator variable for the device and PyTorch.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "parsers/config/framework_adapter.h"

namespace oomdx {

class fact_store;
struct job_config;

struct override_syntax {
    std::string framework = "torchtitan";   // adapter name
    std::string syntax;                     // toml | cli | registry | json | yaml | dotlist ("" = the adapter's)
    std::string file;                       // config the rendered lines apply to ("" = none)
    // registry: the function, what it returns and the callee of each section it builds
    std::string function;
    std::string return_var;                 // "config" for `return config`; "" when it returns a call
    std::map<std::string, std::string> classes;  // "optimizer" -> "OptimizerConfig", "activation_checkpoint" -> "FullAC.Config"
    std::string deepspeed_file;             // HF / LLaMA-Factory job whose ZeRO settings live in this JSON
    // the adapter that writes those settings: the DeepSpeed JSON, or accelerate's config file (its
    // deepspeed_config section) for a job that runs DeepSpeed through accelerate (rev25)
    std::string deepspeed_adapter = "deepspeed";
    std::vector<std::string> spelled;       // the keys the job's config wrote: aliases render in its spelling
    // allocator variable
    std::string device_kind;                // cuda | npu | "" (unknown: CUDA spelling)
    std::string torch_version;              // "2.9.1"; "" = unknown
    // the facts the adapter's conditional renders read (kohya: model.diffusion_family), set by set_runtime
    render_context context;
};

// The adapter's own syntax, no file.
override_syntax override_syntax_for(const std::string& framework);
// Detected from a parsed config (reads a registry file again to see what its function returns).
override_syntax detect_override_syntax(const job_config& job);
// Device kind (device.kind / job.device_kind / an NPU framework) and PyTorch version
// (job.torch_version when some producer emits it) from the facts, and the facts the adapter's
// conditional renders read.
void set_runtime(override_syntax& s, const fact_store& facts);

// Paste-able lines in the job's syntax. Allocator settings (env.PYTORCH_CUDA_ALLOC_CONF,
// env.PYTORCH_NPU_ALLOC_CONF, env.PYTORCH_ALLOC_CONF) come out under the variable this device
// and PyTorch read; what the framework cannot express is a `# <framework> has no setting ...` line.
std::vector<std::string> render_overrides(const override_syntax& s, const std::vector<canonical_override>& ovs);

// The job's own name for one canonical key ("per_device_train_batch_size", "tokenizer.max_seq_len"): the single
// framework key the value renders to, "" where it renders to none or to several, or only to a DeepSpeed file.
std::string job_key_name(const override_syntax& s, const std::string& canonical_key, const value& v);
// The same key with the value as the job writes it (activation_checkpoint.mode=full -> disable_gradient_checkpointing
// = false in LLaMA-Factory), or none.
std::optional<render_item> job_setting(const override_syntax& s, const std::string& canonical_key, const value& v);
struct expressibility {
    bool ok = true;
    std::string why;                        // "hf_trainer has no setting for activation_checkpoint.mode = selective"
};
expressibility can_express(const override_syntax& s, const std::string& key, const value& v);
expressibility can_express(const override_syntax& s, const std::vector<canonical_override>& ovs);

// The overrides plus the canonical values the framework also reads from the keys they render
// to (torchtitan's training.enable_cpu_offload sets both optimizer and parameter offload):
// what the job runs with once the rendered lines are applied.
std::vector<canonical_override> canonical_closure(const override_syntax& s, const std::vector<canonical_override>& ovs);

// PYTORCH_NPU_ALLOC_CONF on NPU; on CUDA PYTORCH_ALLOC_CONF from PyTorch 2.11 (the 2.9/2.10
// spelling is ignored for expandable_segments), PYTORCH_CUDA_ALLOC_CONF before and when unknown.
std::string allocator_env_var(const std::string& device_kind, const std::string& torch_version);
bool is_allocator_env_key(const std::string& canonical_key);

}  // namespace oomdx
