#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "engine/core/json_text.h"

using namespace oomdx;

TEST_CASE("json_text writes the same bytes as nlohmann's dump") {
    nlohmann::json j;
    j["empty_object"] = nlohmann::json::object();
    j["empty_array"] = nlohmann::json::array();
    j["null"] = nullptr;
    j["t"] = true;
    j["f"] = false;
    j["ints"] = {0, 1, -1, 42, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
    j["unsigned"] = std::numeric_limits<std::uint64_t>::max();
    j["floats"] = {0.0, -0.0, 0.1, 1.0, 1e300, -2.5e-300, 1.0 / 3.0, 0.9999999999999999, 12345678.9,
                   std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::denorm_min()};
    j["strings"] = {"", "plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\r\b\f", std::string("nul\0x", 5),
                    "\x01\x1f\x7f", "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80", "~ {} [] : ,"};
    j["nested"] = {{"a", {{"b", {1, {{"c", nlohmann::json::array()}}, "d"}}}}, {"z", nlohmann::json::object()}};
    j["key \"with\" escapes\n"] = 1;
    j["caf\xc3\xa9"] = "k";
    for (int indent : {0, 1, 2, 4}) CHECK(json_text(j, indent) == j.dump(indent));
    CHECK(json_text(j, -1) == j.dump());
    for (const auto& v : {nlohmann::json(1), nlohmann::json("s"), nlohmann::json(nullptr), nlohmann::json::array(),
                          nlohmann::json::object(), nlohmann::json(2.5)})
        CHECK(json_text(v, 2) == v.dump(2));
}

TEST_CASE("json_text matches dump on random values and raises the same error on invalid UTF-8") {
    std::mt19937_64 rng(18);
    auto rand_string = [&] {
        std::string s;
        const int n = static_cast<int>(rng() % 12);
        for (int i = 0; i < n; ++i) {
            const auto r = rng() % 10;
            if (r < 7) s.push_back(static_cast<char>(0x20 + rng() % 95));
            else if (r < 8) s.push_back(static_cast<char>(rng() % 0x20));
            else s += "\xc3\xa9";
        }
        return s;
    };
    std::function<nlohmann::json(int)> gen = [&](int depth) -> nlohmann::json {
        switch (depth > 3 ? rng() % 5 : rng() % 7) {
            case 0: return static_cast<std::int64_t>(rng());
            case 1: return static_cast<double>(static_cast<std::int64_t>(rng())) / double(1 + rng() % 1000000);
            case 2: return rand_string();
            case 3: return rng() % 2 == 0;
            case 4: return nullptr;
            case 5: {
                nlohmann::json a = nlohmann::json::array();
                for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) a.push_back(gen(depth + 1));
                return a;
            }
            default: {
                nlohmann::json o = nlohmann::json::object();
                for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) o[rand_string()] = gen(depth + 1);
                return o;
            }
        }
    };
    for (int k = 0; k < 300; ++k) {
        const nlohmann::json j = gen(0);
        CHECK(json_text(j, 2) == j.dump(2));
    }
    nlohmann::json bad = {{"s", std::string("ok \xff bad")}};
    CHECK_THROWS_AS(json_text(bad, 2), nlohmann::json::type_error);
}
