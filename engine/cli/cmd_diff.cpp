// `oomdx diff A [B]`: what moved the peak between two configurations (B defaults to A, with --set
// applied on top). The work is diff_configs() (engine/estimator/config_diff.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary.h"
#include "engine/estimator/preflight.h"
#include "engine/report/render_diff.h"
#include "engine/report/render_html.h"

namespace oomdx::cli {

namespace {

struct diff_opts {
    std::string a, b;
    preflight_request common;  // model, device, world size, framework for both sides
    std::vector<std::string> sets_a, sets_b;
    output_format fmt = output_format::text;
};

fact_store side(const diff_opts& o, const std::string& config, const std::vector<std::string>& sets) {
    preflight_request r = o.common;
    r.config = config;
    r.sets = sets;
    fact_store facts(&vocabulary::shipped());
    gather_facts(r, facts);
    return facts;
}

}  // namespace

void add_diff_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<diff_opts>();
    auto* cmd = app.add_subcommand("diff", "What moved the peak: two configs through the estimator, key by key");
    cmd->add_option("a", o->a, "Config A (the one that ran, or the baseline)")->required();
    cmd->add_option("b", o->b, "Config B (default: A with the --set overrides)");
    cmd->add_option("--framework", o->common.framework, "Framework of both configs (default: detected)");
    cmd->add_option("-m,--model", o->common.model, "Model preset id or config.json, for both sides");
    cmd->add_option("-d,--device", o->common.device, "Device id from the catalog, for both sides");
    cmd->add_option("-w,--world-size", o->common.world_size, "Number of devices, for both sides")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("-s,--set", o->sets_b, "Canonical key=value applied to B, repeatable")->take_all();
    cmd->add_option("--set-a", o->sets_a, "Canonical key=value applied to A, repeatable")->take_all();
    add_format_option(cmd, o->fmt, true);
    cmd->footer("Example: oomdx diff ran.toml crashed.toml --model llama3-8b --device h100-80gb --world-size 8\n"
                "         oomdx diff job.toml --set training.local_batch_size=4 --model llama3-8b --device h100-80gb");
    cmd->callback([o, &exit_code] {
        if (o->b.empty() && o->sets_b.empty())
            throw usage_error("diff needs a second config B, or --set overrides that make B from A");
        const fact_store a = side(*o, o->a, o->sets_a);
        const fact_store b = side(*o, o->b.empty() ? o->a : o->b, o->sets_b);
        const config_diff d = diff_configs(a, b);
        if (o->fmt == output_format::json) fmt::print("{}\n", to_json(d).dump(2));
        else if (o->fmt == output_format::html) fmt::print("{}", render_diff_html(d));
        else fmt::print("{}", render_diff_text(d, o->fmt == output_format::markdown));
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
