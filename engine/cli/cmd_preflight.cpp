// `oomdx preflight`: does the job fit (capacity x 0.95)? Exit 1 when it does not. --plan gives
// the cheapest combination of overrides that fits (or the smallest world size at which one
// does), in the job's own syntax, with the ranked candidates. The work is run_preflight()
// (engine/estimator/preflight.h) and make_plan() (engine/estimator/plan.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/estimator/preflight.h"
#include "engine/report/diagnosis.h"
#include "engine/report/render_html.h"

namespace oomdx::cli {

namespace {

struct preflight_opts {
    preflight_request req;
    std::vector<std::string> logs;
    output_format fmt = output_format::text;
    std::vector<std::string> outputs;
    std::size_t top = 10;
    bool explain = false;
    std::string lang = "en";
};

}  // namespace

void add_preflight_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<preflight_opts>();
    auto* cmd = app.add_subcommand("preflight", "Will this training config fit? (exit 1 when it does not)");
    preflight_request& req = opts->req;
    cmd->add_option("-c,--config", req.config, "Job config (torchtitan TOML, Megatron script, DeepSpeed JSON, ...)");
    cmd->add_option("--framework", req.framework, "Framework of the config (default: detected)");
    cmd->add_option("-m,--model", req.model, "Model preset id, HF config.json, torchtitan flavor or Megatron script");
    cmd->add_option("-d,--device", req.device, "Device id from the catalog or a size (80GiB)")->required();
    cmd->add_option("-w,--world-size", req.world_size, "Number of devices in the job")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("-s,--set", req.sets, "Canonical key=value applied on top of the config, repeatable")->take_all();
    cmd->add_flag("--plan", req.plan, "The cheapest overrides that fit (AC, sharding/swap, TP/PP/CP/EP, micro-batch), or the device count that does");
    cmd->add_flag("--explain", opts->explain, "Add the rule trace (how, why, why not)");
    cmd->add_option("--lang", opts->lang, "Report language: en or zh")->check(CLI::IsMember({"en", "zh"}));
    cmd->add_option("-l,--log", opts->logs, "Log of an earlier run of the same job: its memory readings calibrate the estimate")
        ->check(CLI::ExistingPath);
    cmd->add_option("--top", opts->top, "Plans to list (default 10)")->check(CLI::Range(1, 1000));
    add_format_option(cmd, opts->fmt, true);
    add_output_option(cmd, opts->outputs);
    cmd->callback([opts, &exit_code] {
        // One pipeline with diagnose (engine/report/pipeline.h): Steps 1 and 4, and the plan.
        const preflight_request& q = opts->req;
        diagnosis_request dr;
        dr.preflight = true;
        dr.config = q.config;
        dr.framework = q.framework;
        dr.model = q.model;
        dr.device = q.device;
        dr.world_size = q.world_size;
        dr.sets = q.sets;
        dr.logs = opts->logs;
        dr.plan = q.plan;
        dr.lang = opts->lang;
        dr.plan_opts = q.plan_opts;
        dr.plan_opts.search.top = opts->top;
        stderr_progress bar;
        if (bar.active())
            dr.plan_opts.search.progress = [&bar](std::int64_t n) {
                bar.update(fmt::format("oomdx: plan search, {} candidates evaluated", n));
            };
        const diagnosis_report rep = run_diagnosis(dr);
        dr.plan_opts.search.progress = nullptr;
        write_diagnosis_outputs(rep, opts->outputs, opts->explain, opts->lang);
        print_diagnosis(rep, opts->fmt, opts->explain, opts->lang);
        exit_code = rep.exit_code;
    });
}

}  // namespace oomdx::cli
