#include <doctest/doctest.h>
#include <unistd.h>

#include "engine/core/fact_store.h"
#include "engine/rules/expression.h"
#include "test_helpers.h"

using namespace oomdx;

namespace {

struct fixture {
    vocabulary vocab = test::small_vocab();
    fact_store facts{&vocab};
    name_resolver res;
    fixture() { res.vocab = &vocab; }
    truth eval(const std::string& text) {
        parsed_expr e = parse_expression(text, res);
        REQUIRE_MESSAGE(e.ok(), (e.errors.empty() ? "" : e.errors[0].message));
        return evaluate_condition(*e.root, facts);
    }
    value val(const std::string& text) {
        parsed_expr e = parse_expression(text, res);
        REQUIRE(e.ok());
        return evaluate(*e.root, facts).val;
    }
    expr_error err(const std::string& text) {
        parsed_expr e = parse_expression(text, res);
        REQUIRE_FALSE(e.ok());
        return e.errors.at(0);
    }
    void set(const std::string& n, value v) { facts.emit(n, std::move(v), provenance{"test"}); }
};

}  // namespace

TEST_CASE("arithmetic precedence: * before +, parentheses, unary minus") {
    fixture f;
    CHECK(f.val("1 + 2 * 3") == value(7));
    CHECK(f.val("(1 + 2) * 3") == value(9));
    CHECK(f.val("-2 * 3 + 10") == value(4));
    CHECK(f.val("10 - 4 - 3") == value(3));  // left associative
    CHECK(f.val("7 / 2") == value(3.5));    // inexact division gives a number
    CHECK(f.val("8 / 2").is_integer());     // exact division stays integer
    CHECK(f.val("7 % 4") == value(3));
}

TEST_CASE("logic precedence: not > and > or") {
    fixture f;
    CHECK(f.eval("true or false and false") == truth::true_);
    CHECK(f.eval("(true or false) and false") == truth::false_);
    CHECK(f.eval("not false and false") == truth::false_);
    CHECK(f.eval("not (false and false)") == truth::true_);
}

TEST_CASE("size literals are bytes") {
    fixture f;
    CHECK(f.val("2 GiB") == value(std::int64_t{2} << 30));
    CHECK(f.val("1.5 MiB") == value(std::int64_t{1572864}));
    CHECK(f.val("1 GB") == value(std::int64_t{1000000000}));
    f.set("mem.bytes", value(std::int64_t{3} << 30));
    f.set("cap.bytes", value(std::int64_t{4} << 30));
    CHECK(f.eval("mem.bytes > 2 GiB") == truth::true_);
    CHECK(f.eval("mem.bytes > 0.95 * cap.bytes") == truth::false_);
    CHECK(f.eval("mem.bytes > 0.7 * cap.bytes") == truth::true_);
}

TEST_CASE("missing facts are unknown and follow three-valued logic") {
    fixture f;
    CHECK(f.eval("a > 1") == truth::unknown);
    CHECK(f.eval("not (a > 1)") == truth::unknown);
    CHECK(f.eval("a > 1 and false") == truth::false_);
    CHECK(f.eval("a > 1 or true") == truth::true_);
    CHECK(f.eval("exists(a)") == truth::false_);
    f.set("a", value(5));
    CHECK(f.eval("exists(a)") == truth::true_);
    CHECK(f.eval("a + b > 1") == truth::unknown);
}

TEST_CASE("strings, in, matches") {
    fixture f;
    f.set("src", value("workspace"));
    f.set("name", value("Llama-3-70B"));
    CHECK(f.eval("src == \"workspace\"") == truth::true_);
    CHECK(f.eval("src in [\"hccl\", \"workspace\"]") == truth::true_);
    CHECK(f.eval("src not in (\"hccl\", \"none\")") == truth::true_);
    CHECK(f.eval("name matches \"(?i)llama-3-\\\\d+b\"") == truth::true_);
    CHECK(f.eval("name matches '^Qwen'") == truth::false_);
}

TEST_CASE("functions") {
    fixture f;
    f.set("a", value(7));
    CHECK(f.val("max(1, a / 2)") == value(3.5));
    CHECK(f.val("int(a / 2)") == value(3));
    CHECK(f.val("ceil(a / 2)") == value(4));
    CHECK(f.val("min(a, 2, 9)") == value(2));
    CHECK(f.val("abs(-3)") == value(3));
    CHECK(f.val("len(\"abc\")") == value(3));
    CHECK(f.val("if(a > 5, \"high\", \"low\")") == value("high"));
    CHECK(f.val("if(a > 9, \"high\", \"low\")") == value("low"));
    CHECK(f.val("if(b > 9, \"high\", \"low\")") == value("low"));  // unknown condition: the else branch
}

TEST_CASE("type errors are found while parsing") {
    fixture f;
    CHECK(f.err("src > 3").message.find("orders numbers") != std::string::npos);
    CHECK(f.err("a == \"x\"").message.find("cannot compare") != std::string::npos);
    CHECK(f.err("flag + 1").message.find("arithmetic") != std::string::npos);
    CHECK(f.err("a and flag").message.find("'and'") != std::string::npos);
    CHECK(f.err("name matches 3").message.find("string pattern") != std::string::npos);
}

TEST_CASE("syntax errors carry the offset of the problem") {
    fixture f;
    expr_error e = f.err("a > 1 and (b < 2");
    CHECK(e.offset == 16);
    e = f.err("a = 1");
    CHECK(e.offset == 2);
    CHECK(e.message.find("==") != std::string::npos);
    e = f.err("a > 1 and nosuch.fact == 2");
    CHECK(e.offset == 10);
    CHECK(e.unknown_name);
    e = f.err("src == \"workspce\"");
    CHECK(e.offset == 7);
    CHECK(e.message.find("not a value of 'src'") != std::string::npos);
    e = f.err("name matches \"(\"");
    CHECK(e.message.find("bad regular expression") != std::string::npos);
    e = f.err("a > ");
    CHECK(e.message.find("end of expression") != std::string::npos);
    e = f.err("99999999999999999999999 > a");
    CHECK(e.message.find("out of range") != std::string::npos);
}

TEST_CASE("integer overflow falls back to floating point, division by zero is unknown") {
    fixture f;
    CHECK(f.val("9000000000000000000 * 10").is_number());
    CHECK(f.val("1 / 0").is_null());
    CHECK(f.eval("1 / 0 > 0") == truth::unknown);
}

TEST_CASE("why not: the first failing clause with actual values") {
    fixture f;
    f.set("a", value(2));
    f.set("src", value("hccl"));
    parsed_expr e = parse_expression("src == \"hccl\" and a > 5 and b < 3", f.res);
    REQUIRE(e.ok());
    const std::string why = explain_failure(*e.root, f.facts);
    CHECK(why == "`a > 5` is false (a = 2)");
    parsed_expr e2 = parse_expression("b < 3", f.res);
    CHECK(explain_failure(*e2.root, f.facts) == "`b < 3` is unknown (b is missing)");
}

TEST_CASE("hostile expressions: nesting and size are bounded, not a stack overflow") {
    fixture f;
    const std::string deep = std::string(100000, '(') + "true" + std::string(100000, ')');
    CHECK(f.err(deep).message.find("nested deeper than 128") != std::string::npos);
    std::string nots;
    for (int i = 0; i < 50000; ++i) nots += "not ";
    CHECK(f.err(nots + "true").message.find("nested deeper") != std::string::npos);
    CHECK(f.err(std::string(50000, '-') + "1 > 0").message.find("nested deeper") != std::string::npos);
    CHECK(f.err(std::string(50000, '[') + "1").message.find("nested deeper") != std::string::npos);
    std::string chain = "true";
    for (int i = 0; i < 5000; ++i) chain += " and true";
    CHECK(f.err(chain).message.find("too large") != std::string::npos);
    const std::string ok = std::string(100, '(') + "true" + std::string(100, ')');
    CHECK(f.eval(ok) == truth::true_);
}

TEST_CASE("fuzz findings stay fixed: INT64_MIN arithmetic, oversized size literals") {
    fixture f;
    CHECK(f.val("-(-9223372036854775807 - 1)").is_number());
    CHECK(f.val("abs(-9223372036854775807 - 1)").is_number());
    CHECK(f.val("(-9223372036854775807 - 1) / -1").is_number());
    CHECK(f.val("(-9223372036854775807 - 1) % -1") == value(0));
    CHECK(f.err("a > 77777777777777771 KB").message.find("size too large") != std::string::npos);
}
