// Restricted streaming unpickler that decodes a snapshot pickle straight into the model.
#pragma once

#include <cstddef>
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

}  // namespace oomdx::snap
