// Host RAM for offloaded states, per node (host_memory.h). The bytes per parameter follow the
// frameworks: DeepSpeed's CPU optimizer steps fp32 master weights with fp32 gradients on the
// host; its offload_param keeps the 16-bit parameters there too; torch FSDP's CPU offload keeps
// the sharded parameters, their gradients and the optimizer states; Megatron's optimizer offload
// and MindSpeed's swap move the master weights and the moments.
#include "engine/estimator/host_memory.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"

namespace oomdx {

std::string host_offload_sizing(const estimate_input& in) {
    if (in.params_offload && !in.params_nvme && in.zero_stage >= 3 && est::fsdp_cpu_offload(in)) return "fsdp";
    if (in.framework == train_framework::deepspeed) return "deepspeed";
    if (in.swap_optimizer) return "mindspeed";
    if (in.framework == train_framework::megatron) return "megatron";
    return "offload";
}

host_offload_need host_offload(const estimate_input& in, double params, double trainable) {
    host_offload_need need;
    const bool optimizer = (in.optimizer_offload && !in.optimizer_nvme) || in.swap_optimizer;
    const bool parameters = in.params_offload && !in.params_nvme && in.zero_stage >= 3;
    if (!optimizer && !parameters) return need;
    const bool deepspeed = in.framework == train_framework::deepspeed;
    const bool fsdp = parameters && est::fsdp_cpu_offload(in);
    const double master = in.master_weights ? double(in.master_bytes) : 0.0;
    // a weight as the model holds it: the training dtype, or the frozen base's load dtype under adapters
    const double weight = in.ft.kind == finetune_kind::full ? double(in.param_bytes) : double(in.ft.load_bytes);
    const double moments = est::optimizer_moment_bytes(in, double(in.ft.kind == finetune_kind::full ? in.param_bytes : in.ft.trainable_bytes),
                                                        in.master_weights);
    // bytes per trainable parameter on the host, and per parameter of the whole model
    double per_trainable = 0, per_param = 0;
    std::string what;
    if (fsdp) {
        const double stored = in.master_weights ? 4.0 : double(in.param_bytes);  // FSDP's sharded parameter
        per_trainable = stored + moments;                                          // its gradient
        per_param = stored;
        what = fmt::format("sharded parameters, gradients and optimizer states (torch FSDP CPU offload: {:.0f} B a "
                           "trainable parameter, {:.0f} B a frozen one)", per_param + per_trainable, per_param);
    } else {
        if (optimizer) {
            // DeepSpeed's CPU Adam steps on fp32 gradients it copies to the host; Megatron's offload and MindSpeed's
            // swap keep the master weights and moments there
            const double grads = deepspeed && in.optimizer_offload ? 4.0 : 0.0;
            per_trainable = master + moments + grads;
            what = fmt::format("optimizer states{}{} ({:.0f} B a trainable parameter)", master > 0 ? ", master weights" : "",
                               grads > 0 ? " and fp32 gradients" : "", per_trainable);
        }
        if (parameters) {
            per_param = weight;
            what += fmt::format("{}parameters ({:.0f} B each, ZeRO-3 offload_param)", what.empty() ? "" : " + ", per_param);
        }
    }
    // ZeRO and FSDP spread the states over every rank; otherwise each data-parallel replica keeps them whole
    const double world = double(std::max<std::int64_t>(1, in.world));
    const double mp = double(std::max<std::int64_t>(1, in.tp * in.pp));
    const double share = in.zero_stage >= 1 || fsdp ? 1.0 / world : 1.0 / mp;
    const double ranks = double(std::clamp<std::int64_t>(in.node_ranks, 1, in.world));
    need.bytes = (trainable * per_trainable + params * per_param) * share * ranks;
    need.what = what;
    need.sizing = host_offload_sizing(in);
    // DeepSpeed's sizing: x1.5 buffers; without zero.Init (ZeRO-1/2, or no ZeRO-3) every rank of the node first
    // loads the whole model before it is partitioned
    const double load = in.zero_stage >= 3 ? 0.0 : params * weight * ranks;
    need.high_bytes = std::max(need.bytes * estimator_k().host_buffer_factor, load);
    return need;
}

}  // namespace oomdx
