// cases77: a recommendation's expected figure with no device given has no budget to be judged against: the verdict
// says so instead of "still over the budget" (DeepSpeed#4002 as posted: a SIGBUS, the /dev/shm advice, no device).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/run_oomdx.h"

namespace {

std::filesystem::path c77_log() {
    const auto dir = std::filesystem::temp_directory_path() / ("oomdx_c77_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "ds_chat.log")
        << "[BUG] Have \"exits with return code = -7\" without any error message\n"
           "[2023-07-20 08:31:05,714] [INFO] [runner.py:555:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch "
           "--world_info=eyJsb2NhbGhvc3QiOiBbMCwgMV19 --master_addr=127.0.0.1 --master_port=29500 main.py --data_split 2,4,4 "
           "--model_name_or_path facebook/opt-1.3b --per_device_train_batch_size 8 --max_seq_len 512 --zero_stage 2 --deepspeed\n";
    return dir / "ds_chat.log";
}

bool c77_has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("cases77: with no device the expected figure's verdict is 'not judged', with one it is judged") {
    const std::string log = c77_log().string();
    const auto none = oomdx::test::run_oomdx("diagnose -l '" + log + "' -m opt-1.3b", oomdx::test::stderr_to::discard);
    CHECK(c77_has(none.out, "no device given, so whether it fits is not judged"));
    CHECK_FALSE(c77_has(none.out, "still over the budget"));
    // the launcher's cmd line is read: DeepSpeed-Chat's 8 x 512 tokens (not 2048 assumed)
    CHECK(c77_has(none.out, "4096 tokens"));
    const auto zh = oomdx::test::run_oomdx("diagnose -l '" + log + "' -m opt-1.3b --lang zh", oomdx::test::stderr_to::discard);
    CHECK(c77_has(zh.out, "未给出设备，无法判断是否放得下"));
    // the other side: a device gives a budget, and the verdict is judged
    const auto dev = oomdx::test::run_oomdx("diagnose -l '" + log + "' -m opt-1.3b -d a100-40gb -w 4",
                                            oomdx::test::stderr_to::discard);
    CHECK_FALSE(c77_has(dev.out, "not judged"));
    CHECK((c77_has(dev.out, " - fits") || c77_has(dev.out, "still over the budget")));
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(log).parent_path(), ec);
}
