// Runs the built oomdx binary (OOMDX_BINARY) for end-to-end tests: exit code and output.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace oomdx::test {

struct run_result {
    int rc = -1;
    std::string out;
};

enum class stderr_to { out, discard };

// `args` is passed through the shell as written; stderr joins stdout unless discarded.
inline run_result run_oomdx(const std::string& args, stderr_to err = stderr_to::out) {
    const std::string cmd = std::string("'") + OOMDX_BINARY + "' " + args +
                            (err == stderr_to::out ? " 2>&1" : " 2>/dev/null");
    run_result r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

}  // namespace oomdx::test
