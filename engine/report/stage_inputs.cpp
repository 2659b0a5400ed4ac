// Stages `inputs` and `facts`: read every input given and turn it into facts with provenance,
// then derive the job.* facts the rules route on (world size, framework, device kind).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/report/log_summaries.h"
#include "engine/report/pipeline.h"
#include "engine/report/report_phrases.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/config/device_catalog.h"
#include "parsers/config/framework_defaults.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/job_inputs.h"
#include "parsers/config/launch_line.h"
#include "parsers/config/model_sources.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/log_summary.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/file_relation.h"
#include "parsers/snapshot/summary.h"

namespace oomdx {

namespace {

// The launch command the log printed: every line of a multi-line one, else its first line.
const std::string& launch_text(const log_analysis& log) {
    return log.launch_command.empty() ? log.launch_line : log.launch_command;
}

// The text ends in a line continuation: the command went on past what the log holds.
bool launch_cut(const std::string& text) {
    size_t end = text.find_last_not_of(" \t\r\n");
    return end != std::string::npos && text[end] == '\\';
}

provenance oomdx_provenance() {
    provenance p;
    p.producer = "oomdx";
    return p;
}

provenance user_provenance(std::string excerpt) {
    provenance p;
    p.producer = "user";
    p.excerpt = std::move(excerpt);
    return p;
}

// HF Trainer prints its global batch as per-device batch x accumulation x world size ("Total train batch
// size (w. parallel, distributed & accumulation) = 32" under "Instantaneous batch size per device = 4" and
// "Gradient Accumulation steps = 8"): the world size is their quotient when all three come from one printout.
std::optional<std::int64_t> world_from_printed_batches(const fact_store& facts) {
    const fact* g = facts.get("training.global_batch_size");
    const fact* b = facts.get("training.local_batch_size");
    const fact* a = facts.get("training.gradient_accumulation_steps");
    for (const fact* f : {g, b, a})
        if (!f || f->prov.producer != "log.setting" || f->prov.file != g->prov.file || !f->val.is_numeric()) return std::nullopt;
    const double per_world = b->val.as_number() * a->val.as_number();
    const double w = g->val.as_number() / per_world;
    if (!(per_world >= 1) || w < 1 || w > 1e6 || w != std::floor(w)) return std::nullopt;
    return static_cast<std::int64_t>(w);
}

void derive_world_size(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    const auto& log = s.rep.log;
    if (s.req.world_size > 0) {
        facts.emit("job.world_size", value(s.req.world_size), user_provenance(fmt::format("--world-size {}", s.req.world_size)));
    } else if (!facts.has("job.world_size") && log && log->world_size) {
        const fact* ws = facts.get("log.world_size");
        facts.emit("job.world_size", value(*log->world_size), ws ? ws->prov : oomdx_provenance());
    } else if (!facts.has("job.world_size") && log && !log->launch_line.empty()) {
        if (auto ws = launch_world_size(launch_text(*log))) {
            provenance p;
            p.producer = "log";
            p.file = log->launch_file;
            p.line = log->launch_line_no;
            p.excerpt = log->launch_line;
            facts.emit("job.world_size", value(*ws), p);
        }
    }
    if (!facts.has("job.world_size"))
        if (const auto w = world_from_printed_batches(facts)) {
            provenance p = facts.get("training.global_batch_size")->prov;  // a copy: emitting may move the store's facts
            facts.emit("job.world_size", value(*w), p);
        }
}

void derive_framework(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    const auto& log = s.rep.log;
    if (!s.req.framework.empty() && !facts.has("job.framework")) {
        facts.emit("job.framework", value(s.req.framework), user_provenance("--framework " + s.req.framework));
        // Without a config file the framework's defaults that withdraw a lever fill the keys --set and
        // the log do not give: LLaMA-Factory checkpoints every layer unless told not to, torchtitan
        // recomputes selectively, verl trains in bf16 and shards with FSDP (cases77), so their jobs are not
        // advised to turn on what already runs. An unseen default never adds a lever (HF Trainer's "no checkpointing" or
        // "fp32"). They stay marked as defaults, so a setting the log prints replaces them.
        if (s.req.config.empty()) {
            emit_named_config_settings(s.req.framework, facts);  // a shipped config the log or --set names
            emit_lever_withdrawing_defaults(s.req.framework, facts);
        }
    }
    if (!facts.has("job.framework") && log && log->framework != "unknown")
        if (auto name = framework_for_log(log->framework, log->device_kind)) {
            const fact* fw = facts.get("log.framework");
            facts.emit("job.framework", value(*name), fw ? fw->prov : oomdx_provenance());
            // The same for a framework the log names (its markers, not a guess from one key).
            if (s.req.config.empty()) {
                emit_named_config_settings(*name, facts);
                emit_lever_withdrawing_defaults(*name, facts);
            }
        }
    if (const auto fw = facts.string("job.framework"))
        if (const framework_semantics* sem = find_semantics(*fw)) emit_facts(*sem, facts);
}

// A config file of a framework whose training configs always hold one of its training_keys
// (torchtune: an optimizer; LLaMA-Factory: a stage, a dataset, a learning rate, ...) that holds
// none of them: an evaluation, generation, export or quantization config. A training or optimizer
// setting given with --set makes it a training job again.
bool derive_trains_from_keys(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    if (!s.job || !s.job->job || s.job->job->file.empty() || s.job->job->framework_guessed) return false;
    const job_config& cfg = *s.job->job;
    const framework_semantics* sem = find_semantics(cfg.framework);
    if (!sem || sem->training_keys.empty() || cfg.entries.empty()) return false;
    for (const auto& e : cfg.entries)
        if (sem->is_training_key(e.key)) return false;
    for (const auto& u : s.job->user)
        if (u.name.starts_with("optimizer.") || u.name.starts_with("training.")) return false;
    // The keys as a reader writes them: "optimizer" for "optimizer" and "optimizer.*".
    std::vector<std::string> names;
    for (std::string k : sem->training_keys) {
        if (k.ends_with(".*")) k.resize(k.size() - 2);
        if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
    }
    provenance p;
    p.producer = "config." + cfg.framework;
    p.file = cfg.file;
    p.excerpt = fmt::format("none of {} in the config", fmt::join(names, ", "));
    facts.emit("job.trains", value(false), p);
    facts.emit("job.trains_basis", value(std::string("config_keys")), p);
    facts.emit("job.training_keys", value(fmt::format("{}", fmt::join(names, ", "))), p);
    return true;
}

// job.trains = false (with job.trains_basis and the provenance of what says so) for a launch line
// running a script its framework lists as not training (Megatron's text-generation server), or for
// a framework whose workflow trains only with do_train (LLaMA-Factory) given a config that asks for
// evaluation or prediction and not for training. A config that names no phase at all is taken as
// training (a partial copy of a training config often leaves do_train out).
void derive_trains(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    // A launch line that runs a script the framework uses for generation, inference or conversion.
    if (const fact* script = facts.get("job.entry_script"); script && script->val.is_string())
        if (const auto fw = facts.string("job.framework"))
            if (const framework_semantics* sem = find_semantics(*fw); sem && sem->script_does_not_train(script->val.as_string())) {
                const provenance p = script->prov;  // copied before the store grows
                facts.emit("job.trains", value(false), p);
                facts.emit("job.trains_basis", value(std::string("entry_script")), p);
                return;
            }
    if (derive_trains_from_keys(s)) return;
    if (facts.boolean("framework.trains_only_with_do_train") != std::optional<bool>(true)) return;
    if (facts.boolean("training.do_train") == std::optional<bool>(true)) return;
    const fact* why = nullptr;
    for (const char* k : {"training.do_predict", "training.do_eval"})
        if (!why && facts.boolean(k) == std::optional<bool>(true)) why = facts.get(k);
    if (!why && facts.boolean("training.do_train") == std::optional<bool>(false)) why = facts.get("training.do_train");
    if (!why) return;
    const provenance p = why->prov;  // copied before the store grows
    facts.emit("job.trains", value(false), p);
    facts.emit("job.trains_basis", value(std::string("phase_flags")), p);
}

// What the job printed about its own settings (batch size, checkpointing, compute dtype) stands
// where the inputs leave a key open or only at a framework default; the config and --set win.
void apply_log_settings(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    if (!s.rep.log) return;
    for (const auto& x : s.rep.log->settings) {
        if (const fact* cur = facts.get(x.fact); cur && !cur->prov.from_default()) continue;
        provenance p;
        p.producer = "log.setting";
        p.file = x.at.file;
        p.line = x.at.line;
        p.excerpt = x.at.text;
        if (x.fact.rfind("log.", 0) == 0) {  // rev38: a log.* text fact (the library a regression report names)
            facts.emit(x.fact, value(x.value), p);
            continue;
        }
        canonical_override ov;
        try {
            ov = parse_set_override(x.fact + "=" + x.value);
        } catch (const std::exception&) {
            continue;  // a printed value the vocabulary does not take (a signature's example test catches it)
        }
        facts.emit(ov.key, ov.val, p);
    }
}

void derive_device(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    // Device capacity from the OOM message when no catalog device was named.
    if (!facts.has("device.capacity_bytes") && facts.has("oom.capacity_bytes")) {
        const fact c = *facts.get("oom.capacity_bytes");  // a copy: emitting may move the store's facts
        facts.emit("device.capacity_bytes", c.val, c.prov);
        facts.emit("device.capacity_source", value("oom_message"), c.prov);
    }
    // The device the log names, when neither --device nor the OOM message gave a capacity: its
    // catalog entry (an ambiguous name takes the catalog's default variant), the log line as provenance.
    if (!facts.has("device.capacity_bytes"))
        if (const fact* n = facts.get("job.device_named"); n && n->val.is_string())
            if (const auto d = lookup_device(n->val.as_string())) {
                struct from_log_line : fact_sink {
                    fact_store& to;
                    provenance at;
                    from_log_line(fact_store& t, provenance p) : to(t), at(std::move(p)) {}
                    void emit(fact f) override {
                        f.prov = at;
                        to.emit(std::move(f));
                    }
                } sink(facts, n->prov);  // a copy: emitting may move the store's facts
                const bool from_log = sink.at.producer == "log.setting";  // else --set job.device_named
                emit_facts(*d, sink, from_log ? "log" : "user");
                const std::string cap = format_bytes(d->capacity_bytes);
                s.rep.inputs.push_back(from_log ? phrase(s.rep.lang, "report.input.device_named",
                                                         {{"device", d->name}, {"capacity", cap}, {"at", sink.at.location()}})
                                                : phrase(s.rep.lang, "report.input.device", {{"device", d->name}, {"capacity", cap}}));
            }
    std::string kind = "unknown";
    if (const fact* d = facts.get("device.kind")) kind = d->val.as_string();
    else if (const fact* o = facts.get("oom.device_kind"); o && o->val.is_string() &&
             (o->val.as_string() == "cuda" || o->val.as_string() == "npu" || o->val.as_string() == "hip"))
        kind = o->val.as_string();
    else if (const fact* fk = facts.get("framework.device_kind"))
        kind = fk->val.as_string();
    else if (const fact* w = facts.get("job.device_kind_named"); w && w->val.is_string())  // "Ascend NPU" in words
        kind = w->val.as_string();
    facts.emit("job.device_kind", value(kind), oomdx_provenance());
}

// The model config the job printed, read as its config.json would be, where neither --model nor
// the config named a model. One that does not read is noted, never an error.
void model_from_log(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    const auto& mc = *rep.log->model_config;
    const std::string at = fmt::format("{}:{}", mc.at.file, mc.at.line);
    // The JSON's "{" is on the header line: led by that many line breaks, the reader's line
    // numbers (in errors and provenance) are the log's (exact when no other line came between).
    const bool pad = mc.at.line > 0 && mc.at.line <= (std::int64_t{1} << 22);
    try {
        model_dims m = hf_config_from_text(pad ? std::string(static_cast<size_t>(mc.at.line - 1), '\n') + mc.text : mc.text,
                                           pad ? mc.at.file : at);
        m.source.producer = "log.model_config";
        m.source.file = mc.at.file;
        if (!pad) m.source.line = mc.at.line;
        s.job->model = std::move(m);
        rep.inputs.push_back(phrase(rep.lang, "report.input.model_log", {{"model", s.job->model->name}, {"at", at}}));
    } catch (const std::exception& e) {
        const std::string why = std::string(e.what()).substr(0, 300);
        rep.log->warnings.push_back(at + ": printed model config not read: " + why);
        rep.inputs.push_back(phrase(rep.lang, "report.input.model_log_unread", {{"at", at}, {"why", why}}));
    }
}

// Where neither --model, the config nor a printed model config named the model: the one preset whose parameter
// count is the count the log printed (HF Trainer / PEFT / Unsloth / Lightning summaries; PEFT's total less its
// adapters), as the log parser read it: every digit, or rounded to four significant digits or more ("20430.40M"). A
// size in words ("70B") has no count, one rounded coarser ("7.2 B") is too coarse, and two presets with different
// dimensions at that count name none.
void model_from_logged_count(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    // the last of each count precise enough
    const log_analysis::setting *total = nullptr, *trainable = nullptr;
    for (const auto& x : rep.log->settings) {
        if (x.fact != "job.model_params_named" && x.fact != "job.trainable_params_named") continue;
        if (!x.count || (!x.count->exact() && x.count->rounded_digits < 4)) continue;
        (x.fact == "job.model_params_named" ? total : trainable) = &x;
    }
    // in billions; what a count's rounding leaves open: half a unit of its fourth significant digit, 0 when exact
    auto billions = [](const log_analysis::setting* x) { return x ? static_cast<double>(x->count->n) / 1e9 : 0.0; };
    auto open = [&](const log_analysis::setting* x) {
        const double v = billions(x);
        return x && !x->count->exact() ? 0.5 * std::pow(10.0, std::floor(std::log10(v)) - 3) : 0.0;
    };
    const double t = billions(total);
    const double tr = billions(trainable);
    double base = 0;
    const log_analysis::setting* at = nullptr;
    if (t > 0) {
        base = tr > 0 && tr < t / 2 ? t - tr : t;  // adapters are counted in PEFT's and Unsloth's totals
        at = total;
    } else if (tr > 0) {
        // a count of trainable parameters alone is the model's only where the job trains every weight
        const fact* ft = s.job->job ? s.job->job->find("training.finetuning_type") : nullptr;
        if (ft && ft->val.is_string() && ft->val.as_string() != "full") return;
        base = tr;
        at = trainable;
    }
    if (!(base >= 0.1)) return;
    // the rounding left open by each count used (the total, and the adapters taken from it); an exact count: one parameter
    const double tol = std::max(1e-9, open(at) + (at == total && base != t ? open(trainable) : 0.0));
    const auto hits = presets_with_param_count(base, tol);
    if (hits.size() != 1) return;
    std::string count = fmt::format("{:.4g} billion", base);
    if (tol <= 1e-9) {  // the exact count, grouped as the log prints it
        count = std::to_string(std::llround(base * 1e9));
        for (int i = static_cast<int>(count.size()) - 3; i > 0; i -= 3) count.insert(static_cast<size_t>(i), ",");
    }
    model_dims m = *hits.front();
    m.source.producer = "log.param_count";
    m.source.file = at->at.file;
    m.source.line = at->at.line;
    m.source.excerpt = at->at.text;
    s.job->model = std::move(m);
    rep.inputs.push_back(phrase(rep.lang, "report.input.model_param_count",
                                {{"model", s.job->model->name},
                                 {"count", count},
                                 {"at", fmt::format("{}:{}", at->at.file, at->at.line)}}));
}

const snap::snapshot_analysis& max_peak(const std::vector<snap::snapshot_analysis>& v) {
    auto peak = [](const snap::snapshot_analysis& a) { return a.primary >= 0 ? a.devices[a.primary].peak_bytes : 0; };
    return *std::max_element(v.begin(), v.end(), [&](const auto& a, const auto& b) { return peak(a) < peak(b); });
}

}  // namespace

void stage_inputs(pipeline_state& s) {
    const diagnosis_request& req = s.req;
    diagnosis_report& rep = s.rep;
    if (!req.logs.empty()) {
        log_options lo;
        lo.progress = req.log_progress;
        if (!req.device.empty())  // the forecast's capacity; an unknown device is reported by load_job_inputs
            if (const auto d = lookup_device(req.device))
                lo.device_capacity_bytes = d->capacity_bytes > 0 ? d->capacity_bytes : d->nominal_bytes;
        // Training logs, or their summaries (oomdx log --format json, oomdx log merge --format json).
        std::vector<std::string> logs, summaries;
        for (const auto& f : req.logs)
            (log_summary_kind_of(f) == log_summary_kind::not_summary ? logs : summaries).push_back(f);
        if (!logs.empty() && !summaries.empty())
            throw input_error::in_file(summaries.front(), "a log summary among training logs: give the logs or their summaries, not both");
        rep.log = summaries.empty() ? analyze_logs(logs, lo) : combine_log_summaries(summaries);
        for (const auto& f : rep.log->files) rep.inputs.push_back(phrase(rep.lang, "report.input.log", {{"file", f.path}, {"lines", std::to_string(f.lines)}}));
    }
    job_inputs_options jo;
    jo.config = req.config;
    jo.framework = req.framework;
    jo.model = req.model;
    jo.device = req.device;
    jo.sets = req.sets;
    if (rep.log && !rep.log->launch_line.empty()) {
        jo.launch_args = launch_overrides(launch_text(*rep.log));
        jo.launch_script = launch_script(launch_text(*rep.log));
    }
    s.job = load_job_inputs(jo);
    // A launch command the paste cut (its last line still ends in a continuation backslash): the flags after the cut
    // are unknown, so the adapter's defaults for what the shown part does not set are not the job's settings.
    if (req.config.empty() && s.job->job && rep.log && !rep.log->launch_line.empty() && launch_cut(launch_text(*rep.log)))
        std::erase_if(s.job->job->facts, [](const fact& f) { return f.prov.from_default() && f.name != "job.framework"; });
    if (!s.job->model && rep.log && rep.log->model_config) model_from_log(s);
    if (!s.job->model && rep.log) model_from_logged_count(s);
    if (!req.config.empty()) rep.inputs.push_back(phrase(rep.lang, "report.input.config", {{"file", req.config}}));
    if (s.job->model && s.job->model->source.producer != "log.model_config" && s.job->model->source.producer != "log.param_count")
        rep.inputs.push_back(phrase(rep.lang, "report.input.model", {{"model", s.job->model->name}}));
    if (s.job->device)
        rep.inputs.push_back(phrase(rep.lang, "report.input.device",
                                    {{"device", s.job->device->name}, {"capacity", format_bytes(s.job->device->capacity_bytes)}}));
    if (!req.snapshots.empty()) {
        // Snapshots and per-file summaries are analyses; merged summaries give rank rows only.
        std::vector<std::string> files, merged;
        for (auto& f : snap::expand_snapshot_inputs(req.snapshots))
            (snap::summary_kind_of(f) == snap::summary_kind::ranks ? merged : files).push_back(std::move(f));
        snap::analysis_options ao;
        if (s.job->device) ao.device_capacity_bytes = s.job->device->capacity_bytes;
        else if (rep.log && rep.log->capacity_bytes) ao.device_capacity_bytes = *rep.log->capacity_bytes;
        rep.snapshots = snap::analyze_files(files, ao);
        for (const auto& a : rep.snapshots) rep.inputs.push_back(phrase(rep.lang, "report.input.snapshot", {{"file", a.file}}));
        if (!merged.empty()) {
            // Rows: the merged ones and those of the other files given. The per-snapshot facts come
            // from the analysis of largest peak: a file given, or the summary a merge names.
            std::vector<snap::rank_row> rows;
            std::vector<std::string> peaks;
            for (const auto& f : merged) {
                auto m = snap::load_merged(f);
                rows.insert(rows.end(), std::make_move_iterator(m.rows.begin()), std::make_move_iterator(m.rows.end()));
                rep.inputs.push_back(phrase(rep.lang, "report.input.snapshot", {{"file", f}}));
                if (m.peak_summary.empty() || snap::summary_kind_of(m.peak_summary) != snap::summary_kind::analysis)
                    throw input_error::in_file(
                        f, m.peak_summary.empty()
                               ? "merged summary without 'merge.peak_summary': merge again with this oomdx, or give the per-file summaries"
                               : "merge.peak_summary: " + m.peak_summary + " is not a readable per-file summary here; give the per-file summaries instead");
                peaks.push_back(m.peak_summary);
            }
            for (const auto& a : rep.snapshots) rows.push_back(snap::rank_row_of(a, static_cast<std::int64_t>(rows.size())));
            for (const auto& p : peaks) rep.snapshots.push_back(snap::analyze_file(p, ao));
            rep.ranks = snap::rank_table_of(std::move(rows));
            rep.snapshots_merged = true;
        } else if (rep.snapshots.size() >= 2) {
            // Ranks of one moment are compared as ranks; one rank's files over time make a diff or a trend
            // (the rules decide from what the files say: rev37).
            std::optional<load_result> holder;
            if (snapshot_files_relation(rep.snapshots, rules_with(req.rule_dirs, holder)) == "ranks")
                rep.ranks = snap::compare_ranks(rep.snapshots);
            else if (rep.snapshots.size() >= 3) rep.trend = snap::trend(rep.snapshots);
            else rep.diff = snap::diff(rep.snapshots[0], rep.snapshots[1]);
        }
    }
}

void stage_facts(pipeline_state& s) {
    const diagnosis_request& req = s.req;
    diagnosis_report& rep = s.rep;
    fact_store& facts = rep.facts;
    facts.emit("job.mode", value(rep.mode), oomdx_provenance());
    if (rep.log) emit_facts(*rep.log, facts);
    facts.emit("job.has_log", value(!req.logs.empty()), oomdx_provenance());
    emit_facts(*s.job, facts);
    apply_log_settings(s);
    // The model's dimensions from the job's own printout (Megatron's arguments block), where no model was given.
    if (const fact* h = facts.get("model.hidden_size"); h && h->prov.producer == "log.setting")
        if (const fact* l = facts.get("model.num_layers"); l && l->prov.producer == "log.setting")
            rep.inputs.push_back(phrase(rep.lang, "report.input.model_log_settings",
                                        {{"layers", l->val.to_string()}, {"hidden", h->val.to_string()},
                                         {"at", fmt::format("{}:{}", h->prov.file, h->prov.line)}}));
    derive_world_size(s);
    derive_framework(s);
    derive_device(s);
    derive_trains(s);
    finish_job_inputs(*s.job, facts);  // derived facts (torchtitan zero_stage), input checks, render syntax
    facts.emit("job.has_config", value(!req.config.empty() || !req.sets.empty()), oomdx_provenance());
    facts.emit("job.has_model", value(facts.has("model.hidden_size")), oomdx_provenance());
    if (rep.ranks) {
        // The analysis with the largest peak (when any was given) and the merged ranks' view.
        snap::emit_analysis_facts(max_peak(rep.snapshots), facts, static_cast<std::int64_t>(rep.ranks->rows.size()));
        snap::emit_facts(*rep.ranks, facts);
    } else if (!rep.snapshots.empty()) {
        snap::emit_analysis_facts(max_peak(rep.snapshots), facts, static_cast<std::int64_t>(rep.snapshots.size()));
        if (rep.trend) snap::emit_facts(*rep.trend, facts);
        if (rep.diff) snap::emit_facts(*rep.diff, facts);
    }
    if (!rep.snapshots_merged) snap::emit_relation_facts(rep.snapshots, facts);  // merged summaries are ranks already
    facts.emit("job.has_snapshot", value(!req.snapshots.empty()), oomdx_provenance());
}

}  // namespace oomdx
