// The model a torchtitan registry function trains: the file's own package names the module,
// the flavor the size; a flavor without a preset gives no model rather than another size of
// the family (end to end; skips when the binary is not built).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

const std::string k_dir = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/torchtitan/";

// facts --format json: the value of `name`, or null
nlohmann::json fact_of(const std::string& config, const std::string& name) {
    const auto r = oomdx::test::run_oomdx("facts --config " + k_dir + config + " --format json",
                                          oomdx::test::stderr_to::discard);
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& f : j["facts"])
        if (f["name"] == name) return f["value"];
    return nullptr;
}

}  // namespace

TEST_CASE("a registry function's model: package module and flavor, no fallback to another size") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    // llama3/config_registry.py imports model_registry from its own package: llama3 + 8B is a preset
    CHECK(fact_of("llama3/config_registry.py:llama3_8b", "job.model_name") == "llama3");
    CHECK(fact_of("llama3/config_registry.py:llama3_8b", "model.hidden_size") == 4096);
    // a flavor with no preset: no model (the family name alone would give some other size)
    CHECK(fact_of("llama3/config_registry.py:llama3_debugmodel", "job.model_flavor") == "debugmodel");
    CHECK(fact_of("llama3/config_registry.py:llama3_debugmodel", "model.hidden_size").is_null());
    // a registry copy that does not import model_registry from its own package names no module
    const auto copy = std::filesystem::temp_directory_path() / ("oomdx_registry_copy_" + std::to_string(::getpid()) + ".py");
    std::ofstream(copy) << "from torchtitan.models.llama3 import model_registry\n\n"
                           "def llama3_8b() -> Trainer.Config:\n"
                           "    return Trainer.Config(model_spec=model_registry(\"8B\"))\n";
    const auto r = oomdx::test::run_oomdx("facts --config " + copy.string() + ":llama3_8b --format json",
                                          oomdx::test::stderr_to::discard);
    std::filesystem::remove(copy);
    REQUIRE(r.rc == 0);
    bool named = false;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& f : doc["facts"]) named = named || f["name"] == "job.model_name";
    CHECK_FALSE(named);
}
