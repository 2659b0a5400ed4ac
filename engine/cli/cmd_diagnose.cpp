// `oomdx diagnose`: a crashed job's log, config, model, device and snapshots -> a full report.
#include <fmt/format.h>

#include "engine/cli/commands.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/report/diagnosis.h"
#include "engine/report/render_diagnosis.h"

#if __has_include("engine/report/render_html.h")
#include "engine/report/render_html.h"
#define OOMDX_HAVE_HTML 1
#endif

namespace oomdx::cli {

namespace {

struct diagnose_options {
    diagnosis_request req;
    output_format format = output_format::text;
    std::vector<std::string> outputs;
    bool explain = false;
};

}  // namespace

namespace {

std::string render_diagnosis_as(const diagnosis_report& rep, output_format format, bool explain,
                                const std::string& lang, bool color) {
    if (format == output_format::json) return diagnosis_json(rep, explain).dump(2) + "\n";
#ifdef OOMDX_HAVE_HTML
    if (format == output_format::html) return render_diagnosis_html(rep);
#endif
    render_options ro;
    ro.markdown = format == output_format::markdown;
    ro.color = color;
    ro.explain = explain;
    ro.lang = lang;
    return render_diagnosis_text(rep, ro);
}

}  // namespace

void print_diagnosis(const diagnosis_report& rep, output_format format, bool explain, const std::string& lang) {
    fmt::print("{}", render_diagnosis_as(rep, format, explain, lang, format == output_format::text && use_color()));
}

void write_diagnosis_outputs(const diagnosis_report& rep, const std::vector<std::string>& specs, bool explain,
                             const std::string& lang) {
    for (const std::string& spec : specs) {
        const auto [format, path] = parse_output_spec(spec);
        try {
            write_file_atomic(path, render_diagnosis_as(rep, format, explain, lang, false));
        } catch (const std::exception& e) {
            throw input_error(fmt::format("{} (--output {})", e.what(), spec));
        }
    }
}

void add_diagnose_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<diagnose_options>();
    auto* cmd = app.add_subcommand("diagnose", "Diagnose an OOM from the log, config, model, device and snapshots");
    cmd->add_option("--log,-l", o->req.logs, "Training log(s); plain or .gz")->check(CLI::ExistingPath);
    cmd->add_option("--config,-c", o->req.config, "Training config (TOML, YAML, JSON, launch script, config_registry.py:NAME)");
    cmd->add_option("--framework", o->req.framework,
                    "Framework adapter: torchtitan, torchtitan_npu, megatron, mindspeed, deepspeed, hf_trainer, llama_factory, axolotl, or any in knowledge/frameworks");
    cmd->add_option("--set", o->req.sets, "Canonical key=value (e.g. training.local_batch_size=8); repeatable");
    cmd->add_option("--model,-m", o->req.model, "Model preset (llama3-70b, ...) or HF config.json");
    cmd->add_option("--device,-d", o->req.device, "Device (h100-80gb, 910b3, a100-40gb, ...)");
    cmd->add_option("--world-size,-w", o->req.world_size, "Number of ranks");
    cmd->add_option("--snapshot,-s", o->req.snapshots, "Memory snapshot(s) or a directory of per-rank snapshots");
    cmd->add_option("--rules", o->req.rule_dirs, "Extra rule packs to load beside the shipped ones");
    cmd->add_option("--baseline-config", o->req.baseline_config, "A config of the same job that ran fine: say what moved the peak")
        ->check(CLI::ExistingFile);
    cmd->add_option("--lang", o->req.lang, "Report language: en or zh")->check(CLI::IsMember({"en", "zh"}));
    cmd->add_flag("--explain", o->explain, "Add the rule trace: how each finding was reached, why steps ran, why rules did not fire");
    add_format_option(cmd, o->format, true);
    add_output_option(cmd, o->outputs);
    cmd->callback([o, &exit_code] {
        if (o->req.logs.empty() && o->req.config.empty() && o->req.snapshots.empty() && o->req.model.empty() &&
            o->req.sets.empty())
            throw usage_error("nothing to diagnose: give at least --log, --config, --model, --set or --snapshot");
        stderr_progress bar;
        if (bar.active())
            o->req.log_progress = [&bar](const std::string& file, std::int64_t done, std::int64_t total) {
                bar.update(total > 0 ? fmt::format("oomdx: reading {} {:.0f}%", file, 100.0 * done / total)
                                     : fmt::format("oomdx: reading {}", file));
            };
        const diagnosis_report rep = run_diagnosis(o->req);
        o->req.log_progress = nullptr;
        write_diagnosis_outputs(rep, o->outputs, o->explain, o->req.lang);
        print_diagnosis(rep, o->format, o->explain, o->req.lang);
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
