// The model config a job prints (HF transformers "Model config LlamaConfig {" + JSON lines): read
// whole, with the header's line, from any read path; a cut, overlong or hostile block is a
// warning, never part of the analysis.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "parsers/log/log_analyzer.h"
#include "parsers/log/printed_block.h"

using namespace oomdx;
using log_detail::printed_block_reader;
namespace fs = std::filesystem;

namespace {

const std::string k_fixture = std::string(OOMDX_TEST_DIR) + "/fixtures/logs/hf_model_config/llamafactory_llama3_8b_lora.log";

std::string read_all(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

std::string write_temp(const std::string& name, const std::string& text) {
    const fs::path p = fs::temp_directory_path() / ("oomdx_model_config_" + name);
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

bool warned(const log_analysis& a, const std::string& what) {
    for (const auto& w : a.warnings)
        if (w.find("printed model config not read") != std::string::npos && w.find(what) != std::string::npos) return true;
    return false;
}

const char* k_header = "[INFO|configuration_utils.py:800] 2024-11-15 05:48:02,121 >> Model config LlamaConfig {\n";

}  // namespace

TEST_CASE("printed block reader: closes on the brace at column 0, keeps the JSON") {
    printed_block_reader r;
    const std::string h = "x >> Model config LlamaConfig {";
    r.start(h, h.size() - 1);
    CHECK(r.feed("  \"hidden_size\": 4096,"));
    CHECK(r.feed("  \"rope_scaling\": {"));
    CHECK(r.feed("    \"factor\": 8.0"));
    CHECK(r.feed("  },"));  // a nested object's brace is indented: not the end
    CHECK(r.open());
    CHECK(r.feed("}"));
    CHECK(r.status() == printed_block_reader::state::closed);
    CHECK(r.text() == "{\n  \"hidden_size\": 4096,\n  \"rope_scaling\": {\n    \"factor\": 8.0\n  },\n}\n");
    CHECK_FALSE(r.feed("  \"after\": 1"));
}

TEST_CASE("printed block reader: launcher prefixes, other processes' lines, caps") {
    SUBCASE("torchrun --tee prefix on every line") {
        printed_block_reader r;
        const std::string h = "[default0]:[INFO|configuration_utils.py:800] >> Model config Qwen2Config {";
        r.start(h, h.size() - 1);
        CHECK(r.feed("[default0]:  \"hidden_size\": 896,"));
        CHECK_FALSE(r.feed("[default1]:  \"hidden_size\": 896,"));  // another rank's copy
        CHECK(r.feed("[default0]:}"));
        CHECK(r.text() == "{\n  \"hidden_size\": 896,\n}\n");
    }
    SUBCASE("a logger line between the JSON lines is skipped") {
        printed_block_reader r;
        r.start("Model config LlamaConfig {", 25);
        CHECK(r.feed("  \"a\": 1,"));
        CHECK_FALSE(r.feed("11/15/2024 05:48:02 - INFO - llamafactory.hparams.parser - Process rank: 3"));
        CHECK(r.feed("}"));
        CHECK(r.status() == printed_block_reader::state::closed);
    }
    SUBCASE("too many other lines: dropped") {
        printed_block_reader r;
        r.start("Model config LlamaConfig {", 25);
        for (int i = 0; i <= log_detail::k_block_foreign; ++i) r.feed("step 1 loss 2.0");
        CHECK(r.status() == printed_block_reader::state::dropped);
        CHECK(r.reason().find("other lines") != std::string::npos);
    }
    SUBCASE("over the cap: dropped, nothing kept") {
        printed_block_reader r;
        r.start("Model config LlamaConfig {", 25);
        const std::string line = "  \"k\": \"" + std::string(1000, 'v') + "\",";
        int fed = 0;
        while (r.open() && fed < 1000) r.feed(line), ++fed;
        CHECK(r.status() == printed_block_reader::state::dropped);
        CHECK(fed <= static_cast<int>(log_detail::k_block_cap / line.size()) + 1);
        CHECK(r.text().empty());
    }
    SUBCASE("a one-line repr is not a block") {
        printed_block_reader r;
        const std::string h = "Model config LlamaConfig { \"hidden_size\": 4096 }";
        r.start(h, h.find('{'));
        CHECK(r.status() == printed_block_reader::state::dropped);
    }
}

TEST_CASE("the LLaMA-Factory fixture: the first printed config, with its header line") {
    const log_analysis a = analyze_logs({k_fixture}, {});
    REQUIRE(a.model_config);
    CHECK(a.model_config->at.line == 3);
    CHECK(a.model_config->at.text.find("Model config LlamaConfig {") != std::string::npos);
    CHECK(a.model_config->text.rfind("{\n  \"_name_or_path\"", 0) == 0);
    CHECK(a.model_config->text.find("\"num_key_value_heads\": 8,") != std::string::npos);
    CHECK(a.model_config->text.ends_with("  \"vocab_size\": 128256\n}\n"));
    CHECK(a.warnings.empty());
    CHECK(a.source == "caching_allocator");  // the rest of the log is read as before
    bool batch = false;
    for (const auto& s : a.settings) batch = batch || (s.fact == "training.local_batch_size" && s.value == "8");
    CHECK(batch);
}

TEST_CASE("a block cut by the end of the log: a warning, no config") {
    std::string text = k_header;
    text += "  \"hidden_size\": 4096,\n  \"num_hidden_layers\": 32,\n";
    const log_analysis a = analyze_log_text(text, "cut.log", {});
    CHECK_FALSE(a.model_config);
    CHECK(warned(a, "ends inside"));
}

TEST_CASE("a block interrupted by the job's next lines: a warning, the lines still scanned") {
    std::string text = k_header;
    text += "  \"hidden_size\": 4096,\n";
    for (int i = 0; i < 80; ++i) text += "[INFO|trainer.py:2246] >>   Instantaneous batch size per device = 4\n";
    const log_analysis a = analyze_log_text(text, "interrupted.log", {});
    CHECK_FALSE(a.model_config);
    CHECK(warned(a, "other lines"));
    REQUIRE(a.settings.size() == 1);
    CHECK(a.settings[0].value == "4");
}

TEST_CASE("hostile input: a 10 MB unterminated block stays bounded, on every read path") {
    std::string text = k_header;
    text.reserve(11 << 20);
    while (text.size() < (10u << 20)) text += "  \"padding_0123456789\": 1234567890,\n";
    text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free.\n";
    const std::string path = write_temp("huge.log", text);
    for (unsigned threads : {1u, 2u}) {
        CAPTURE(threads);
        log_options o;
        o.threads = threads;
        o.chunk_bytes = 1 << 20;
        const log_analysis a = analyze_logs({path}, o);
        CHECK_FALSE(a.model_config);
        CHECK(warned(a, "64 KiB"));
        CHECK(a.source == "caching_allocator");  // the OOM after it is still found
    }
    fs::remove(path);
}

TEST_CASE("the parallel prefilter reads the block's lines from the file: same config") {
    // The fixture after 4 MiB of progress lines: the header falls in a prefiltered chunk.
    std::string text;
    while (text.size() < (4u << 20)) text += "  3%|▎         | 12/400 [00:10<05:00,  1.29it/s]\n";
    text += read_all(k_fixture);
    const std::string path = write_temp("parallel.log", text);
    log_options one, many;
    one.threads = 1;
    many.threads = 2;
    many.chunk_bytes = 1 << 20;
    const log_analysis a = analyze_logs({path}, one), b = analyze_logs({path}, many);
    REQUIRE(a.model_config);
    REQUIRE(b.model_config);
    CHECK(a.model_config->text == b.model_config->text);
    CHECK(a.model_config->at.line == b.model_config->at.line);
    CHECK(b.model_config->text.find("\"hidden_size\": 4096") != std::string::npos);
    fs::remove(path);
}
