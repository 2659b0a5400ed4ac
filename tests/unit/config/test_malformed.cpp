// Hostile and malformed inputs: one clear input_error naming file:line, never a crash.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <fstream>
#include <random>
#include <string>

#include <unistd.h>

#include "engine/core/errors.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_dims.h"
#include "parsers/config/py_expr.h"
#include "parsers/config/raw_entry.h"
#include "parsers/config/shell_args.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

const std::string bad = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/bad/";

std::string error_of(const std::string& path, const std::string& hint = "") {
    try {
        parse_job_config(path, hint);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

std::string write(const std::string& name, const std::string& text) {
    fs::path d = fs::temp_directory_path() / ("oomdx_test_malformed_" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::ofstream(d / name, std::ios::binary) << text;
    return (d / name).string();
}

}  // namespace

TEST_CASE("malformed files give file:line and a clear message") {
    struct c { const char* file; const char* where; const char* words; };
    for (auto [file, where, words] : {c{"bad_value.toml", "bad_value.toml:3", "invalid TOML"},
                                      c{"trailing_comma.json", "trailing_comma.json:4", "invalid JSON"},
                                      c{"bad_indent.yaml", "bad_indent.yaml:3", "invalid YAML"},
                                      c{"unterminated_quote.sh", "unterminated_quote.sh:4", "unterminated double quote"},
                                      c{"unclosed_call.py", "unclosed_call.py:3", "never closed"},
                                      c{"no_return.py", "no_return.py:1", "no return"},
                                      c{"binary.toml", "binary.toml:3", "binary"}}) {
        CAPTURE(file);
        const std::string e = error_of(bad + file);
        CAPTURE(e);
        CHECK(e.find(where) != std::string::npos);
        CHECK(e.find(words) != std::string::npos);
        CHECK(e.find('\n') == std::string::npos);
    }
    CHECK(error_of(bad + "does_not_exist.toml").find("cannot open") != std::string::npos);
}

TEST_CASE("deep nesting is refused, not recursed into") {
    const std::string deep_json = write("deep.json", std::string(100000, '[') + std::string(100000, ']'));
    CHECK(error_of(deep_json).find("nested too deeply") != std::string::npos);
    const std::string deep_yaml = write("deep.yaml", "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
    CHECK(error_of(deep_yaml).find("nested too deeply") != std::string::npos);
    const std::string deep_py = write("deep.py", "def f():\n    return A(" + std::string(5000, '(') + "\n");
    CHECK(error_of(deep_py).find("deep.py:2") != std::string::npos);
    const std::string deep_toml = write("deep.toml", "a = " + std::string(5000, '[') + std::string(5000, ']') + "\n");
    CHECK_THROWS_AS(parse_job_config(deep_toml), input_error);
}

TEST_CASE("huge lines and odd bytes are handled") {
    std::string huge = "--micro-batch-size " + std::string(1 << 20, '9');
    const std::string f = write("huge.sh", "torchrun pretrain_gpt.py " + huge + " --seq-length 4096\n");
    job_config j = parse_job_config(f);
    // The absurd number is not an integer: reported, not crashed on.
    CHECK(j.find("training.seq_len")->val == value(4096));
    CHECK_FALSE(j.unknown_keys.empty());
    const std::string utf = write("utf.toml", "[training]\nlocal_batch_size = 2\n# \xff\xfe invalid utf-8\n");
    CHECK_THROWS_AS(parse_job_config(utf), input_error);
    const std::string empty = write("empty.json", "");
    CHECK(error_of(empty).find("empty.json") != std::string::npos);
}

TEST_CASE("random bytes never crash any parser") {
    std::mt19937 rng(1234);
    const std::string alphabet = "{}[]()\"'`$\\=:,.-_# \n\tabcXYZ019*+/";
    for (int round = 0; round < 300; ++round) {
        std::string text;
        const int n = 1 + static_cast<int>(rng() % 300);
        for (int i = 0; i < n; ++i)
            text += (rng() % 10 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
        if (text.find('\0') != std::string::npos) text.erase(text.find('\0'));
        for (const char* ext : {".toml", ".json", ".yaml", ".sh", ".py"}) {
            const std::string f = write(std::string("fuzz") + ext, text);
            try {
                parse_job_config(f);
            } catch (const input_error&) {
            } catch (const usage_error&) {
            }
        }
        try {
            py_source src(text, "fuzz.py");
            (void)src.keyed_calls();
        } catch (const input_error&) {
        }
        try {
            (void)parse_shell(text, "fuzz.sh");
        } catch (const input_error&) {
        }
    }
    CHECK(true);
}

namespace {
// The launch command's --flags of a script, by flag name.
std::map<std::string, raw_entry> launch_flags(const std::string& text) {
    shell_script s = parse_shell(text, "t.sh");
    const shell_command* cmd = launch_command(s);
    REQUIRE(cmd != nullptr);
    std::map<std::string, raw_entry> by;
    for (auto& e : args_to_entries(cmd->words, text, nullptr)) by[e.key] = e;
    return by;
}
}  // namespace

TEST_CASE("shell expansion: defaults, arithmetic, arrays, unknown variables") {
    const std::string text =
        "A=4\nB=${B:-8}\nC=$((A * B + 2))\nARR=(--x 1 --y \"two words\")\n"
        "run.py --a $A --b ${B} --c $C --d $UNSET --e $(hostname) \"${ARR[@]}\" --f=${A}0\n";
    auto by = launch_flags(text);
    CHECK(by["a"].val == value(4));
    CHECK(by["b"].val == value(8));
    CHECK(by["c"].val == value(34));
    CHECK_FALSE(by["d"].literal);
    CHECK_FALSE(by["e"].literal);
    CHECK(by["x"].val == value(1));
    CHECK(by["y"].val == value("two words"));
    CHECK(by["f"].val == value(40));
    CHECK(by["c"].line == 5);
}

TEST_CASE("shell: array and scalar appends, if/elif/else with known and unknown conditions") {
    // the shape of Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh: arrays appended to
    // arrays, "flag value" pairs quoted as one element, branches on variables with defaults
    const std::string text =
        "DTYPE=\"fp8\"\nTOK=${3:-\"MOCK\"}\nTRAIN=(--micro-batch-size 1)\nDDP=(--use-distributed-optimizer)\n"
        "TRAIN+=(\"${DDP[@]}\")\nEXTRA=\"--a 1\"\nEXTRA+=\" --b 2\"\n"
        "DT=()\nif [[ \"$DTYPE\" == \"fp8\" ]]; then\n  DT+=(\n    \"--fp8-format hybrid\"\n  )\nfi\n"
        "if [[ \"$TOK\" == \"x\" ]] || [[ -z \"$TOK\" ]]; then\n  V=1\nelif [ \"$TOK\" = MOCK ]; then V=2\nelse\n  V=3\nfi\n"
        "if [ -f /etc/cfg ]; then W=4; else W=5; fi\n"
        "if [[ 1 -gt 2 || \"$DTYPE\" == \"fp8\" ]] && [ 3 -ge 3 ]; then N=8; else N=9; fi\n"
        "if [ \"$UNSET_VAR\" = \"y\" ]; then if true; then Q=1; fi; fi\n"
        "fi\n"
        "run.py ${TRAIN[@]} ${DT[@]} $EXTRA --v $V --w $W --n $N\n";
    auto by = launch_flags(text);
    CHECK(by["micro-batch-size"].val == value(1));
    CHECK(by.count("use-distributed-optimizer") == 1);
    CHECK(by["fp8-format"].val == value("hybrid"));
    CHECK(by["a"].val == value(1));
    CHECK(by["b"].val == value(2));
    CHECK(by["v"].val == value(2));   // if false, elif true: else skipped
    CHECK(by["w"].val == value(5));   // a file test is unknown: both branches run, the last wins
    CHECK(by["n"].val == value(8));   // || inside [[ ]], && across tests: else skipped
    // inside [[ ]] && binds tighter than ||: true || (false && false) is true
    auto prec = launch_flags("if [[ 1 -eq 1 || 1 -eq 2 && 2 -eq 3 ]]; then P=1; else P=2; fi\nrun.py --p $P\n");
    CHECK(prec["p"].val == value(1));
    // between commands || and && are left-associative: (true || false) && false is false
    auto seq = launch_flags("if [[ 1 -eq 1 ]] || [[ 1 -eq 2 ]] && [[ 2 -eq 3 ]]; then P=1; else P=2; fi\nrun.py --p $P\n");
    CHECK(seq["p"].val == value(2));
    // an unmatched fi is ignored; a false branch skips what is inside it
    const std::string off = "A=1\nif [ \"$A\" = 2 ]; then\n  ARGS=(--x 9)\nelse\n  ARGS=(--x 3)\nfi\nrun.py ${ARGS[@]}\n";
    shell_script s2 = parse_shell(off, "t2.sh");
    auto e2 = args_to_entries(launch_command(s2)->words, off, nullptr);
    REQUIRE(e2.size() == 1);
    CHECK(e2[0].val == value(3));
}

TEST_CASE("python literal reader") {
    const std::string text =
        "def f():\n    return Cfg(a=1, b=-2.5, c='x' \"y\", d=[1, 2], e=None, f=True, g=Sub(h=0x10), i=k + 1,\n"
        "               j={'p': 1}, l=lambda: 3, m=[i for i in range(3)], n=1_000)\n";
    py_source src(text, "t.py");
    auto entries = src.function_result("f");
    std::map<std::string, raw_entry> by;
    for (const auto& e : entries) by[e.key] = e;
    CHECK(by["a"].val == value(1));
    CHECK(by["b"].val == value(-2.5));
    CHECK(by["c"].val == value("xy"));
    CHECK(by["d"].val == value(value::list_t{value(1), value(2)}));
    CHECK(by["e"].val.is_null());
    CHECK(by["f"].val == value(true));
    CHECK(by["g"].container);
    CHECK(by["g.h"].val == value(16));
    CHECK_FALSE(by["i"].literal);
    CHECK(by["i"].text == "k + 1");
    CHECK(by["j.p"].val == value(1));
    CHECK_FALSE(by["l"].literal);
    CHECK_FALSE(by["m"].literal);
    CHECK(by["n"].val == value(1000));
}

TEST_CASE("expansion bombs and deep block YAML are bounded") {
    std::string sh = "A0=xxxxxxxxxxxxxxxx\n";
    for (int i = 1; i < 40; ++i) sh += "A" + std::to_string(i) + "=\"$A" + std::to_string(i - 1) + "$A" + std::to_string(i - 1) + "\"\n";
    sh += "run.py --x $A39\n";
    const std::string bomb = write("bomb.sh", sh);
    CHECK(error_of(bomb).find("larger than 1 MiB") != std::string::npos);
    std::string y;
    for (int i = 0; i < 1500; ++i) y += std::string(static_cast<std::size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
    const std::string deep = write("deep_block.yaml", y);
    CHECK(error_of(deep).find("nested too deeply") != std::string::npos);
    const std::string inf = write("inf.json", "{\"train_micro_batch_size_per_gpu\": 1e999, \"zero_optimization\": {\"stage\": 3}}");
    CHECK(error_of(inf).find("inf.json:1: number out of range: 1e999") != std::string::npos);
}
