// A device the log names stands in for --device only where nothing gave a capacity (end to end;
// skips when the binary is not built).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

// diagnose --log (a file with `text`) --format json --explain: the device.* facts by name.
std::map<std::string, nlohmann::json> device_facts_of_log(const std::string& text, const std::string& extra = "") {
    const auto path = std::filesystem::temp_directory_path() / "oomdx_device_from_log.log";
    std::ofstream(path) << text;
    const auto r = oomdx::test::run_oomdx("diagnose --log " + path.string() + " --model llama2-70b --world-size 7 " + extra +
                                              " --format json --explain",
                                          oomdx::test::stderr_to::discard);
    std::filesystem::remove(path);
    REQUIRE(r.rc <= 1);
    const auto j = nlohmann::json::parse(r.out);
    std::map<std::string, nlohmann::json> by;
    for (const auto& f : j["explain"]["facts"])
        if (f["name"].get<std::string>().rfind("device.", 0) == 0) by[f["name"].get<std::string>()] = f;
    return by;
}

}  // namespace

TEST_CASE("a device named in the log gives the capacity when nothing else does") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto d = device_facts_of_log("Tested on without fsdp_cpu_offload, it runs OOM on 7x A100 GPUs and crashes\n");
    CHECK(d["device.id"]["value"] == "a100-80gb");
    CHECK(d["device.capacity_source"]["value"] == "log");
    CHECK(d["device.capacity_bytes"]["source"].get<std::string>().ends_with(".log:1"));

    d = device_facts_of_log("|   0  Tesla V100-SXM2-16GB           On  | 00000000:00:1E.0 Off |                    0 |\n"
                            "RuntimeError: CUDA out of memory.\n");
    CHECK(d["device.id"]["value"] == "v100-16gb");

    // --device wins over the log's name
    d = device_facts_of_log("it runs OOM on 7x A100 GPUs\n", "--device h100");
    CHECK(d["device.id"]["value"] == "h100-80gb");
    CHECK(d["device.capacity_source"]["value"] == "catalog");

    // the OOM message's own capacity wins over the name
    d = device_facts_of_log("training on 8 x H100 80GB with FSDP\n"
                            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                            "capacity of 39.38 GiB of which 1.00 GiB is free.\n");
    CHECK(d["device.capacity_source"]["value"] == "oom_message");
    CHECK(d.count("device.id") == 0);

    // --set job.device_named is the user's naming, not the log's
    d = device_facts_of_log("RuntimeError: CUDA out of memory.\n", "--set job.device_named=3090");
    CHECK(d["device.id"]["value"] == "rtx3090");
    CHECK(d["device.capacity_source"]["value"] == "user");

    // a question names no device
    d = device_facts_of_log("Would it fit on a 4090? It runs out of memory on my machine.\n");
    CHECK(d.count("device.capacity_bytes") == 0);
}
