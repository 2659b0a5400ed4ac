// Pickle opcodes (protocols 0-5) and how the snapshot reader treats each.
#pragma once

#include <cstdint>

namespace oomdx::snap {

enum class opcode_class : std::uint8_t {
    data,          // decoded
    code,          // could import or call Python code: always refused
    unsupported,   // data, but never written by snapshot producers (text protocol, buffers)
    unknown        // not a pickle opcode
};

struct opcode_info {
    const char* name;
    opcode_class cls;
};

// Name and class of an opcode byte ("GLOBAL", code); unknown bytes give {"0x..", unknown}.
opcode_info describe_opcode(std::uint8_t op);

}  // namespace oomdx::snap
