// Restricted streaming unpickler that decodes a snapshot pickle straight into the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "parsers/snapshot/snapshot_loader.h"
#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap {

// Decodes `data` (protocol 2-5) into `out`. Throws input_error "<name>: byte N: ..." on
// truncation, corruption, a refused opcode or an exceeded limit. `release(offset)` is called
// now and then with an offset below which the input will not be read again.
void read_pickle(std::string_view data, const std::string& name, const load_limits& limits,
                 snapshot& out, const std::function<void(std::size_t)>& release = {});

// An input read in pieces into one reused window instead of mapped whole (docs/snapshot.md,
// snap14): `read(dst, n)` copies the next bytes, at most n, and returns how many (0 only at
// the end). The window holds `window` bytes (more for one longer opcode) and is refilled when
// less than 1/16 of it is left unread.
struct pickle_source {
    std::uint64_t size = 0;
    std::function<std::size_t(std::uint8_t*, std::size_t)> read;
    std::size_t window = std::size_t(64) << 10;
};

// The same from a source; `progress(offset)` is called at each refill with the bytes read.
// Throws input_error "<name>: byte N: file shrank while it was read" when `read` ends early.
void read_pickle(const pickle_source& src, const std::string& name, const load_limits& limits,
                 snapshot& out, const std::function<void(std::size_t)>& progress = {});

}  // namespace oomdx::snap
