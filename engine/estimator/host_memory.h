// What offloading puts in the host's RAM, per node: the states a job moves off its devices
// (DeepSpeed ZeRO-Offload to CPU, ZeRO-3 offload_param, torch FSDP CPU offload, Megatron / MindSpeed
// optimizer offload or swap). The device estimate drops them; the node has to hold them.
#pragma once

#include <string>

namespace oomdx {

struct estimate_input;

struct host_offload_need {
    double bytes = 0;       // the offloaded states on one node
    double high_bytes = 0;  // DeepSpeed's own sizing: x1.5 for pinned and staging buffers, and not below the
                            // whole model that every rank of the node loads before it is partitioned
    std::string what;       // which states, in words, with their bytes per parameter
    std::string sizing;     // whose layout the figure follows (rev32): deepspeed, fsdp, megatron, mindspeed, offload
};

// Whose layout a job's offloaded states follow (the report names it: phrase report.host_sizing.<id>).
std::string host_offload_sizing(const estimate_input& in);

// `params`: all parameters of the model; `trainable`: those with gradients and optimizer states.
host_offload_need host_offload(const estimate_input& in, double params, double trainable);

}  // namespace oomdx
