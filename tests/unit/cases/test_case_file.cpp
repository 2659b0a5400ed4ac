// Strict validation of case files: every problem is reported, naming the file.
#include <doctest/doctest.h>

#include <string>

#include "case_file.h"

using namespace oomdx::cases;

namespace {

const char* k_valid = R"(id: sample-case
source: https://github.com/example/repo/issues/1
confirmed: "comment 2 by the reporter: batch size 1 fixed it"
kind: micro_batch
inputs:
  device: a100-80gb
  world_size: 8
  model: llama3-8b
  framework: hf_trainer
  sets: {training.local_batch_size: 4, training.seq_len: 4096}
log: |
  torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
fix: [reduce_micro_batch]
)";

load_outcome parse(const std::string& text) { return parse_case(text, "tests/cases/sample-case.yaml", catalog::shipped()); }

bool mentions(const load_outcome& o, const std::string& what) {
    for (const auto& e : o.errors)
        if (e.find("sample-case.yaml") != std::string::npos && e.find(what) != std::string::npos) return true;
    return false;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("cases: a complete case loads with its inputs") {
    const load_outcome o = parse(k_valid);
    CHECK(o.ok());
    CHECK(o.tc.id == "sample-case");
    CHECK(o.tc.world_size == 8);
    CHECK(o.tc.set_args() == std::vector<std::string>{"training.local_batch_size=4", "training.seq_len=4096"});
    CHECK(o.tc.fix == std::vector<std::string>{"reduce_micro_batch"});
    CHECK(o.tc.log.find("Tried to allocate") != std::string::npos);
}

TEST_CASE("cases: unknown keys, ids and actions are errors naming the file") {
    CHECK(mentions(parse(std::string(k_valid) + "extra: 1\n"), "unknown key 'extra'"));
    CHECK(mentions(parse(replaced(k_valid, "world_size: 8", "ranks: 8")), "unknown inputs key 'ranks'"));
    CHECK(mentions(parse(replaced(k_valid, "[reduce_micro_batch]", "[buy_more_gpus]")), "unknown action 'buy_more_gpus'"));
    CHECK(mentions(parse(replaced(k_valid, "a100-80gb", "a100")), "unknown device id 'a100'"));
    CHECK(mentions(parse(replaced(k_valid, "llama3-8b", "llama-3-8b")), "unknown model preset 'llama-3-8b'"));
    CHECK(mentions(parse(replaced(k_valid, "hf_trainer", "keras")), "unknown framework 'keras'"));
    CHECK(mentions(parse(replaced(k_valid, "training.seq_len", "seq_len")), "unknown canonical key 'seq_len'"));
    CHECK(mentions(parse(replaced(k_valid, "kind: micro_batch", "kind: batch")), "unknown kind 'batch'"));
    CHECK(mentions(parse(replaced(k_valid, "world_size: 8", "world_size: -2")), "world_size must be a positive integer"));
    CHECK(mentions(parse(replaced(k_valid, "id: sample-case", "id: other-case")), "differs from the file name"));
    CHECK(mentions(parse(replaced(k_valid, "https://github.com", "http://github.com")), "https://"));
}

TEST_CASE("cases: source, log and fix are required") {
    CHECK(mentions(parse(replaced(k_valid, "source: https://github.com/example/repo/issues/1\n", "")), "missing 'source'"));
    CHECK(mentions(parse(replaced(k_valid, "fix: [reduce_micro_batch]\n", "")), "missing 'fix'"));
    CHECK(mentions(parse(replaced(k_valid, "fix: [reduce_micro_batch]", "fix: []")), "non-empty list"));
    const std::string no_log = replaced(k_valid, "log: |\n  torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", "");
    CHECK(mentions(parse(no_log), "missing 'log'"));
}

TEST_CASE("cases: text that is not a YAML mapping is one located error") {
    const load_outcome bad = parse("id: [unclosed\n");
    REQUIRE(bad.errors.size() == 1);
    CHECK(mentions(bad, "not valid YAML"));
    CHECK(mentions(parse("- a list\n"), "a case is a YAML mapping"));
}

TEST_CASE("cases: a config fixture is a file name and the posted text") {
    const std::string with_config = std::string(k_valid) +
                                    "config:\n  file: llama3_lora_sft.yaml\n  text: |\n    cutoff_len: 4096\n"
                                    "    per_device_train_batch_size: 4\n";
    const load_outcome o = parse(with_config);
    CHECK(o.ok());
    CHECK(o.tc.config_file == "llama3_lora_sft.yaml");
    CHECK(o.tc.config_text == "cutoff_len: 4096\nper_device_train_batch_size: 4\n");
    CHECK(parse(k_valid).tc.config_file.empty());
    const std::string what = "'config' must be a mapping";
    CHECK(mentions(parse(std::string(k_valid) + "config: train.yaml\n"), what));
    CHECK(mentions(parse(std::string(k_valid) + "config:\n  file: train.yaml\n"), what));
    CHECK(mentions(parse(replaced(with_config, "llama3_lora_sft.yaml", "../etc/train.yaml")), "'config.file' must be a base name"));
    CHECK(mentions(parse(replaced(with_config, "llama3_lora_sft.yaml", "train")), "'config.file' must be a base name"));
    CHECK(mentions(parse(std::string(k_valid) + "config:\n  file: train.yaml\n  text: ''\n"), "'config.text' must be a non-empty"));
}
