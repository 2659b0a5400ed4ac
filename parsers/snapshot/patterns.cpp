// The named patterns of the snapshot method, each with the evidence that supports it.
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

}  // namespace

void detect_patterns(const snapshot_analysis& a, device_analysis& d, const replay_extras& x,
                     const analysis_options& opt) {
    auto& out = d.patterns;
    const auto& names = a.category_names;
    auto cname = [&](int c) -> std::string {
        return c >= 0 && static_cast<std::size_t>(c) < names.size() ? names[c] : "other";
    };
    const std::int64_t live = d.allocated_bytes;

    // Retained autograd graph / growing container: live blocks at the end of the trace that were
    // allocated in many different steps (epochs) by the same site.
    if (!x.accumulating.empty()) {
        std::vector<const site_epochs*> fwd, rest;
        for (const auto& s : x.accumulating) (forward_like(s.category) ? fwd : rest).push_back(&s);
        std::string unit = x.epochs_from_cycles ? "steps (allocation cycles)" : "sixteenths of the trace";
        // Many forward sites kept alive across steps: the graph of each step is retained.
        if (fwd.size() >= 3) {
            pattern p;
            p.name = "retained_graph";
            p.leak = true;
            p.confidence = x.epochs_from_cycles ? "high" : "medium";
            std::int64_t bytes = 0;
            for (auto* s : fwd) bytes += s->bytes;
            p.summary = fmt::format(
                "{} forward-pass allocation sites keep blocks from several {} alive ({}): a tensor "
                "that still holds the autograd graph is kept across steps (accumulate loss.detach() "
                "or loss.item(); look for retain_graph=True)",
                fwd.size(), unit, format_bytes(bytes));
            for (std::size_t k = 0; k < std::min<std::size_t>(fwd.size(), 5); ++k) {
                p.evidence.push_back(fmt::format("{} blocks ({}) from {} different {} live at the end, "
                                                 "category {}, site {}",
                                                 fwd[k]->blocks, format_bytes(fwd[k]->bytes),
                                                 fwd[k]->distinct_epochs, unit, cname(fwd[k]->category),
                                                 fwd[k]->site_name));
            }
            out.push_back(std::move(p));
        } else {
            rest.insert(rest.end(), fwd.begin(), fwd.end());
        }
        if (!rest.empty()) {
            pattern p;
            p.name = "growing_container";
            p.leak = true;
            p.confidence = x.epochs_from_cycles ? "high" : "medium";
            p.summary = fmt::format(
                "the same allocation site keeps adding live blocks in {} different {}: a Python "
                "container grows (detach and move to CPU before appending, or bound its size)",
                rest.front()->distinct_epochs, unit);
            for (std::size_t k = 0; k < std::min<std::size_t>(rest.size(), 5); ++k)
                p.evidence.push_back(fmt::format("site {}: {} live blocks ({}) allocated in {} {}, category {}",
                                                 rest[k]->site_name, rest[k]->blocks, format_bytes(rest[k]->bytes),
                                                 rest[k]->distinct_epochs, unit, cname(rest[k]->category)));
            out.push_back(std::move(p));
        }
    }

    // First-step optimizer spike: optimizer-state allocations in one burst, then stable.
    std::int64_t opt_live = cat_bytes(d.categories, "optimizer_state");
    if (x.opt_allocs > 0 && x.opt_first_epoch_bytes >= x.opt_alloc_bytes * 8 / 10 &&
        x.opt_alloc_bytes >= std::max<std::int64_t>(d.peak_bytes / 20, 1)) {
        pattern p;
        p.name = "optimizer_first_step_spike";
        p.expected = true;
        p.confidence = "high";
        p.summary = fmt::format(
            "optimizer state ({}) is allocated once, at the first optimizer.step(), and stays: "
            "expected retention, not a leak; if this OOMs, use a smaller model or batch, a leaner "
            "optimizer, or shard/offload the optimizer state",
            format_bytes(x.opt_alloc_bytes));
        p.evidence.push_back(fmt::format("{} optimizer-state allocations ({}) between trace entries {} and {}",
                                         x.opt_allocs, format_bytes(x.opt_alloc_bytes),
                                         x.opt_first_index, x.opt_last_index));
        p.evidence.push_back(fmt::format("{} of those bytes in the first burst; {} live at the end ({} of live memory)",
                                         pct(double(x.opt_first_epoch_bytes) / double(x.opt_alloc_bytes)),
                                         format_bytes(opt_live), pct(live ? double(opt_live) / double(live) : 0)));
        for (const auto& o : d.ooms)
            if (o.category == "optimizer_state")
                p.evidence.push_back(fmt::format("the OOM at trace entry {} was an optimizer-state request", o.trace_index));
        out.push_back(std::move(p));
    } else if (!d.has_trace && live > 0 && double(opt_live) / double(live) >= 0.25) {
        pattern p;
        p.name = "optimizer_first_step_spike";
        p.expected = true;
        p.confidence = "low";
        p.summary = fmt::format("optimizer state holds {} of live memory: expected after the first step, not a leak",
                                pct(double(opt_live) / double(live)));
        p.evidence.push_back(fmt::format("optimizer_state {} of {} live (no trace to see when it was allocated)",
                                         format_bytes(opt_live), format_bytes(live)));
        out.push_back(std::move(p));
    }

    // Activation sawtooth: repeated growth/release cycles driven by forward activations.
    if (d.cycles >= 2 && x.growth_alloc_total > 0) {
        std::int64_t fwd = 0;
        for (std::size_t c = 0; c < x.growth_alloc_by_cat.size(); ++c)
            if (forward_like(static_cast<int>(c))) fwd += x.growth_alloc_by_cat[c];
        double share = double(fwd) / double(x.growth_alloc_total);
        if (share >= 0.5 && x.range_bytes >= d.peak_bytes / 20) {
            std::int64_t peak_act = 0;
            for (const auto& c : d.peak_categories)
                if (c.name == "activation" || c.name == "attention" || c.name == "loss" || c.name == "moe")
                    peak_act += c.bytes;
            pattern p;
            p.name = "activation_sawtooth";
            bool peak_bound = d.peak_bytes > 0 && peak_act * 5 >= d.peak_bytes;
            p.confidence = d.cycles >= 3 && peak_bound ? "high" : "medium";
            p.summary = fmt::format(
                "live memory rises in the forward pass and falls in backward ({} cycles, forward "
                "activations up to {}): activation pressure; activation checkpointing trades "
                "recomputation for those bytes",
                d.cycles, format_bytes(x.forward_live_max));
            if (!peak_bound && !d.peak_categories.empty())
                p.summary += fmt::format("; the overall peak is dominated by {} ({}), so checkpointing "
                                         "alone will not lower it",
                                         d.peak_categories.front().name, percent_of(d.peak_categories.front().share));
            p.evidence.push_back(fmt::format("{} of the bytes allocated while memory grows are forward activations",
                                             pct(share)));
            p.evidence.push_back(fmt::format("activations at the peak: {} of {}", format_bytes(peak_act),
                                             format_bytes(d.peak_bytes)));
            out.push_back(std::move(p));
        }
    }

    // DDP-replicated vs FSDP-sharded gradients.
    std::int64_t grads = cat_bytes(d.categories, "gradient"), params = cat_bytes(d.categories, "parameter");
    if (x.fsdp_frames) {
        pattern p;
        p.name = "fsdp_sharded_gradients";
        p.confidence = "medium";
        p.summary = "FSDP frames allocate parameters/gradients: the model state is sharded across ranks";
        p.evidence.push_back(fmt::format("gradients {} and parameters {} live on this rank", format_bytes(grads),
                                         format_bytes(params)));
        out.push_back(std::move(p));
    } else if (params > 0 && grads >= params * 8 / 10 && grads <= params * 13 / 10 && live > 0 &&
               double(params + grads + opt_live) / double(live) >= 0.5) {
        pattern p;
        p.name = "ddp_replicated_gradients";
        p.confidence = x.ddp_frames ? "high" : "medium";
        p.summary = fmt::format(
            "full-size gradients ({}) next to full-size parameters ({}): every rank holds a replica "
            "(DDP); FSDP/ZeRO-style sharding is the structural fix when memory-bound",
            format_bytes(grads), format_bytes(params));
        p.evidence.push_back(fmt::format("parameters + gradients + optimizer state = {} of live memory",
                                         pct(double(params + grads + opt_live) / double(live))));
        if (x.ddp_frames) p.evidence.push_back("DistributedDataParallel frames in the allocation stacks");
        out.push_back(std::move(p));
    }

    // Reference cycles: a burst of frees of allocations from many different steps at once.
    if (x.epochs_from_cycles && x.bulk_frees >= 32 && x.bulk_epoch_span >= 2 && x.bulk_bytes >= std::max<std::int64_t>(d.peak_bytes / 20, 1)) {
        pattern p;
        p.name = "reference_cycles";
        p.leak = true;
        p.confidence = "low";
        p.summary = fmt::format(
            "{} blocks ({}) allocated across {} steps were freed together at trace entry {}, as "
            "when the garbage collector breaks reference cycles; call "
            "torch.utils.viz._cycles.warn_tensor_cycles() at start-up to find them",
            x.bulk_frees, format_bytes(x.bulk_bytes), x.bulk_epoch_span + 1, x.bulk_index);
        p.evidence.push_back(fmt::format("a run of {} frees without any allocation in between", x.bulk_frees));
        out.push_back(std::move(p));
    }

    // Fragmentation OOM.
    for (const auto& o : d.ooms) {
        if (!o.fragmentation) continue;
        pattern p;
        p.name = "fragmentation_oom";
        p.confidence = "high";
        p.summary = fmt::format(
            "the failed request of {} is larger than the largest inactive block ({}) while {} is "
            "inactive in total: fragmentation; try expandable_segments:True, then max_split_size_mb "
            "near the request size, then fixed shapes",
            format_bytes(o.requested_bytes), format_bytes(o.largest_inactive_block_bytes),
            format_bytes(o.inactive_bytes));
        p.evidence.push_back(fmt::format("oom at trace entry {}: requested {}, device_free {}", o.trace_index,
                                         format_bytes(o.requested_bytes), format_bytes(o.device_free_bytes)));
        if (a.expandable_segments) p.evidence.push_back("expandable segments are already on");
        out.push_back(std::move(p));
        break;
    }
    if (d.ooms.empty() && d.reserved_bytes > 0 && d.fragmentation_rate > 0.2 &&
        d.allocated_bytes >= d.reserved_bytes / 20 &&
        d.inactive_bytes > 0 && d.largest_inactive_block_bytes * 2 < d.inactive_bytes) {
        pattern p;
        p.name = "fragmentation";
        p.confidence = "medium";
        p.summary = fmt::format("{} of reserved memory is not allocated ({} level) and the free space is split: "
                                "largest inactive block {} of {} inactive",
                                pct(d.fragmentation_rate), d.fragmentation_level,
                                format_bytes(d.largest_inactive_block_bytes), format_bytes(d.inactive_bytes));
        p.evidence.push_back(fmt::format("{} inactive blocks in {} segments; {} of free blocks are < 1 MiB",
                                         d.inactive_blocks, d.segments, pct(d.small_free_block_share)));
        out.push_back(std::move(p));
    }

    // Memory outside the PyTorch allocator at the OOM.
    if (d.non_pytorch_gap_bytes > 0 && opt.device_capacity_bytes > 0 &&
        d.non_pytorch_gap_bytes >= std::max<std::int64_t>(opt.device_capacity_bytes / 20, 512LL << 20)) {
        const oom_event& o = d.ooms.back();
        pattern p;
        p.name = "non_pytorch_gap";
        p.confidence = "medium";
        p.summary = fmt::format(
            "{} of device memory was neither free nor reserved by PyTorch at the OOM: NCCL/HCCL "
            "buffers, cuBLAS/cuDNN workspaces, CUDA context or another process",
            format_bytes(d.non_pytorch_gap_bytes));
        p.evidence.push_back(fmt::format("capacity {} - device_free {} - reserved {}",
                                         format_bytes(opt.device_capacity_bytes),
                                         format_bytes(o.device_free_bytes), format_bytes(o.reserved_bytes)));
        out.push_back(std::move(p));
    }

    // Cannbot leak flag: other + unknown > 30% of what the trace left live, or a retention pattern.
    d.leak_suspected = false;
    for (const auto& p : out)
        if (p.leak && p.name != "reference_cycles") d.leak_suspected = true;
    if (d.end_live_recorded_bytes > 0 && d.end_other_unknown_share > 0.30 &&
        d.end_live_recorded_bytes >= d.peak_bytes / 20)
        d.leak_suspected = true;
}

}  // namespace oomdx::snap::detail
