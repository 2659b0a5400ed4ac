// End-to-end helper: `oomdx diagnose --log` on a log written from text, its JSON report (the
// temporary file is removed; a usage or input error fails the test).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace oomdx::test {

// `args` follows `--log FILE --format json` (e.g. "--explain").
inline nlohmann::json diagnose_log_text(const std::string& text, const std::string& args = "") {
    static int calls = 0;
    const auto path = std::filesystem::temp_directory_path() /
                      ("oomdx_diagnose_text_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".log");
    std::ofstream(path) << text;
    const auto r = run_oomdx("diagnose --log " + path.string() + " --format json " + args, stderr_to::discard);
    std::filesystem::remove(path);
    REQUIRE(r.rc <= 1);
    return nlohmann::json::parse(r.out);
}

}  // namespace oomdx::test
