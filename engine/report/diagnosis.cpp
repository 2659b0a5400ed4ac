#include "engine/report/diagnosis.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/rule_loader.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/job_inputs.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/snapshot/analysis_batch.h"

namespace oomdx {

namespace {

// Splits a launch command into words (quotes kept together, backslash-newlines joined).
std::vector<std::string> split_words(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    char quote = 0;
    bool any = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
            else cur += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            any = true;
        } else if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\n') {
            ++i;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (any || !cur.empty()) out.push_back(cur);
            cur.clear();
            any = false;
        } else {
            cur += c;
        }
    }
    if (any || !cur.empty()) out.push_back(cur);
    return out;
}

// The words after the training script: `torchrun ... train.py --a.b=1` -> ["--a.b=1"].
std::vector<std::string> launch_overrides(const std::string& line) {
    std::vector<std::string> words = split_words(line);
    size_t start = 0;
    for (size_t i = 0; i < words.size(); ++i)
        if (words[i].ends_with(".py") || words[i].ends_with(".sh") || words[i] == "-m") start = i + 1;
    if (start < words.size() && start > 0 && words[start - 1] == "-m") ++start;  // module name
    std::vector<std::string> out;
    for (size_t i = start; i < words.size(); ++i)
        if (words[i].rfind("--", 0) == 0 || (!out.empty() && words[i].rfind("-", 0) != 0)) out.push_back(words[i]);
    return out;
}

// World size from a launcher: torchrun --nproc_per_node N [--nnodes M], deepspeed --num_gpus N.
std::optional<std::int64_t> launch_world_size(const std::string& line) {
    const std::vector<std::string> w = split_words(line);
    std::int64_t per_node = 0, nodes = 1;
    auto number = [](const std::string& s) -> std::int64_t {
        char* end = nullptr;
        long long v = std::strtoll(s.c_str(), &end, 10);
        return (end && *end == 0 && v > 0 && v < 1000000) ? v : 0;
    };
    for (size_t i = 0; i < w.size(); ++i) {
        std::string key = w[i], val;
        const size_t eq = key.find('=');
        if (eq != std::string::npos) {
            val = key.substr(eq + 1);
            key = key.substr(0, eq);
        } else if (i + 1 < w.size()) {
            val = w[i + 1];
        }
        if (key == "--nproc_per_node" || key == "--nproc-per-node" || key == "--num_gpus" || key == "--num-gpus")
            per_node = number(val);
        else if (key == "--nnodes" || key == "--num_nodes" || key == "--num-nodes")
            nodes = std::max<std::int64_t>(1, number(val));
        if (w[i].ends_with(".py") || w[i] == "-m") break;  // the script's own flags start here
    }
    if (per_node <= 0) return std::nullopt;
    return per_node * nodes;
}

report_evidence evidence_of(const fact_store& facts, int id) {
    report_evidence e;
    const fact* f = facts.by_id(id);
    if (!f) return e;
    e.fact = f->name;
    const vocabulary* v = facts.vocab();
    const fact_decl* d = v ? v->find(f->name) : nullptr;
    e.value = f->val.is_string() ? f->val.as_string() : render_value(f->val, d);
    e.location = f->prov.location();
    e.excerpt = f->prov.excerpt.size() > 240 ? f->prov.excerpt.substr(0, 237) + "..." : f->prov.excerpt;
    return e;
}

int severity_rank(const std::string& s) {
    if (s == "critical") return 0;
    if (s == "high") return 1;
    if (s == "medium") return 2;
    if (s == "low") return 3;
    return 4;
}

std::string adapter_name(const std::string& framework) {
    if (framework.empty() || framework == "unknown") return "torchtitan";
    return framework;
}

}  // namespace

diagnosis_report run_diagnosis(const diagnosis_request& req) {
    const vocabulary& vocab = vocabulary::shipped();
    diagnosis_report rep(&vocab);
    rep.mode = req.preflight ? "preflight" : "diagnose";
    fact_store& facts = rep.facts;
    provenance me;
    me.producer = "oomdx";
    facts.emit("job.mode", value(rep.mode), me);

    // Step 0 input: the logs.
    if (!req.logs.empty()) {
        log_options lo;
        lo.progress = req.log_progress;
        rep.log = analyze_logs(req.logs, lo);
        emit_facts(*rep.log, facts);
        for (const auto& f : rep.log->files)
            rep.inputs.push_back(fmt::format("log {} ({} lines)", f.path, f.lines));
    }
    facts.emit("job.has_log", value(!req.logs.empty()), me);

    // Job inputs: config, launch line overrides, model, device, --set.
    job_inputs_options jo;
    jo.config = req.config;
    jo.framework = req.framework;
    jo.model = req.model;
    jo.device = req.device;
    jo.sets = req.sets;
    if (rep.log && !rep.log->launch_line.empty()) jo.launch_args = launch_overrides(rep.log->launch_line);
    job_inputs in = load_job_inputs(jo);
    emit_facts(in, facts);
    if (!req.config.empty()) rep.inputs.push_back(fmt::format("config {}", req.config));
    if (in.model) rep.inputs.push_back(fmt::format("model {}", in.model->name));
    if (in.device) rep.inputs.push_back(fmt::format("device {} ({})", in.device->name, format_bytes(in.device->capacity_bytes)));
    if (req.world_size > 0) {
        provenance p;
        p.producer = "user";
        p.excerpt = fmt::format("--world-size {}", req.world_size);
        facts.emit("job.world_size", value(req.world_size), p);
    } else if (!facts.has("job.world_size") && rep.log && rep.log->world_size) {
        const fact* ws = facts.get("log.world_size");
        facts.emit("job.world_size", value(*rep.log->world_size), ws ? ws->prov : me);
    } else if (!facts.has("job.world_size") && rep.log && !rep.log->launch_line.empty()) {
        if (auto ws = launch_world_size(rep.log->launch_line)) {
            provenance p;
            p.producer = "log";
            p.file = rep.log->launch_file;
            p.line = rep.log->launch_line_no;
            p.excerpt = rep.log->launch_line;
            facts.emit("job.world_size", value(*ws), p);
        }
    }
    if (!facts.has("job.framework") && rep.log && rep.log->framework != "unknown") {
        const fact* fw = facts.get("log.framework");
        std::string name = rep.log->framework;
        if (name == "hf_trainer" || name == "megatron" || name == "deepspeed" || name == "mindspeed" ||
            name == "torchtitan") {
            if (name == "torchtitan" && rep.log->device_kind == "npu") name = "torchtitan_npu";
            facts.emit("job.framework", value(name), fw ? fw->prov : me);
        }
    }
    if (!req.framework.empty() && !facts.has("job.framework")) {
        provenance p;
        p.producer = "user";
        p.excerpt = "--framework " + req.framework;
        facts.emit("job.framework", value(req.framework), p);
    }
    finish_job_inputs(in, facts);  // derived facts (torchtitan zero_stage) and input checks
    // Device capacity from the OOM message when no catalog device was named.
    if (!facts.has("device.capacity_bytes") && facts.has("oom.capacity_bytes")) {
        const fact* c = facts.get("oom.capacity_bytes");
        facts.emit("device.capacity_bytes", c->val, c->prov);
        provenance p = c->prov;
        facts.emit("device.capacity_source", value("oom_message"), p);
    }
    {
        std::string kind = "unknown";
        if (const fact* d = facts.get("device.kind")) kind = d->val.as_string();
        else if (const fact* o = facts.get("oom.device_kind"); o && o->val.is_string() &&
                 (o->val.as_string() == "cuda" || o->val.as_string() == "npu" || o->val.as_string() == "hip"))
            kind = o->val.as_string();
        else if (const fact* fw = facts.get("job.framework"); fw && (fw->val.as_string() == "torchtitan_npu" ||
                                                                     fw->val.as_string() == "mindspeed"))
            kind = "npu";
        facts.emit("job.device_kind", value(kind), me);
    }
    facts.emit("job.has_config", value(!req.config.empty() || !req.sets.empty()), me);
    facts.emit("job.has_model", value(facts.has("model.hidden_size")), me);

    // Snapshots: one, several (trend when three or more), or a per-rank directory.
    if (!req.snapshots.empty()) {
        const auto files = snap::expand_snapshot_inputs(req.snapshots);
        snap::analysis_options ao;
        if (const fact* c = facts.get("device.capacity_bytes")) ao.device_capacity_bytes = c->val.as_integer();
        rep.snapshots = snap::analyze_files(files, ao);
        const bool as_trend = rep.snapshots.size() >= 3 && rep.log.has_value();
        snap::emit_facts(rep.snapshots, facts, rep.snapshots.size() >= 3);
        if (rep.snapshots.size() >= 3) rep.trend = snap::trend(rep.snapshots);
        if (rep.snapshots.size() == 2) {
            rep.diff = snap::diff(rep.snapshots[0], rep.snapshots[1]);
            snap::emit_facts(*rep.diff, facts);
        }
        (void)as_trend;
        for (const auto& s : rep.snapshots) rep.inputs.push_back(fmt::format("snapshot {}", s.file));
    }
    facts.emit("job.has_snapshot", value(!req.snapshots.empty()), me);

    // Static estimate, when the model is known.
    if (facts.has("model.hidden_size") && facts.has("model.num_layers")) {
        rep.estimate = estimate(from_facts(facts));
        emit_facts(*rep.estimate, facts);
    }

    // Rules.
    const rule_set* rules = &shipped_rules();
    load_result extra;
    if (!req.rule_dirs.empty()) {
        std::vector<std::string> dirs = {data_path("rules")};
        dirs.insert(dirs.end(), req.rule_dirs.begin(), req.rule_dirs.end());
        extra = load_rules(dirs, vocab, shipped_actions());
        if (!extra.ok()) {
            std::string msg = "the rule packs do not load:";
            for (const auto& d : extra.diagnostics)
                if (!rule_error_is_warning(d.code)) msg += "\n" + d.render();
            throw input_error(msg);
        }
        rules = &extra.rules;
    }
    rep.inference = run_inference(*rules, facts);

    for (const auto& r : rep.inference.route) {
        report_step s;
        s.step = r.to;
        if (const step_def* sd = rules->step(r.to)) s.title = sd->title;
        s.why = r.why;
        s.from_rule = r.from_rule;
        rep.route.push_back(std::move(s));
    }
    for (const auto& f : rep.inference.findings) {
        report_finding rf;
        rf.id = f.id;
        rf.rule_id = f.rule_id;
        rf.step = f.step;
        rf.severity = f.severity;
        rf.text = f.text;
        rf.rationale = f.rationale;
        for (int id : f.evidence) {
            rf.evidence.push_back(evidence_of(facts, id));
            auto how = explain_fact(facts, id, 1);
            rf.how.insert(rf.how.end(), how.begin(), how.end());
        }
        rep.findings.push_back(std::move(rf));
    }
    // Headline: the most severe finding, earliest first.
    {
        const report_finding* best = nullptr;
        for (const auto& f : rep.findings)
            if (!best || severity_rank(f.severity) < severity_rank(best->severity)) best = &f;
        if (best) rep.headline = best->text;
        else if (rep.mode == "preflight" && rep.estimate)
            rep.headline = rep.estimate->fits ? "The configuration is expected to fit." : "The configuration is not expected to fit.";
        else
            rep.headline = "No out-of-memory error was found and no rule applied.";
    }

    // Recommendations: ranked, rendered in the job's own syntax, re-estimated.
    const std::string fw = facts.string("job.framework").value_or("torchtitan");
    rep.framework = fw;
    const framework_adapter& adapter = framework_adapter::get(adapter_name(fw));
    int rank = 0;
    for (const auto& r : rep.inference.ranked()) {
        report_recommendation rr;
        rr.rank = ++rank;
        rr.action = r.action;
        rr.rule_id = r.rule_id;
        rr.overrides = r.overrides;
        rr.text = r.text;
        rr.rationale = r.rationale;
        rr.framework = adapter.name();
        for (int id : r.evidence) rr.evidence.push_back(evidence_of(facts, id));
        std::vector<canonical_override> config_overrides, code_overrides;
        for (const auto& o : r.overrides) {
            if (o.val.is_null()) continue;
            if (o.key.rfind("code.", 0) == 0) code_overrides.push_back({o.key, o.val});
            else config_overrides.push_back({o.key, o.val});
        }
        if (!config_overrides.empty()) {
            try {
                rr.rendered = render_overrides(in.syntax, config_overrides);  // the job's own syntax
            } catch (const std::exception& e) {
                for (const auto& o : config_overrides) rr.rendered.push_back(fmt::format("{}={}", o.key, o.val.to_string()));
            }
        }
        for (const auto& o : code_overrides)
            rr.rendered.push_back(fmt::format("# code: {}", o.val.is_string() ? o.val.as_string() : o.val.to_string()));
        if (rep.estimate) {
            bool affects = false;
            for (const auto& o : config_overrides)
                if (o.key.rfind("env.", 0) != 0 && o.key.rfind("profiling.", 0) != 0 &&
                    o.key != "training.torch_npu_memory_ratio" && o.key != "training.memory_fraction")
                    affects = true;
            if (affects) {
                estimate_result after = estimate_with(facts, canonical_closure(in.syntax, config_overrides));
                rr.expected_peak_bytes = after.peak_bytes;
                rr.expected_device_peak_bytes = after.device_peak_bytes;
                rr.expected_fits = after.fits;
            } else {
                rr.expected_peak_bytes = rep.estimate->peak_bytes;
                rr.expected_device_peak_bytes = rep.estimate->device_peak_bytes;
                rr.expected_fits = rep.estimate->fits;
                rr.expected_note = "does not change the tensor peak; it changes where the memory goes or why it fails";
            }
        } else {
            rr.expected_note = "no estimate: give --model (and the config) to get the expected peak";
        }
        rep.recommendations.push_back(std::move(rr));
    }
    rep.next_steps = rep.inference.next_steps;
    rep.uncertain = rep.inference.uncertain;
    if (rep.estimate && !rep.estimate->complete)
        for (const auto& a : rep.estimate->assumptions) rep.uncertain.push_back("Estimate assumption: " + a);
    if (rep.mode == "preflight" && rep.estimate && !rep.estimate->fits && rep.estimate->capacity_bytes > 0)
        rep.exit_code = 1;
    return rep;
}

}  // namespace oomdx
