// block_pool::warm / settle (snap20): the next 64 KiB of a growing array touched on the helper
// thread; a ticket is settled before its range is used or freed, and arrays keep every element.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "parsers/snapshot/block_pool.h"
#include "parsers/snapshot/chunked_list.h"

using oomdx::snap::block_pool;
using oomdx::snap::chunked_list;

namespace {
struct entry32 {
    std::uint64_t a, b, c, d;
};
entry32 make(std::size_t i) { return {i, i * 3, ~i, i ^ 0x5a5a}; }
bool same(const entry32& e, std::size_t i) {
    const entry32 x = make(i);
    return e.a == x.a && e.b == x.b && e.c == x.c && e.d == x.d;
}
}  // namespace

TEST_CASE("block_pool::warm: a ticket is settled once, and its range is usable after") {
    CHECK_FALSE(block_pool::settle(0));
    block_pool::block_ptr b = block_pool::array_block(true);
    auto* p = static_cast<unsigned char*>(b.get());
    const std::size_t step = std::size_t(64) << 10;
    for (int k = 0; k < 20; ++k) {
        unsigned char* at = p + (k % 16) * step;
        const std::uint32_t t = block_pool::warm(at, step);
        block_pool::settle(t);           // ready (true) or taken back (false): usable either way
        CHECK_FALSE(block_pool::settle(t));  // settled already
        for (std::size_t i = 0; i < step; i += 4096) at[i] = static_cast<unsigned char>(k);
        CHECK(at[step - 4096] == static_cast<unsigned char>(k));
    }
}

TEST_CASE("chunked_list: elements written over warmed steps, lists moved and dropped mid-step") {
    const std::size_t n = 200000;  // three 2 MiB chunks of 32-byte entries
    chunked_list<entry32> l;
    for (std::size_t i = 0; i < n / 2; ++i) l.push_back(make(i));
    chunked_list<entry32> m(std::move(l));  // moved with a ticket in flight
    CHECK(l.size() == 0);
    for (std::size_t i = n / 2; i < n; ++i) m.push_back(make(i));
    REQUIRE(m.size() == n);
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) ok = ok && same(m[i], i);
    CHECK(ok);
    chunked_list<entry32> c;
    for (std::size_t i = 0; i < 5000; ++i) c.push_back(make(i));
    c = std::move(m);  // the old list's ticket settled before its chunks go
    CHECK(c.size() == n);
    CHECK(same(c[n - 1], n - 1));
    for (int k = 0; k < 50; ++k) {  // dropped right after a step was asked for
        chunked_list<entry32> d;
        for (std::size_t i = 0; i < 2049 + static_cast<std::size_t>(k) * 97; ++i) d.push_back(make(i));
        CHECK(same(d.back(), d.size() - 1));
    }
    c.clear();
    CHECK(c.empty());
}
