#include "engine/estimator/runtime_memory.h"

#include <fmt/format.h>

#include "engine/estimator/estimator_constants.h"

namespace oomdx::est {

namespace {

// The NCCL communicators a job's collectives run on, by rank count: the data-parallel group(s) (HSDP: the shard
// and the replicate group apart), TP, CP and EP groups, and the pipeline's point-to-point pair.
struct comm_counts {
    int pairs = 0;   // two-rank communicators (and the pipeline's send / receive neighbours)
    int wide = 0;    // communicators of more than two ranks
};

comm_counts communicators(const estimate_input& in) {
    comm_counts c;
    const auto add = [&c](std::int64_t ranks) {
        if (ranks == 2) ++c.pairs;
        else if (ranks > 2) ++c.wide;
    };
    if (in.dp_shard > 1 && in.dp_replicate > 1) {
        add(in.dp_shard);
        add(in.dp_replicate);
    } else {
        add(in.dp_shard * in.dp_replicate);
    }
    add(in.tp);
    add(in.cp);
    add(in.ep);
    if (in.pp > 1) add(2);
    return c;
}

bool eager_loading(const estimate_input& in) { return in.module_loading < 0; }

// NCCL's buffers per connection (src/init.cc defaults): LL 512 KiB, LL128 120 x 640 x 8 x 8 B, Simple
// NCCL_BUFFSIZE (4 MiB); a stated NCCL_BUFFSIZE scales the measured per-communicator figure by its share
double buffsize_scale(const estimate_input& in) {
    if (in.nccl_buffsize <= 0) return 1.0;
    constexpr double ll = 524288.0, ll128 = 4915200.0, simple = 4194304.0;
    return (ll + ll128 + double(in.nccl_buffsize)) / (ll + ll128 + simple);
}

}  // namespace

runtime_parts runtime_memory(const estimate_input& in, int variant) {
    const estimator_constants& k = estimator_k();
    runtime_parts p;
    if (in.npu) {
        p.context = k.runtime_npu_bytes;
        return p;
    }
    if (eager_loading(in))
        p.context = variant < 0 ? k.runtime_context_eager_low_bytes : k.runtime_context_eager_bytes;
    else
        p.context = k.runtime_context_lazy_bytes;  // idle readings of 256-400 MB across builds: one point
    const comm_counts c = communicators(in);
    p.communicators = c.pairs + c.wide;
    p.nccl = (c.pairs * k.nccl_comm_pair_bytes + c.wide * k.nccl_comm_bytes) * buffsize_scale(in);
    // NVLS: NCCL sets it up on NVSwitch systems of compute capability 9.0+ for communicators of more than two
    // ranks, unless NCCL_NVLS_ENABLE=0 (NeMo's launcher and other stacks set it): stated on, the point; not
    // stated, the high end only
    const bool nvls = in.nvls_capable && in.nvls_enable != 0 && (in.nvls_enable == 1 || variant > 0);
    if (nvls) p.nvls = c.wide * k.nccl_nvls_bytes;
    return p;
}

std::string runtime_note(const estimate_input& in) {
    if (in.npu) return "CANN, HCCL, driver";
    const runtime_parts p = runtime_memory(in, 0);
    constexpr double gib = 1073741824.0;
    std::string s = fmt::format("CUDA context {:.2f} GiB ({})", p.context / gib,
                                eager_loading(in)       ? "eager module loading, every kernel loaded"
                                : in.module_loading > 0 ? "lazy module loading"
                                                        : "lazy module loading, PyTorch's default since 1.13");
    if (p.communicators > 0)
        s += fmt::format(" + NCCL buffers {:.2f} GiB ({} communicator{})", p.nccl / gib, p.communicators,
                         p.communicators == 1 ? "" : "s");
    if (p.nvls > 0) s += fmt::format(" + NVLS buffers {:.2f} GiB", p.nvls / gib);
    return s;
}

std::string runtime_interval_reason(const estimate_input& in) {
    if (in.npu) return "";
    const runtime_parts lo = runtime_memory(in, -1), hi = runtime_memory(in, 1), pt = runtime_memory(in, 0);
    if (lo.total() == pt.total() && hi.total() == pt.total()) return "";
    constexpr double gib = 1073741824.0;
    std::string s = fmt::format("memory outside the allocator {:.2f}-{:.2f} GiB", lo.total() / gib, hi.total() / gib);
    if (lo.context < pt.context)
        s += fmt::format("; eager module loading: the context measured from {:.2f} GiB (pytorch#86509) to {:.2f} GiB "
                         "(torch 1.10)",
                         lo.context / gib, pt.context / gib);
    if (hi.nvls > pt.nvls)
        s += fmt::format("; NCCL's NVLS buffers {:.2f} GiB where NVLink SHARP is in use (not with NCCL_NVLS_ENABLE=0)",
                         (hi.nvls - pt.nvls) / gib);
    return s;
}

}  // namespace oomdx::est
