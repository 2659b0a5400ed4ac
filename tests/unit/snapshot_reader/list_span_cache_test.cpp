// list_span_cache: frame lists found again by the bytes that wrote them.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "parsers/snapshot/list_span_cache.h"

using oomdx::snap::list_span_cache;

namespace {
const std::uint8_t* bytes(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }
}  // namespace

TEST_CASE("a span is found again by its bytes, by prediction or by hash") {
    list_span_cache c;
    const std::string a = "h\x01h\x02", b = "h\x01h\x03", x = "j\x01\x02\x03\x04";
    std::uint64_t h = 0;
    CHECK(c.find(bytes(a), a.size(), h).id == -1);
    c.add(bytes(a), a.size(), 2, h, 7);
    CHECK(c.find(bytes(b), b.size(), h).id == -1);
    c.add(bytes(b), b.size(), 2, h, 9);
    // a then b again: b is predicted after a, a is found through the table
    auto ha = c.find(bytes(a), a.size(), h);
    CHECK(ha.id == 7);
    CHECK(ha.items == 2);
    auto hb = c.find(bytes(b), b.size(), h);
    CHECK(hb.id == 9);
    CHECK(h == 0);  // predicted: no hash computed
    CHECK(c.find(bytes(x), x.size(), h).id == -1);
    CHECK(c.find(bytes(a), 2, h).id == -1);  // a prefix is another span
    c.clear();
    CHECK(c.find(bytes(a), a.size(), h).id == -1);
}

TEST_CASE("a full cache that misses most spans switches itself off") {
    list_span_cache c;
    std::uint64_t h = 0;
    std::string s;
    std::uint32_t i = 0;
    for (; c.enabled() && i < list_span_cache::k_max_lists + 4 * list_span_cache::k_round; ++i) {
        s = "j" + std::string(reinterpret_cast<const char*>(&i), 4);
        if (c.find(bytes(s), s.size(), h).id < 0) c.add(bytes(s), s.size(), 1, h, static_cast<int>(i));
    }
    CHECK_FALSE(c.enabled());
    CHECK(i <= list_span_cache::k_max_lists + 2 * list_span_cache::k_round);
    // what it holds is still right
    const std::uint32_t k = 5;
    s = "j" + std::string(reinterpret_cast<const char*>(&k), 4);
    CHECK(c.find(bytes(s), s.size(), h).id == 5);
}

TEST_CASE("the predicted span is found before the reader knows where the span ends") {
    list_span_cache c;
    const std::string a = "h\x01h\x02", b = "j\x01\x02\x03\x04h\x05";
    std::uint64_t h = 0;
    c.add(bytes(a), a.size(), 2, 0, 7);
    c.add(bytes(b), b.size(), 2, 0, 9);
    CHECK(c.find(bytes(a), a.size(), h).id == 7);  // b followed a: b is predicted now
    const std::string next = b + "e....";
    CHECK(c.find_predicted(bytes(next), next.size(), 'x').id == -1);    // not followed by `end`
    CHECK(c.find_predicted(bytes(next), b.size(), 'e').id == -1);       // no room for `end`
    const std::string longer = b + "h\x06" + "e";
    CHECK(c.find_predicted(bytes(longer), longer.size(), 'e').id == -1);  // b is only a prefix
    const auto hit = c.find_predicted(bytes(next), next.size(), 'e');
    CHECK(hit.id == 9);
    CHECK(hit.items == 2);
    CHECK(hit.len == b.size());
    CHECK(c.find_predicted(bytes(next), next.size(), 'e').id == -1);  // nothing followed b yet
}

TEST_CASE("a span of 16 bytes or more is found by its first 16 bytes without its end") {
    list_span_cache c;
    std::uint64_t h = 0;
    const std::string a("j\x01\x02\x00\x00j\x03\x04\x00\x00j\x05\x06\x00\x00h\x07", 17);
    const std::string b = a.substr(0, 16) + "h\x09";  // the same first 16 bytes
    const std::string pad(32, 'x');
    REQUIRE(a.size() == 17);
    CHECK(c.find_head(bytes(a + "e" + pad), a.size() + 1 + pad.size(), 'e').id == -1);  // empty
    c.add(bytes(a), a.size(), 4, 0, 7);
    const std::string in = a + "e" + pad;
    const auto hit = c.find_head(bytes(in), in.size(), 'e');
    CHECK(hit.id == 7);
    CHECK(hit.items == 4);
    CHECK(hit.len == a.size());
    CHECK(c.find_head(bytes(in), a.size(), 'e').id == -1);           // no room for `end`
    CHECK(c.find_head(bytes(a + "u" + pad), in.size(), 'e').id == -1);  // not followed by `end`
    CHECK(c.find_head(bytes(b + "e" + pad), in.size(), 'e').id == -1);  // same head, other bytes
    c.add(bytes(b), b.size(), 4, 0, 9);  // two spans with that head: both found (two ways)
    CHECK(c.find_head(bytes(b + "e" + pad), in.size(), 'e').id == 9);
    CHECK(c.find_head(bytes(in), in.size(), 'e').id == 7);  // now the more recently found
    const std::string d = a.substr(0, 16) + "h\x0b";  // a third: the least recently found (b) goes
    c.add(bytes(d), d.size(), 4, 0, 13);
    CHECK(c.find_head(bytes(d + "e" + pad), in.size(), 'e').id == 13);
    CHECK(c.find_head(bytes(in), in.size(), 'e').id == 7);
    CHECK(c.find_head(bytes(b + "e" + pad), in.size(), 'e').id == -1);
    CHECK(c.find(bytes(b), b.size(), h).id == 9);  // found by hash: its head again
    CHECK(c.find_head(bytes(b + "e" + pad), in.size(), 'e').id == 9);
    CHECK(c.find_head(bytes(in), in.size(), 'e').id == 7);  // and the other way kept
    const std::string s = "h\x01h\x02";  // shorter than 16 bytes: no head
    c.add(bytes(s), s.size(), 2, 0, 11);
    CHECK(c.find_head(bytes(s + "e" + pad), s.size() + 1 + pad.size(), 'e').id != 11);
    c.clear();
    CHECK(c.find_head(bytes(in), in.size(), 'e').id == -1);
}
