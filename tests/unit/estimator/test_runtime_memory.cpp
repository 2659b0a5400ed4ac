// Memory outside the caching allocator (engine/estimator/runtime_memory.h, est60): the CUDA context by module
// loading, NCCL's buffers per communicator, NVLS on NVSwitch systems; each figure from knowledge/estimator.yaml.
#include <doctest/doctest.h>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimator_constants.h"
#include "engine/estimator/runtime_memory.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// Llama 3 8B under FSDP on `world` ranks of `device`, with the extra facts given.
estimate_input rt_job(std::int64_t world, const char* device, std::initializer_list<std::pair<const char*, value>> extra) {
    fact_store f;
    test_util::emit_llama8b(f);
    test_util::emit(f, "job.framework", "torchtitan");
    test_util::emit(f, "job.world_size", world);
    test_util::emit(f, "device.id", device);
    for (const auto& [k, v] : extra) test_util::emit(f, k, v);
    return from_facts(f);
}

}  // namespace

TEST_CASE("runtime memory: one GPU, the context alone; eager module loading before torch 1.13") {
    const estimator_constants& k = estimator_k();
    const estimate_input lazy = rt_job(1, "a100-80gb", {});
    CHECK(lazy.module_loading == 0);
    CHECK(est::runtime_memory(lazy, 0).total() == doctest::Approx(k.runtime_context_lazy_bytes));
    CHECK(est::runtime_memory(lazy, 0).communicators == 0);
    CHECK(est::runtime_interval_reason(lazy).empty());
    // torch 1.12 loads every kernel (no CUDA_MODULE_LOADING default): the guide's 1343 MiB, pytorch#86509's reading low
    const estimate_input eager = rt_job(1, "v100-16gb", {{"job.torch_version", "1.12.1"}});
    CHECK(eager.module_loading == -1);
    CHECK(est::runtime_memory(eager, 0).total() == doctest::Approx(k.runtime_context_eager_bytes));
    CHECK(est::runtime_memory(eager, -1).total() == doctest::Approx(k.runtime_context_eager_low_bytes));
    CHECK(!est::runtime_interval_reason(eager).empty());
    // torch 1.13 sets LAZY; a stated CUDA_MODULE_LOADING wins over the version
    CHECK(rt_job(1, "a100-80gb", {{"job.torch_version", "1.13.0"}}).module_loading == 1);
    CHECK(rt_job(1, "a100-80gb", {{"job.torch_version", "2.4.0"}, {"env.CUDA_MODULE_LOADING", "EAGER"}}).module_loading == -1);
    // a build dated before torch 1.13's release, the version not stated
    CHECK(rt_job(1, "a100-80gb", {{"job.framework_date", "2022-06-01"}}).module_loading == -1);
    CHECK(rt_job(1, "a100-80gb", {{"job.framework_date", "2023-06-01"}}).module_loading == 0);
}

TEST_CASE("runtime memory: one NCCL communicator per parallel dimension above one rank") {
    const estimator_constants& k = estimator_k();
    const estimate_input fsdp8 = rt_job(8, "a100-80gb", {});
    const est::runtime_parts p = est::runtime_memory(fsdp8, 0);
    CHECK(p.communicators == 1);
    CHECK(p.nccl == doctest::Approx(k.nccl_comm_bytes));
    // TP 2 x FSDP 4: a two-rank TP group and a four-rank data-parallel group
    const est::runtime_parts tp = est::runtime_memory(rt_job(8, "a100-80gb", {{"parallelism.tensor_parallel_degree", std::int64_t(2)}}), 0);
    CHECK(tp.communicators == 2);
    CHECK(tp.nccl == doctest::Approx(k.nccl_comm_pair_bytes + k.nccl_comm_bytes));
    // NCCL_BUFFSIZE 1 MiB: the Simple buffer's share shrinks (LL 512 KiB + LL128 4.69 MiB + Simple per connection)
    const est::runtime_parts small = est::runtime_memory(rt_job(8, "a100-80gb", {{"env.NCCL_BUFFSIZE", std::int64_t(1) << 20}}), 0);
    CHECK(small.nccl == doctest::Approx(k.nccl_comm_bytes * (524288.0 + 4915200.0 + 1048576.0) / (524288.0 + 4915200.0 + 4194304.0)));
    // the device peak carries it: 8 ranks hold the communicator on top of one rank's context
    const estimate_result r8 = estimate(fsdp8);
    CHECK(r8.runtime_bytes == std::int64_t(k.runtime_context_lazy_bytes + k.nccl_comm_bytes));
    CHECK(r8.device_peak_bytes - r8.reserved_peak_bytes == r8.runtime_bytes);
    CHECK(r8.runtime_note.find("1 communicator") != std::string::npos);
}

TEST_CASE("runtime memory: NVLS buffers on an NVSwitch H100 node are the high end unless NCCL_NVLS_ENABLE says") {
    const estimator_constants& k = estimator_k();
    const estimate_input h100 = rt_job(8, "h100-80gb", {});
    CHECK(h100.nvls_capable);
    CHECK(est::runtime_memory(h100, 0).nvls == 0.0);
    CHECK(est::runtime_memory(h100, 1).nvls == doctest::Approx(k.nccl_nvls_bytes));
    CHECK(est::runtime_interval_reason(h100).find("NVLS") != std::string::npos);
    const estimate_result r = estimate(h100);
    CHECK(r.high_bytes - r.device_peak_bytes >= std::int64_t(k.nccl_nvls_bytes));
    // stated on: in the point; stated off: nowhere; an A100 has none; two ranks use none
    CHECK(est::runtime_memory(rt_job(8, "h100-80gb", {{"env.NCCL_NVLS_ENABLE", std::int64_t(1)}}), 0).nvls ==
          doctest::Approx(k.nccl_nvls_bytes));
    CHECK(est::runtime_memory(rt_job(8, "h100-80gb", {{"env.NCCL_NVLS_ENABLE", std::int64_t(0)}}), 1).nvls == 0.0);
    CHECK(est::runtime_memory(rt_job(8, "a100-80gb", {}), 1).nvls == 0.0);
    CHECK(est::runtime_memory(rt_job(2, "h100-80gb", {}), 1).nvls == 0.0);
}
