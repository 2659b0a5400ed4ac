#include "parsers/snapshot/json_reader.h"

#include "engine/core/errors.h"

namespace oomdx::snap {

void read_json(std::string_view data, const std::string& name, const load_limits& limits,
               snapshot& out) {
    throw input_error::in_file(name, "JSON snapshots are not supported yet");
}

}  // namespace oomdx::snap
