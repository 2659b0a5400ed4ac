// The measurements behind the snapshot method's named patterns, and what each pattern would
// say. Whether a pattern applies, and with what confidence, is decided by the rule pack
// (rules/evidence_snapshot.yaml): this file has no thresholds.
#include <algorithm>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "parsers/snapshot/analysis_internal.h"

namespace oomdx::snap::detail {

namespace {

std::int64_t cat_bytes(const std::vector<category_total>& v, std::string_view name) {
    for (const auto& c : v)
        if (c.name == name) return c.bytes;
    return 0;
}

std::string pct(double f) { return fmt::format("{:.1f}%", f * 100.0); }
std::string percent_of(double f) { return pct(f) + " of it"; }

bool forward_like(int c) {
    return c == cat_activation || c == cat_attention || c == cat_loss || c == cat_moe;
}

void add(device_analysis& d, pattern p, std::string variant = {}) {
    d.pattern_candidates.push_back({std::move(p), std::move(variant)});
}

}  // namespace

void describe_patterns(const snapshot_analysis& a, device_analysis& d, const replay_extras& x,
                       const analysis_options& opt) {
    const auto& names = a.category_names;
    auto cname = [&](int c) -> std::string {
        return c >= 0 && static_cast<std::size_t>(c) < names.size() ? names[c] : "other";
    };
    const std::int64_t live = d.allocated_bytes;
    pattern_measures& m = d.measures;
    for (const auto& ph : d.phases) (ph.kind == "growth" ? m.growth_phases : m.release_phases) += 1;
    if (!d.phases.empty()) m.last_phase = d.phases.back().kind;
    m.gradient_allocs = x.gradient_allocs;
    m.steps_from_cycles = x.epochs_from_cycles;
    m.fsdp_frames = x.fsdp_frames;
    m.ddp_frames = x.ddp_frames;
    note_code_kinds(m, x.stack_flags);
    m.range_bytes = x.range_bytes;
    m.forward_live_max_bytes = x.forward_live_max;
    for (const auto& c : d.peak_categories)
        if (c.name == "activation" || c.name == "attention" || c.name == "loss" || c.name == "moe")
            m.peak_forward_bytes += c.bytes;

    // Retained autograd graph / growing container: live blocks at the end of the trace that were
    // allocated in several different steps by the same site.
    // Weights and optimizer states are allocated once and kept: built over a stretch of the
    // trace, they are the model, not a container.
    std::vector<const site_epochs*> fwd, rest;
    for (const auto& s : x.accumulating) {
        if (s.category == cat_parameter || s.category == cat_optimizer_state) continue;
        (forward_like(s.category) ? fwd : rest).push_back(&s);
        m.retention_max_steps = std::max<std::int64_t>(m.retention_max_steps, s.distinct_epochs);
    }
    m.retention_forward_sites = static_cast<std::int64_t>(fwd.size());
    m.retention_other_sites = static_cast<std::int64_t>(rest.size());
    for (auto* s : fwd) m.retention_forward_bytes += s->bytes;
    for (auto* s : rest) m.retention_other_bytes += s->bytes;
    const std::string unit = x.epochs_from_cycles ? "steps (allocation cycles)" : "sixteenths of the trace";
    if (!fwd.empty()) {
        pattern p;
        p.name = "retained_graph";
        p.leak = true;
        p.summary = fmt::format(
            "{} forward-pass allocation sites keep blocks from several {} alive ({}): a tensor "
            "that still holds the autograd graph is kept across steps (accumulate loss.detach() "
            "or loss.item(); look for retain_graph=True)",
            fwd.size(), unit, format_bytes(m.retention_forward_bytes));
        for (std::size_t k = 0; k < std::min<std::size_t>(fwd.size(), 5); ++k)
            p.evidence.push_back(fmt::format("{} blocks ({}) from {} different {} live at the end, category {}, site {}",
                                             fwd[k]->blocks, format_bytes(fwd[k]->bytes), fwd[k]->distinct_epochs,
                                             unit, cname(fwd[k]->category), fwd[k]->site_name));
        add(d, std::move(p));
    }
    // Two texts: the other sites only (next to retained_graph), or every retaining site.
    auto container = [&](const std::vector<const site_epochs*>& sites, const char* variant) {
        if (sites.empty()) return;
        pattern p;
        p.name = "growing_container";
        p.leak = true;
        p.summary = fmt::format(
            "the same allocation site keeps adding live blocks in {} different {}: a Python "
            "container grows (detach and move to CPU before appending, or bound its size)",
            sites.front()->distinct_epochs, unit);
        for (std::size_t k = 0; k < std::min<std::size_t>(sites.size(), 5); ++k)
            p.evidence.push_back(fmt::format("site {}: {} live blocks ({}) allocated in {} {}, category {}",
                                             sites[k]->site_name, sites[k]->blocks, format_bytes(sites[k]->bytes),
                                             sites[k]->distinct_epochs, unit, cname(sites[k]->category)));
        add(d, std::move(p), variant);
    };
    container(rest, "other_sites");
    std::vector<const site_epochs*> all = rest;
    all.insert(all.end(), fwd.begin(), fwd.end());
    container(all, "all_sites");

    // First-step optimizer spike: optimizer-state allocations in one burst, then stable.
    const std::int64_t opt_live = cat_bytes(d.categories, "optimizer_state");
    m.optimizer_alloc_bytes = x.opt_alloc_bytes;
    m.optimizer_allocs = x.opt_allocs;
    m.optimizer_first_burst_bytes = x.opt_first_epoch_bytes;
    if (x.opt_allocs > 0) {
        pattern p;
        p.name = "optimizer_first_step_spike";
        p.expected = true;
        p.summary = fmt::format(
            "optimizer state ({}) is allocated once, at the first optimizer.step(), and stays: "
            "expected retention, not a leak; if this OOMs, use a smaller model or batch, a leaner "
            "optimizer, or shard/offload the optimizer state",
            format_bytes(x.opt_alloc_bytes));
        p.evidence.push_back(fmt::format("{} optimizer-state allocations ({}) between trace entries {} and {}",
                                         x.opt_allocs, format_bytes(x.opt_alloc_bytes), x.opt_first_index,
                                         x.opt_last_index));
        p.evidence.push_back(fmt::format("{} of those bytes in the first burst; {} live at the end ({} of live memory)",
                                         pct(double(x.opt_first_epoch_bytes) / double(x.opt_alloc_bytes)),
                                         format_bytes(opt_live), pct(live ? double(opt_live) / double(live) : 0)));
        for (const auto& o : d.ooms)
            if (o.category == "optimizer_state")
                p.evidence.push_back(fmt::format("the OOM at trace entry {} was an optimizer-state request", o.trace_index));
        add(d, std::move(p));
    }
    if (!d.has_trace && live > 0 && opt_live > 0) {
        pattern p;
        p.name = "optimizer_first_step_spike";
        p.expected = true;
        p.summary = fmt::format("optimizer state holds {} of live memory: expected after the first step, not a leak",
                                pct(double(opt_live) / double(live)));
        p.evidence.push_back(fmt::format("optimizer_state {} of {} live (no trace to see when it was allocated)",
                                         format_bytes(opt_live), format_bytes(live)));
        add(d, std::move(p), "no_trace");
    }

    // Activation sawtooth: repeated growth/release cycles driven by forward activations.
    m.growth_alloc_bytes = x.growth_alloc_total;
    for (std::size_t c = 0; c < x.growth_alloc_by_cat.size(); ++c)
        if (forward_like(static_cast<int>(c))) m.growth_forward_bytes += x.growth_alloc_by_cat[c];
    if (d.cycles > 0 && x.growth_alloc_total > 0) {
        const double share = double(m.growth_forward_bytes) / double(x.growth_alloc_total);
        pattern p;
        p.name = "activation_sawtooth";
        p.summary = fmt::format(
            "live memory rises in the forward pass and falls in backward ({} cycles, forward "
            "activations up to {}): activation pressure; activation checkpointing trades "
            "recomputation for those bytes",
            d.cycles, format_bytes(x.forward_live_max));
        p.evidence.push_back(fmt::format("{} of the bytes allocated while memory grows are forward activations",
                                         pct(share)));
        p.evidence.push_back(fmt::format("activations at the peak: {} of {}", format_bytes(m.peak_forward_bytes),
                                         format_bytes(d.peak_bytes)));
        pattern q = p;
        add(d, std::move(p));
        if (!d.peak_categories.empty()) {
            q.summary += fmt::format("; the overall peak is dominated by {} ({}), so checkpointing "
                                     "alone will not lower it",
                                     d.peak_categories.front().name, percent_of(d.peak_categories.front().share));
            add(d, std::move(q), "peak_elsewhere");
        }
    }

    // DDP-replicated vs FSDP-sharded gradients.
    const std::int64_t grads = cat_bytes(d.categories, "gradient"), params = cat_bytes(d.categories, "parameter");
    if (x.fsdp_frames) {
        pattern p;
        p.name = "fsdp_sharded_gradients";
        p.summary = "FSDP frames allocate parameters/gradients: the model state is sharded across ranks";
        p.evidence.push_back(fmt::format("gradients {} and parameters {} live on this rank", format_bytes(grads),
                                         format_bytes(params)));
        add(d, std::move(p));
    }
    if (params > 0 && grads > 0 && live > 0) {
        pattern p;
        p.name = "ddp_replicated_gradients";
        // rev38: without DDP frames equal gradients and parameters are also what full sharding leaves (FSDP, ZeRO-3
        // without FSDP frames in the stacks): the file's own line does not claim DDP then
        p.summary = x.ddp_frames
                        ? fmt::format("full-size gradients ({}) next to full-size parameters ({}): every rank holds a replica "
                                      "(DDP); FSDP/ZeRO-style sharding is the structural fix when memory-bound",
                                      format_bytes(grads), format_bytes(params))
                        : fmt::format("gradients ({}) as large as the parameters ({}): a full replica on every rank under DDP, "
                                      "or equal shards under FSDP / ZeRO-3; no DDP frame in the stacks, so the file alone "
                                      "does not say which (the job's config does)",
                                      format_bytes(grads), format_bytes(params));
        p.evidence.push_back(fmt::format("parameters + gradients + optimizer state = {} of live memory",
                                         pct(double(params + grads + opt_live) / double(live))));
        if (x.ddp_frames) p.evidence.push_back("DistributedDataParallel frames in the allocation stacks");
        add(d, std::move(p));
    }

    // Reference cycles: a burst of frees of allocations from many different steps at once.
    m.bulk_free_blocks = x.bulk_frees;
    m.bulk_free_bytes = x.bulk_bytes;
    m.bulk_free_steps = x.bulk_frees > 0 ? x.bulk_epoch_span + 1 : 0;
    m.bulk_free_index = x.bulk_index;
    if (x.bulk_frees > 0) {
        pattern p;
        p.name = "reference_cycles";
        p.leak = true;
        p.summary = fmt::format(
            "{} blocks ({}) allocated across {} steps were freed together at trace entry {}, as "
            "when the garbage collector breaks reference cycles; call "
            "torch.utils.viz._cycles.warn_tensor_cycles() at start-up to find them",
            x.bulk_frees, format_bytes(x.bulk_bytes), x.bulk_epoch_span + 1, x.bulk_index);
        p.evidence.push_back(fmt::format("a run of {} frees without any allocation in between", x.bulk_frees));
        add(d, std::move(p));
    }

    // Fragmentation at an OOM: the first OOM whose request no cached block could take.
    for (const auto& o : d.ooms) m.oom_fragmented_events += o.fragmentation ? 1 : 0;
    for (const auto& o : d.ooms) {
        if (!o.fragmentation) continue;
        pattern p;
        p.name = "fragmentation_oom";
        p.summary = fmt::format(
            "the failed request of {} is larger than the largest inactive block ({}) while {} is "
            "inactive in total: fragmentation; try expandable_segments:True, then max_split_size_mb "
            "near the request size, then fixed shapes",
            format_bytes(o.requested_bytes), format_bytes(o.largest_inactive_block_bytes),
            format_bytes(o.inactive_bytes));
        p.evidence.push_back(fmt::format("oom at trace entry {}: requested {}, device_free {}", o.trace_index,
                                         format_bytes(o.requested_bytes), format_bytes(o.device_free_bytes)));
        if (a.expandable_segments) p.evidence.push_back("expandable segments are already on");
        add(d, std::move(p));
        break;
    }
    // Fragmentation of the final state; "{level}" is the rules' level.
    if (d.reserved_bytes > 0 && d.inactive_bytes > 0) {
        pattern p;
        p.name = "fragmentation";
        p.summary = fmt::format("{} of reserved memory is not allocated ({{level}} level) and the free space is split: "
                                "largest inactive block {} of {} inactive",
                                pct(d.fragmentation_rate), format_bytes(d.largest_inactive_block_bytes),
                                format_bytes(d.inactive_bytes));
        p.evidence.push_back(fmt::format("{} inactive blocks in {} segments; {} of free blocks are < 1 MiB",
                                         d.inactive_blocks, d.segments, pct(d.small_free_block_share)));
        add(d, std::move(p));
    }

    // Memory outside the PyTorch allocator at the OOM.
    if (d.non_pytorch_gap_bytes > 0 && opt.device_capacity_bytes > 0) {
        const oom_event& o = d.ooms.back();
        pattern p;
        p.name = "non_pytorch_gap";
        p.summary = fmt::format(
            "{} of device memory was neither free nor reserved by PyTorch at the OOM: NCCL/HCCL "
            "buffers, cuBLAS/cuDNN workspaces, CUDA context or another process",
            format_bytes(d.non_pytorch_gap_bytes));
        p.evidence.push_back(fmt::format("capacity {} - device_free {} - reserved {}",
                                         format_bytes(opt.device_capacity_bytes),
                                         format_bytes(o.device_free_bytes), format_bytes(o.reserved_bytes)));
        add(d, std::move(p));
    }
}

}  // namespace oomdx::snap::detail
