// The parallel prefilter: chunked, multi-threaded reads give exactly the single-threaded result,
// whatever the chunk size and wherever lines, '\r' redraws, long lines and failures fall.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/errors.h"
#include "parsers/log/log_analyzer.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

// Several frameworks and ranks, tqdm redraws, CRLF, a line over the 64 KiB match cap, a line
// over four chunks, NCCL lines that repeat, a failure in the middle and one at the end.
std::string training_log(bool trailing_newline, int steps = 120) {
    std::string s = "[titan] 2026-01-01 00:00:00,000 - root - INFO - world_size 8\n";
    for (int step = 1; step <= steps; ++step) {
        for (int r = 0; r < 8; ++r) {
            s += "[rank" + std::to_string(r) + "]:[titan] 2026-01-01 - root - INFO - \x1b[31mstep: " +
                 std::to_string(step) + "  \x1b[32mloss:  2.0  \x1b[38;2;180;60;0mmemory: " +
                 std::to_string(40 + step / 10 + r) + ".00GiB(50.00%)  \x1b[34mtps: 1,234\x1b[39m\n";
            if (r % 4 == 1)
                s += "[rank" + std::to_string(r) + "]: MA 12." + std::to_string(step % 10) +
                     " GB         Max_MA 14.02 GB         CA 15.3 GB         Max_CA 16 GB \r\n";
            if (r == 2)
                s += "host-0:1000" + std::to_string(r) + ":2000 [2] NCCL INFO Channel 03/0 : 2[2] -> 3[3] via P2P\n";
        }
        s += " 40%|####      | " + std::to_string(step) + "/300 [00:10<00:15,  3.9it/s]\r";
        if (step == 30) s += "[rank3]: " + std::string(70000, 'x') + " step: 7 loss: 1\n";
        if (step == 60) s += std::string(9000, 'y') + "\n";
        if (step == 90)
            // a figure cut in two by a hard wrap: its next line is read from the mapping on the threads' path
            s += "[rank6]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 6 has a "
                 "total capacity of 79.10 GiB of which 1.21 GiB is free. Of the allocated memory 70.50 G\r\n"
                 "iB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n";
    }
    s += "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 5 has a total "
         "capacity of 79.10 GiB of which 0.50 GiB is free.";
    if (trailing_newline) s += "\n";
    return s;
}

std::string analyze(const fs::path& p, unsigned threads, size_t chunk) {
    log_options o;
    o.threads = threads;
    o.chunk_bytes = chunk;
    return to_json(analyze_logs({p.string()}, o)).dump();
}

}  // namespace

TEST_CASE("chunked parallel reads equal the single-threaded pass") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_log_parallel_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (bool nl : {true, false}) {
        const fs::path p = dir / (nl ? "with_newline.log" : "without_newline.log");
        {
            std::ofstream(p, std::ios::binary) << training_log(nl);
        }
        const std::string serial = analyze(p, 1, size_t{1} << 20);
        CHECK(serial.find("\"rank\":6") != std::string::npos);
        CHECK(serial.find("\"allocated_bytes\":75698798592") != std::string::npos);  // 70.50 GiB, joined
        for (size_t chunk : {64, 1000, 2048, 4096, 65536})
            for (unsigned threads : {2u, 3u, 0u}) {
                CAPTURE(nl);
                CAPTURE(chunk);
                CAPTURE(threads);
                CHECK(analyze(p, threads, chunk) == serial);
            }
    }
    fs::remove_all(dir);
}

TEST_CASE("a gzip log inflated on a helper thread equals the plain file; truncation is an error") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_log_gzip_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string text = training_log(true, 4000);  // about 5.7 MB: the block ring wraps
    REQUIRE(text.size() > (size_t{5} << 20));
    const fs::path plain = dir / "train.log", packed = dir / "train.gz";
    std::ofstream(plain, std::ios::binary) << text;
    gzFile g = gzopen(packed.c_str(), "wb");
    REQUIRE(g);
    REQUIRE(gzwrite(g, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    gzclose(g);
    std::string from_gz = to_json(analyze_logs({packed.string()})).dump();
    for (size_t at; (at = from_gz.find(packed.string())) != std::string::npos;)
        from_gz.replace(at, packed.string().size(), plain.string());
    for (size_t at; (at = from_gz.find("\"compressed\":true")) != std::string::npos;)
        from_gz.replace(at, 17, "\"compressed\":false");
    CHECK(from_gz == analyze(plain, 1, size_t{1} << 20));

    const auto size = fs::file_size(packed);
    fs::resize_file(packed, size / 2);
    std::string error;
    try {
        analyze_logs({packed.string()});
    } catch (const input_error& e) {
        error = e.what();
    }
    CHECK(error.find("gzip") != std::string::npos);
    CHECK(error.find(packed.string()) != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("repeated NCCL peer lines map their process to its rank in chunked reads too") {
    // Two processes print the same Channel lines again and again, interleaved with step lines;
    // the failure names only the process id. A repeated line reuses the previous one's fields.
    const fs::path dir = fs::temp_directory_path() / ("oomdx_log_nccl_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string s;
    for (int step = 1; step <= 400; ++step) {
        s += "[rank0]:[titan] 2026-01-01 - root - INFO - step: " + std::to_string(step) +
             "  loss:  2.0  memory: 40.00GiB(50.00%)  tps: 1,234\n";
        s += "h:77:80 [1] NCCL INFO Channel 00/0 : 5[1] -> 6[2] via P2P/IPC\n";
        s += "h:78:80 [2] NCCL INFO Channel 00/0 : 6[2] -> 7[3] via P2P/IPC\n";
        s += "h:78:80 [2] NCCL INFO Channel 00/0 : 6[2] -> 7[3] via P2P/IPC\n";
    }
    s += "h:78:81 [2] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n";
    const fs::path p = dir / "nccl.log";
    std::ofstream(p, std::ios::binary) << s;
    const std::string serial = analyze(p, 1, size_t{1} << 20);
    CHECK(serial.find("\"rank\":6") != std::string::npos);
    for (size_t chunk : {100, 4096, 65536})
        for (unsigned threads : {2u, 3u}) {
            CAPTURE(chunk);
            CAPTURE(threads);
            CHECK(analyze(p, threads, chunk) == serial);
        }
    fs::remove_all(dir);
}

TEST_CASE("a launch command continued over several lines is read whole on the parallel path too") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_log_launch_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / "launch.log";
    {
        // the continuation lines hold no signature literal: the prefilter threads never pass them on
        std::ofstream(p, std::ios::binary) << "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py \\\n"
                                              "    --finetuning_type full \\\n"
                                              "    --per_device_train_batch_size 4 \\\n"
                                              "    --fp16\n"
                                           << training_log(true);
    }
    auto launch = [&](unsigned threads, size_t chunk) {
        log_options o;
        o.threads = threads;
        o.chunk_bytes = chunk;
        return analyze_logs({p.string()}, o).launch_command;
    };
    const std::string serial = launch(1, size_t{1} << 20);
    CHECK(serial.find("--per_device_train_batch_size 4") != std::string::npos);
    CHECK(serial.find("--fp16") != std::string::npos);
    CHECK(serial.find("titan") == std::string::npos);
    for (size_t chunk : {64, 4096, 65536})
        for (unsigned threads : {2u, 3u}) {
            CAPTURE(chunk);
            CAPTURE(threads);
            CHECK(launch(threads, chunk) == serial);
        }
    fs::remove_all(dir);
}

TEST_CASE("lines of one shape whose digits spell a literal's digits: chunked reads equal the serial pass") {
    // Step numbers run through 3090 and 4090 (device-name literals) and the loss reads 0004 now and
    // then (EL0004's digits, another shape's): the prefilter's memo serves most lines and must
    // give each path the hits a plain search gives.
    const fs::path dir = fs::temp_directory_path() / ("oomdx_log_parallel_memo_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / "steps.log";
    {
        std::ofstream out(p, std::ios::binary);
        for (int step = 3000; step <= 4200; ++step)
            for (int r = 0; r < 2; ++r) {
                char loss[16];
                std::snprintf(loss, sizeof loss, "%05d", step % 7 == 0 ? 4 : step % 97);
                out << "[rank" << r << "]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: " << step
                    << "  loss:  2." << loss << "  memory: " << 40 + r << ".0" << step % 10 << "GiB(50.00%)\n";
            }
        out << "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
               "capacity of 79.10 GiB of which 1.21 GiB is free.\n";
    }
    const std::string serial = analyze(p, 1, size_t{1} << 20);
    CHECK(serial.find("\"last_logged_step\":4200") != std::string::npos);
    for (size_t chunk : {1000, 4096, 65536})
        for (unsigned threads : {2u, 3u}) {
            CAPTURE(chunk);
            CAPTURE(threads);
            CHECK(analyze(p, threads, chunk) == serial);
        }
    fs::remove_all(dir);
}
