// Round est63: a Megatron script with no --vocab-size takes the vocabulary of the tokenizer it names (a model preset or
// a local HF directory), padded as Megatron pads it (megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding:
// a multiple of --make-vocab-size-divisible-by x TP); a tokenizer that resolves to nothing is said to be assumed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_sources.h"
#include "parsers/config/tokenizer_vocab.h"

using namespace oomdx;

namespace {

// The Megatron-LM Llama 3 8B fixture (TP 2, PP 2, 2 x 8 GPUs, --tokenizer-type HuggingFaceTokenizer) with its
// tokenizer named by the hub id instead of the script's $2: the layout of rev36's report
std::string tokenizer_script() {
    std::ifstream in(std::string(OOMDX_TEST_DIR) + "/fixtures/configs/megatron/pretrain_llama3_8b.sh");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string var = "--tokenizer-model $TOKENIZER_MODEL";
    const auto at = text.find(var);
    REQUIRE(at != std::string::npos);
    text.replace(at, var.size(), "--tokenizer-model meta-llama/Meta-Llama-3-8B");
    const auto path = std::filesystem::temp_directory_path() / "oomdx_est63_pretrain_llama3_8b.sh";
    std::ofstream(path) << text;
    return path.string();
}

estimate_input tokenizer_input(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--num-layers", "32", "--hidden-size", "4096", "--num-attention-heads", "32",
                                     "--seq-length", "4096", "--micro-batch-size", "1", "--bf16"};
    args.insert(args.end(), extra.begin(), extra.end());
    job_config job = parse_cli_args(args, "megatron", "test", 0);
    fact_store f;
    emit_facts(job, f);
    return from_facts(f);
}

bool assumes_text(const estimate_input& in, const std::string& part) {
    return std::any_of(in.assumptions.begin(), in.assumptions.end(),
                       [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("est63: Megatron's padding of the tokenizer's vocabulary") {
    CHECK(megatron_padded_vocab(128256, 128, 1) == 128256);  // 1002 x 128
    CHECK(megatron_padded_vocab(128256, 128, 8) == 129024);  // 126 x 1024
    CHECK(megatron_padded_vocab(50257, 128, 1) == 50304);    // GPT-2 BPE
    CHECK(megatron_padded_vocab(32000, 128, 8) == 32768);
    CHECK(megatron_padded_vocab(151643, 1, 4) == 151644);
}

TEST_CASE("est63: the script's HF tokenizer sets the vocabulary (Llama 3 8B, TP 2 PP 2)") {
    const std::string script = tokenizer_script();
    job_config job = parse_job_config(script);
    fact_store f;
    emit_facts(job, f);
    const estimate_input in = from_facts(f);
    CHECK(in.model.vocab == 128256);  // 128256 is a multiple of 128 x 2
    CHECK(in.complete);
    CHECK(assumes_text(in, "the tokenizer meta-llama/Meta-Llama-3-8B has 128256 tokens (preset llama3-8b)"));
    CHECK(assumes_text(in, "make-vocab-size-divisible-by 128 x TP 2"));
    CHECK_FALSE(assumes_text(in, "model dims missing"));
    // the same script as the model source (`--model script.sh`) no longer throws
    CHECK(load_model(script).vocab_size == 128256);
    std::filesystem::remove(script);
}

TEST_CASE("est63: padding follows TP and --make-vocab-size-divisible-by") {
    const estimate_input tp8 = tokenizer_input({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model",
                                                "meta-llama/Llama-2-7b-hf", "--tensor-model-parallel-size", "8"});
    CHECK(tp8.model.vocab == 32768);  // 32000 up to a multiple of 1024
    const estimate_input div1 = tokenizer_input({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model",
                                                 "meta-llama/Llama-2-7b-hf", "--tensor-model-parallel-size", "8",
                                                 "--make-vocab-size-divisible-by", "1"});
    CHECK(div1.model.vocab == 32000);  // a multiple of 8
    const estimate_input gpt2 = tokenizer_input({"--tokenizer-type", "GPT2BPETokenizer", "--vocab-file", "gpt2-vocab.json",
                                                 "--merge-file", "gpt2-merges.txt"});
    CHECK(gpt2.model.vocab == 50304);
    // an explicit --vocab-size wins, as before
    const estimate_input given = tokenizer_input({"--tokenizer-model", "meta-llama/Meta-Llama-3-8B", "--vocab-size", "64000"});
    CHECK(given.model.vocab == 64000);
}

TEST_CASE("est63: a local HF tokenizer directory's config.json") {
    const auto dir = std::filesystem::temp_directory_path() / "oomdx_est63_tokenizer";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 5632, "vocab_size": 49953})";
    std::ofstream(dir / "tokenizer.model") << "x";
    const estimate_input in = tokenizer_input({"--tokenizer-type", "Llama2Tokenizer", "--tokenizer-model",
                                               (dir / "tokenizer.model").string(), "--tensor-model-parallel-size", "2"});
    CHECK(in.model.vocab == 50176);  // 49953 up to a multiple of 256
    CHECK(assumes_text(in, (dir / "config.json").string()));
    std::filesystem::remove_all(dir);
}

TEST_CASE("est63: a tokenizer that resolves to nothing is an assumed vocabulary") {
    const estimate_input in = tokenizer_input({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model",
                                               "/nonexistent/our-private-tokenizer"});
    CHECK(in.model.vocab == 32000);
    CHECK_FALSE(in.complete);
    CHECK(assumes_text(in, "model.vocab_size = 32000 assumed: the tokenizer /nonexistent/our-private-tokenizer is neither"));
}

TEST_CASE("est63: distributed-optimizer instances and --qk-layernorm from the script") {
    const std::vector<std::string> common = {"--tokenizer-model", "meta-llama/Llama-2-7b-hf", "--use-distributed-optimizer",
                                             "--nproc_per_node", "8", "--tensor-model-parallel-size", "2"};
    std::vector<std::string> two = common;
    two.insert(two.end(), {"--num-distributed-optimizer-instances", "2", "--qk-layernorm"});
    const estimate_input one_in = tokenizer_input(common), two_in = tokenizer_input(two);
    CHECK(one_in.dist_opt_instances == 1);
    CHECK(two_in.dist_opt_instances == 2);
    CHECK_FALSE(one_in.model.qk_norm);
    CHECK(two_in.model.qk_norm);
    // DP 4 in two instances: the fp32 master weights and both moments are sharded over 2 ranks instead of 4
    estimate_input no_qk = two_in;
    no_qk.model.qk_norm = false;
    const estimate_result r1 = estimate(one_in), r2 = estimate(no_qk);
    const double s1 = double(r1.component("optimizer") + r1.component("master_weights"));
    const double s2 = double(r2.component("optimizer") + r2.component("master_weights"));
    CHECK(s1 > 0);
    CHECK(s2 == doctest::Approx(2.0 * s1).epsilon(0.001));
}
