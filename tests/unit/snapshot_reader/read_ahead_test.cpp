// read_ahead: the pages behind the reader are released (on the helper thread or, when it lags,
// on the reader's), in order, never past the reader.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "parsers/snapshot/read_ahead.h"

using oomdx::snap::read_ahead;

TEST_CASE("read_ahead releases the pages behind the reader, in order, never past it") {
    const std::size_t mib = std::size_t(1) << 20;
    std::vector<unsigned char> data(read_ahead::k_small + mib, 1);  // large enough for the helper
    std::atomic<std::size_t> released{0}, calls{0}, inside{0};
    std::atomic<bool> bad{false};
    {
        read_ahead ra(data.data(), data.size(), mib, [&](std::size_t off) {
            if (inside.fetch_add(1) != 0) bad = true;  // one thread at a time
            if (off <= released.load()) bad = true;    // increasing
            released = off;
            ++calls;
            inside.fetch_sub(1);
        });
        std::size_t last = 0;
        for (std::size_t off = mib / 2; off <= 12 * mib; off += mib / 2) {
            ra.advance(off);
            last = off;
            CHECK(released.load() <= off);
        }
        for (int i = 0; i < 200 && released.load() < last; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK(released.load() == last);
    }
    CHECK_FALSE(bad.load());
    CHECK(calls.load() > 0);
}

TEST_CASE("read_ahead: a small input is read with a smaller resident window") {
    const std::size_t kib = 1024, mib = kib * kib;
    // 100k-d20 (8.5 MB): 64 KiB steps, 128 KiB ahead; from 16 MiB up as before.
    CHECK(read_ahead::step_for(8 * mib) == 64 * kib);
    CHECK(read_ahead::window_for(8 * mib) == 128 * kib);
    CHECK(read_ahead::step_for(16 * mib + 1) == 512 * kib);
    CHECK(read_ahead::window_for(16 * mib + 1) == mib);
    for (std::size_t size : {std::size_t(0), 16 * mib, 400 * mib})
        CHECK(read_ahead::window_for(size) >= 2 * read_ahead::step_for(size));  // the next step is resident
}

TEST_CASE("read_ahead: a small input is released on the reader's thread, at each step") {
    const std::size_t kib = 1024;
    std::vector<unsigned char> data(4 * kib * kib, 1);
    const std::thread::id reader = std::this_thread::get_id();
    std::size_t released = 0;
    bool other_thread = false;
    read_ahead ra(data.data(), data.size(), read_ahead::window_for(data.size()), [&](std::size_t off) {
        other_thread |= std::this_thread::get_id() != reader;
        released = off;
    });
    for (std::size_t off = 64 * kib; off <= data.size(); off += 64 * kib) {
        ra.advance(off);
        CHECK(released == off);  // no helper to wait for: done when advance returns
    }
    CHECK_FALSE(other_thread);
}
