// Reads a JSON memory snapshot (same shape as the pickle: {segments, device_traces, ...} or a
// bare list of segments) with a SAX parser, straight into the model.
#pragma once

#include <string>
#include <string_view>

#include "parsers/snapshot/snapshot_loader.h"
#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap {

void read_json(std::string_view data, const std::string& name, const load_limits& limits,
               snapshot& out);

}  // namespace oomdx::snap
