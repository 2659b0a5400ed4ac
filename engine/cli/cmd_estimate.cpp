// `oomdx estimate`: the static per-device breakdown, with or without a job config.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/estimator/preflight.h"

namespace oomdx::cli {

namespace {

struct estimate_opts {
    preflight_request req;
    output_format fmt = output_format::text;
};

void add_request_options(CLI::App* cmd, preflight_request& req, bool config_required) {
    auto* c = cmd->add_option("-c,--config", req.config, "Job config (torchtitan TOML, Megatron script, DeepSpeed JSON, ...)");
    if (config_required) c->required();
    cmd->add_option("--framework", req.framework, "Framework of the config (default: detected; torchtitan without config)");
    cmd->add_option("-m,--model", req.model, "Model preset id, HF config.json, torchtitan flavor or Megatron script");
    cmd->add_option("-d,--device", req.device, "Device id from the catalog (h100-80gb, ascend-910b3, ...) or a size (80GiB)");
    cmd->add_option("-w,--world-size", req.world_size, "Number of devices in the job")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("-s,--set", req.sets, "Canonical key=value (torchtitan names), repeatable: --set training.seq_len=8192")
        ->take_all();
}

}  // namespace

void add_estimate_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<estimate_opts>();
    auto* cmd = app.add_subcommand("estimate", "Static per-device memory breakdown of a training configuration");
    add_request_options(cmd, opts->req, false);
    add_format_option(cmd, opts->fmt);
    cmd->footer(
        "Example: oomdx estimate --model llama3-8b --device h100-80gb --world-size 8 \\\n"
        "           --set training.local_batch_size=2 --set training.seq_len=8192 --set activation_checkpoint.mode=full");
    cmd->callback([opts, &exit_code] {
        const preflight_result r = run_preflight(opts->req);
        if (opts->fmt == output_format::json) {
            fmt::print("{}\n", to_json(r.estimate).dump(2));
        } else if (opts->fmt == output_format::markdown) {
            fmt::print("## Static estimate\n\n| component | bytes | formula |\n|---|---:|---|\n");
            for (const auto& c : r.estimate.components)
                fmt::print("| {} | {} | {} |\n", c.label, c.bytes, c.formula);
            fmt::print("| **peak (allocated)** | {} | |\n| reserved | {} | |\n| device | {} | |\n\n", r.estimate.peak_bytes,
                       r.estimate.reserved_peak_bytes, r.estimate.device_peak_bytes);
            for (const auto& a : r.estimate.assumptions) fmt::print("- assumed: {}\n", a);
        } else {
            fmt::print("{}", render_text(r.estimate));
        }
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
