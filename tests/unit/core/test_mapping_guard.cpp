// A file that shrinks while it is mapped: reads of the lost pages end the run with the one-line
// error and exit code 2 (run in a child process), and populate() refuses the lost range.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/errors.h"
#include "engine/core/mapped_file.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

fs::path big_file(const std::string& name) {
    const fs::path p = fs::temp_directory_path() / (name + std::to_string(::getpid()));
    std::ofstream(p, std::ios::binary) << std::string(size_t{4} << 20, 'x');
    return p;
}

// MADV_POPULATE_READ came with Linux 5.14; before it populate() maps nothing and cannot refuse.
bool populate_supported() {
    void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return false;
    const bool ok = ::madvise(page, 4096, 22 /* MADV_POPULATE_READ */) == 0;
    ::munmap(page, 4096);
    return ok;
}

}  // namespace

TEST_CASE("a mapped file truncated meanwhile: populate throws, a read exits 2 with the file named") {
    const fs::path p = big_file("oomdx_shrink_");
    {
        mapped_file mf(p.string());
        mf.populate(0, mf.size());  // whole file present
        fs::resize_file(p, 4096);
        if (populate_supported()) CHECK_THROWS_AS(mf.populate(size_t{3} << 20, 4096), input_error);
        CHECK_NOTHROW(mf.populate(0, 4096));
    }
    std::fflush(nullptr);
    int pipe_fd[2];
    REQUIRE(::pipe(pipe_fd) == 0);
    const fs::path q = big_file("oomdx_shrink2_");
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::dup2(pipe_fd[1], STDERR_FILENO);
        mapped_file mf(q.string());
        fs::resize_file(q, 4096);
        volatile char c = mf.view()[size_t{3} << 20];  // SIGBUS: past the new end
        (void)c;
        ::_exit(0);
    }
    ::close(pipe_fd[1]);
    std::string err;
    char buf[512];
    for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<size_t>(n));
    ::close(pipe_fd[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(err.find("oomdx: error: " + q.string() + ": the file shrank while it was read") != std::string::npos);
    fs::remove(p);
    fs::remove(q);
}
