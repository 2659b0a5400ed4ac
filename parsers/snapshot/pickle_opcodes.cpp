#include "parsers/snapshot/pickle_opcodes.h"

namespace oomdx::snap {

opcode_info describe_opcode(std::uint8_t op) {
    using c = opcode_class;
    switch (op) {
    case '(': return {"MARK", c::data};
    case '.': return {"STOP", c::data};
    case '0': return {"POP", c::data};
    case '1': return {"POP_MARK", c::data};
    case '2': return {"DUP", c::data};
    case 'F': return {"FLOAT", c::unsupported};
    case 'I': return {"INT", c::unsupported};
    case 'J': return {"BININT", c::data};
    case 'K': return {"BININT1", c::data};
    case 'L': return {"LONG", c::unsupported};
    case 'M': return {"BININT2", c::data};
    case 'N': return {"NONE", c::data};
    case 'P': return {"PERSID", c::code};
    case 'Q': return {"BINPERSID", c::code};
    case 'R': return {"REDUCE", c::code};
    case 'S': return {"STRING", c::unsupported};
    case 'T': return {"BINSTRING", c::data};
    case 'U': return {"SHORT_BINSTRING", c::data};
    case 'V': return {"UNICODE", c::unsupported};
    case 'X': return {"BINUNICODE", c::data};
    case 'a': return {"APPEND", c::data};
    case 'b': return {"BUILD", c::code};
    case 'c': return {"GLOBAL", c::code};
    case 'd': return {"DICT", c::data};
    case '}': return {"EMPTY_DICT", c::data};
    case 'e': return {"APPENDS", c::data};
    case 'g': return {"GET", c::unsupported};
    case 'h': return {"BINGET", c::data};
    case 'i': return {"INST", c::code};
    case 'j': return {"LONG_BINGET", c::data};
    case 'l': return {"LIST", c::data};
    case ']': return {"EMPTY_LIST", c::data};
    case 'o': return {"OBJ", c::code};
    case 'p': return {"PUT", c::unsupported};
    case 'q': return {"BINPUT", c::data};
    case 'r': return {"LONG_BINPUT", c::data};
    case 's': return {"SETITEM", c::data};
    case 't': return {"TUPLE", c::data};
    case ')': return {"EMPTY_TUPLE", c::data};
    case 'u': return {"SETITEMS", c::data};
    case 'G': return {"BINFLOAT", c::data};
    case 0x80: return {"PROTO", c::data};
    case 0x81: return {"NEWOBJ", c::code};
    case 0x82: return {"EXT1", c::code};
    case 0x83: return {"EXT2", c::code};
    case 0x84: return {"EXT4", c::code};
    case 0x85: return {"TUPLE1", c::data};
    case 0x86: return {"TUPLE2", c::data};
    case 0x87: return {"TUPLE3", c::data};
    case 0x88: return {"NEWTRUE", c::data};
    case 0x89: return {"NEWFALSE", c::data};
    case 0x8a: return {"LONG1", c::data};
    case 0x8b: return {"LONG4", c::data};
    case 'B': return {"BINBYTES", c::data};
    case 'C': return {"SHORT_BINBYTES", c::data};
    case 0x8c: return {"SHORT_BINUNICODE", c::data};
    case 0x8d: return {"BINUNICODE8", c::data};
    case 0x8e: return {"BINBYTES8", c::data};
    case 0x8f: return {"EMPTY_SET", c::data};
    case 0x90: return {"ADDITEMS", c::data};
    case 0x91: return {"FROZENSET", c::data};
    case 0x92: return {"NEWOBJ_EX", c::code};
    case 0x93: return {"STACK_GLOBAL", c::code};
    case 0x94: return {"MEMOIZE", c::data};
    case 0x95: return {"FRAME", c::data};
    case 0x96: return {"BYTEARRAY8", c::unsupported};
    case 0x97: return {"NEXT_BUFFER", c::unsupported};
    case 0x98: return {"READONLY_BUFFER", c::unsupported};
    default: break;
    }
    static thread_local char buf[8];
    const char* hex = "0123456789abcdef";
    buf[0] = '0'; buf[1] = 'x'; buf[2] = hex[op >> 4]; buf[3] = hex[op & 15]; buf[4] = 0;
    return {buf, c::unknown};
}

}  // namespace oomdx::snap
