// Hostile and malformed pickles: each gives one clear input_error, never a crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "reader_helpers.h"

using namespace oomdx;

static std::string error_of(const std::string& data, const snap::load_limits& lim = {}) {
    try {
        snap::load_snapshot_bytes(data, "t.pickle", lim);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

static std::string P(const std::string& body) { return std::string("\x80\x04", 2) + body; }

// Pickle pieces for hand-written traces: a memoized short string, a BINGET, MEMOIZE, and the
// start of a snapshot up to device 0's trace list (memo 0 top dict; 1, 2 segments; 3, 4
// device_traces; 5 device 0).
static std::string memo_str(const char* text) {
    return std::string(1, '\x8c') + char(std::strlen(text)) + text + '\x94';
}
static std::string memo_get(int idx) { return std::string(1, 'h') + char(idx); }
static const std::string k_memoize = "\x94";
static std::string long_get(std::uint32_t idx) {  // LONG_BINGET
    std::string r = "j";
    for (int i = 0; i < 4; ++i) r += char((idx >> (8 * i)) & 0xff);
    return r;
}
static std::string long1(std::uint64_t v, int n) {  // LONG1 of n bytes
    std::string r = std::string("\x8a") + char(n);
    for (int i = 0; i < n; ++i) r += char((v >> (8 * i)) & 0xff);
    return r;
}
static std::string trace_preamble() {
    const std::string M = k_memoize;
    return "}" + M + "(" + memo_str("segments") + "]" + M + memo_str("device_traces") + "]" + M + "(" + "]" + M + "(";
}

TEST_CASE("opcodes that could run code are refused with name and offset") {
    struct c { const char* name; std::string body; };
    const c cases[] = {
        {"GLOBAL", "cos\nsystem\n"},
        {"STACK_GLOBAL", std::string("\x8c\x02os\x8c\x06system\x93", 13)},
        {"REDUCE", "]R"},
        {"BUILD", "}}b"},
        {"INST", "(ios\nsystem\n"},
        {"OBJ", "(o"},
        {"NEWOBJ", std::string("]]\x81", 3)},
        {"NEWOBJ_EX", std::string("]]}\x92", 4)},
        {"PERSID", "Pabc\n"},
        {"BINPERSID", "]Q"},
        {"EXT1", std::string("\x82\x01", 2)},
        {"EXT2", std::string("\x83\x01\x00", 3)},
        {"EXT4", std::string("\x84\x01\x00\x00\x00", 5)},
    };
    for (const auto& x : cases) {
        CAPTURE(x.name);
        std::string msg = error_of(P(x.body));
        CHECK(msg.find(std::string("refused opcode ") + x.name + ":") != std::string::npos);
        CHECK(msg.rfind("t.pickle: byte ", 0) == 0);
    }
    CHECK(error_of(P("cos\nsystem\n")).find("byte 2:") != std::string::npos);
    CHECK(error_of(P("]R")).find("byte 3:") != std::string::npos);
}

TEST_CASE("memo, protocol and truncation errors") {
    CHECK(error_of(P("]h\x05.")).find("memo index 5 was never stored") != std::string::npos);
    CHECK(error_of(P(std::string("]j\x00\x00\x01\x00.", 7))).find("memo index 65536") != std::string::npos);
    CHECK(error_of(std::string("\x80\x06}.", 4)).find("unsupported pickle protocol 6") != std::string::npos);
    CHECK(error_of(std::string("\x80\x01}.", 4)).find("unsupported pickle protocol 1") != std::string::npos);
    CHECK(error_of("(dp0\n.").find("not a memory snapshot") != std::string::npos);
    CHECK(error_of("").find("empty file") != std::string::npos);
    CHECK(error_of(P(std::string("\x95\xff\x00\x00\x00\x00\x00\x00\x00}", 10))).find("FRAME announces 255 bytes") != std::string::npos);
    CHECK(error_of(P("}")).find("truncated: end of data before STOP") != std::string::npos);
    CHECK(error_of(P(std::string("\x8c\x10" "abc", 5))).find("truncated: SHORT_BINUNICODE needs 16 bytes") != std::string::npos);
    CHECK(error_of(P(std::string("X\xff\xff\xff\xff", 5))).find("byte 2:") != std::string::npos);
    CHECK(error_of(P(std::string("\x8a\x0a" "0123456789.", 13))).find("too large") != std::string::npos);
    CHECK(error_of(P(std::string("\x8a\x09" "012345678.", 12))).find("does not fit") != std::string::npos);
    CHECK(error_of(P("Fx\n.")).find("unsupported opcode FLOAT") != std::string::npos);
    CHECK(error_of(P(std::string("\xfe", 1))).find("invalid opcode 0xfe") != std::string::npos);
}

TEST_CASE("structural errors") {
    CHECK(error_of(P("K\x01.")).find("top-level object is not a dict or a list") != std::string::npos);
    CHECK(error_of(P("}.")).find("no 'segments' key") != std::string::npos);
    CHECK(error_of(P(std::string("]\x94h\x00" "a.", 6))).find("contains itself") != std::string::npos);
    CHECK(error_of(P("K\x01" "a.")).find("APPEND needs 2 value(s)") != std::string::npos);
    CHECK(error_of(P("e.")).find("APPENDS without a MARK") != std::string::npos);
    CHECK(error_of(P("}(K\x01u.")).find("odd number") != std::string::npos);
    CHECK(error_of(P("K\x01(K\x01" "a.")).find("APPEND needs 2 value(s)") != std::string::npos);
    CHECK(error_of(P("(.")).find("STOP") != std::string::npos);
}

TEST_CASE("limits: depth, stack, memo, string size, containers") {
    std::string deep(20000, ']');
    deep += std::string(19999, 'a');
    deep += ".";
    CHECK(error_of(P(deep)).find("nesting deeper than 10000") != std::string::npos);
    CHECK(error_of(P(std::string(20000, '(') + ".")).find("open MARKs") != std::string::npos);

    snap::load_limits small;
    small.max_stack = 100;
    small.max_memo = 10;
    small.max_string = 4;
    small.max_live_containers = 50;
    CHECK(error_of(P(std::string(200, 'N')), small).find("values on the stack") != std::string::npos);
    CHECK(error_of(P(std::string("Nr\x10\x00\x00\x00", 6)), small).find("memo index 16 is above 10") != std::string::npos);
    CHECK(error_of(P(std::string("\x8c\x05hello", 7)), small).find("string of 5 bytes") != std::string::npos);
    CHECK(error_of(P(std::string(60, ']')), small).find("containers alive") != std::string::npos);
    // a 4 GiB string length is rejected before any allocation
    CHECK(error_of(P(std::string("\x8d\xff\xff\xff\xff\x00\x00\x00\x00", 9))).find("limit exceeded: string") != std::string::npos);
}

TEST_CASE("invalid UTF-8 in strings is replaced, not trusted") {
    // {'segments': [], 'x': b'\xff'-as-str}
    std::string body = std::string("}(\x8c\x08segments]\x8c\x01x\x8c\x02\xff" "a" "u.", 23);
    snap::snapshot s = snap::load_snapshot_bytes(P(body), "u.pickle");
    CHECK(s.info.unknown_top_keys == std::vector<std::string>{"x"});
}

TEST_CASE("a shared record referenced twice is an error, not a silent double count") {
    // {'segments': [seg, seg]} where seg is the same memoized dict
    std::string seg = "}\x94(\x8c\x0atotal_size" "K\x01u";
    std::string body = "}(\x8c\x08segments](" + seg + std::string("h\x00" "eu.", 5);
    std::string msg = error_of(P(body));
    CHECK(msg.find("already consumed") != std::string::npos);
}

TEST_CASE("JSON snapshots: errors carry a byte offset, nesting is bounded") {
    CHECK(error_of("{\"segments\": [").find("t.pickle: byte ") == 0);
    CHECK(error_of("{\"segments\": [").find("invalid JSON") != std::string::npos);
    CHECK(error_of("{\"x\": 1}").find("no 'segments' key") != std::string::npos);
    CHECK(error_of("[1]").find("expected an object") != std::string::npos);
    std::string deep = "{\"segments\": [], \"y\": " + std::string(20000, '[') + std::string(20000, ']') + "}";
    CHECK(error_of(deep).find("nesting deeper than") != std::string::npos);
    CHECK(error_of("  \n hello").find("not a memory snapshot") != std::string::npos);

    // a bare list of segments, and shared frames across blocks
    std::string ok = R"([{"device": 2, "address": 4096, "total_size": 3072, "blocks": [
        {"size": 1024, "state": "active_allocated", "frames": [{"name": "f", "filename": "/a.py", "line": 3}]},
        {"size": 2048, "state": "inactive", "frames": [{"name": "f", "filename": "/a.py", "line": 3}]}]}])";
    snap::snapshot s = snap::load_snapshot_bytes(ok, "list.json");
    CHECK(s.info.top_level == "list");
    REQUIRE(s.segments.size() == 1);
    CHECK(s.segments[0].blocks[1].address == 4096 + 1024);
    CHECK(s.segments[0].blocks[0].frames == s.segments[0].blocks[1].frames);
    CHECK(s.frames.size() == 1);
}

TEST_CASE("fuzz findings stay fixed: huge floats, address overflow, out-of-range sizes") {
    // A float beyond int64 in a size field was undefined behaviour; now it is out of range.
    CHECK(error_of(R"([{"address": 0, "total_size": 1e300, "blocks": []}])").find("out of range") != std::string::npos);
    // Deriving block addresses from a huge segment address overflowed int64.
    CHECK(error_of(R"([{"address": 9223372036854775807, "total_size": 2048, "blocks": [{"size": 1024, "state": "inactive"},
        {"size": 1024, "state": "inactive"}]}])").find("address") != std::string::npos);
    CHECK(error_of(R"([{"address": 0, "total_size": -1, "blocks": []}])").find("total_size = -1 is out of range") !=
          std::string::npos);
}

// A frame list whose item bytes were seen before is taken from a cache; a BINPUT that
// overwrites a memoized frame must not leave the old frame behind.
TEST_CASE("frame lists cached by their bytes follow an overwritten memo slot") {
    const auto s = memo_str;
    const auto h = memo_get;
    const std::string M = k_memoize;
    std::string b = trace_preamble();
    // entry 6 (general path): keys 7 action, 8 alloc, 9 addr, 10 size, 11 frames, list 12,
    // frame dict 13 {name 14: f 15, filename 16: a.py 17, line 18: 1}
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + "K\x10" + s("size") + "K\x20" + s("frames") + "]" + M +
         "(" + "}" + M + "(" + s("name") + s("f") + s("filename") + s("a.py") + s("line") + "K\x01" + "u" + "e" + "u";
    // entry 19 (fast path): frames [memo 13] -> cached by the bytes "h\x0d"
    auto entry = [&](int addr, const std::string& frames_items) {
        return "}" + M + "(" + h(7) + h(8) + h(9) + "K" + char(addr) + h(10) + "K\x20" + h(11) + "]" + M + "(" +
               frames_items + "e" + "u";
    };
    b += entry(0x30, h(13));  // memo 19 dict, 20 list
    // entry 21 (general path): its frame list holds a new frame dict stored over memo 13 (BINPUT)
    b += "}" + M + "(" + h(7) + h(8) + h(9) + "K\x50" + h(10) + "K\x20" + h(11) + "]" + M + "(" + "}" + "q\x0d" + "(" +
         h(14) + s("g") + h(16) + s("b.py") + h(18) + "K\x02" + "u" + "e" + "u";
    b += entry(0x70, h(13));  // the same bytes as entry 19's list, now meaning frame g
    b += std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 4);
    auto file_of = [&](std::size_t i) { return std::string(snap.top_frame(t[i].frames)->filename); };
    CHECK(file_of(0) == "a.py");
    CHECK(file_of(1) == "a.py");
    CHECK(file_of(2) == "b.py");
    CHECK(file_of(3) == "b.py");
}

TEST_CASE("trace entry keys recognised by their bytes follow an overwritten memo slot") {
    const auto s = memo_str;
    const auto h = memo_get;
    const std::string M = k_memoize;
    std::string b = trace_preamble();
    // entry 6 (general path): keys 7 action, 8 alloc, 9 addr, 10 size
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + "K\x10" + s("size") + "K\x20" + "u";
    auto entry = [&](int first) {  // fast path: h(9) first value, h(10) second value
        return "}" + M + "(" + h(7) + h(8) + h(9) + "K" + char(first) + h(10) + "K\x20" + "u";
    };
    b += entry(0x30) + entry(0x40);  // the key bytes are learned, then recognised
    // slots 9 and 10 are stored again (BINPUT over them): "size" and "addr" swap
    b += std::string("\x8c\x04size") + "q\x09" + "0" + "\x8c\x04" + "addr" + "q\x0a" + "0";
    b += entry(0x50);  // the same bytes, now meaning size=0x50, addr=0x20
    b += entry(0x60) + entry(0x70);  // the fast path stops 16 bytes before the end
    b += std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 6);
    CHECK(t[0].addr == 0x10);
    CHECK(t[1].addr == 0x30);
    CHECK(t[2].addr == 0x40);
    CHECK(t[2].size == 0x20);
    CHECK(t[3].addr == 0x20);
    CHECK(t[3].size == 0x50);
}

// (snap41) A template may hold strings: compile_context as a BINGET of a memoized string (its id
// read when the template was learned) and user_metadata as a fresh SHORT_BINUNICODE (its text
// read per entry). Another text of the same length is read as written; a BINPUT over the
// memoized string's slot drops the template with the keys.
TEST_CASE("entry templates with strings read each text and follow an overwritten memo slot") {
    const auto s = memo_str;
    const auto h = memo_get;
    const std::string M = k_memoize;
    std::string b = trace_preamble();
    // entry 6 (general path): keys 7 action, 8 alloc, 9 addr, 10 size, 11 compile_context,
    // 12 "ctx-a", 13 user_metadata, 14 "N/A"
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + "K\x10" + s("size") + "K\x20" + s("compile_context") +
         s("ctx-a") + s("user_metadata") + s("N/A") + "u";
    auto entry = [&](int addr, const char* um) {  // the dict and the fresh string take two memo ids
        // the action as a LONG_BINGET, as Python's pickler writes it past slot 255: a template's action
        return "}" + M + "(" + h(7) + long_get(8) + h(9) + "K" + char(addr) + h(10) + "K\x20" + h(11) + h(12) + h(13) + s(um) +
               "u";
    };
    b += entry(0x30, "N/A") + entry(0x31, "N/A") + entry(0x32, "N/A");  // learned, then matched
    b += entry(0x33, "N/B") + entry(0x34, "xy") + entry(0x35, "N/A");    // another text, another length
    b += std::string("\x8c\x05") + "ctx-b" + "q\x0c" + "0";               // slot 12 stored again
    for (int i = 0; i < 12; ++i) b += entry(0x40 + i, "N/A");              // the same bytes, now ctx-b
    b += std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 19);
    auto cc = [&](std::size_t i) { return std::string(snap.entry_contexts[t[i].context].compile_context); };
    auto um = [&](std::size_t i) { return std::string(snap.entry_contexts[t[i].context].user_metadata); };
    for (std::size_t i = 0; i < 7; ++i) {
        CHECK(cc(i) == "ctx-a");
        CHECK(t[i].addr == (i == 0 ? 0x10 : 0x2f + static_cast<int>(i)));
    }
    CHECK(um(0) == "N/A");
    CHECK(um(3) == "N/A");
    CHECK(um(4) == "N/B");
    CHECK(um(5) == "xy");
    CHECK(um(6) == "N/A");
    for (std::size_t i = 7; i < 19; ++i) {
        CHECK(cc(i) == "ctx-b");
        CHECK(um(i) == "N/A");
        CHECK(t[i].addr == 0x40 + static_cast<int>(i) - 7);
        CHECK(t[i].size == 0x20);
    }
}

// A MARK ... APPENDS batch of trace entries is decoded straight into the trace (snap28). Any
// other opcode inside the batch first puts the entries read so far on the stack as records, so
// it sees the stack the general path builds: the same entries, results and errors.
TEST_CASE("a batch of trace entries: other opcodes inside it see the general path's stack") {
    const auto s = memo_str;
    const auto h = memo_get;
    const std::string M = k_memoize;
    // entry 6 (general path, first of the list's first batch): keys 7 action, 8 alloc, 9 addr, 10 size
    const std::string head = trace_preamble() + "}" + M + "(" + s("action") + s("alloc") + s("addr") +
                             "K\x10" + s("size") + "K\x20" + "u" + "e";
    auto entry = [&](int addr) {  // the fast path's shape
        return "}" + M + "(" + h(7) + h(8) + h(9) + "K" + char(addr) + h(10) + "K\x20" + "u";
    };
    const std::string tail = std::string("e") + "u" + ".";  // device_traces, the top dict
    auto addrs = [&](const std::string& batch) {
        const snap::snapshot snap = snap::load_snapshot_bytes(P(head + batch + tail), "t.pickle");
        REQUIRE(snap.device_traces.size() == 1);
        std::vector<int> a;
        for (const auto& e : snap.device_traces[0]) a.push_back(static_cast<int>(e.addr));
        return a;
    };
    const std::string e1 = entry(0x31), e2 = entry(0x32), e3 = entry(0x33);
    CHECK(addrs("(" + e1 + e2 + e3 + "e") == std::vector<int>{0x10, 0x31, 0x32, 0x33});
    CHECK(addrs("(" + e1 + e2 + "0" + e3 + "e") == std::vector<int>{0x10, 0x31, 0x33});  // POP
    CHECK(addrs("(" + e1 + e2 + "1" + "(" + e3 + "e") == std::vector<int>{0x10, 0x33});  // POP_MARK
    CHECK(addrs("(" + e1 + e2 + "\x90") == std::vector<int>{0x10, 0x31, 0x32});  // ADDITEMS
    CHECK(addrs("(" + e1 + e2 + "e" + "(" + e3 + "e") == std::vector<int>{0x10, 0x31, 0x32, 0x33});
    // a FRAME between entries, and one that announces more than is left
    const std::string frame5 = std::string("\x95\x05\0\0\0\0\0\0\0", 9);
    CHECK(addrs("(" + e1 + frame5 + e2 + e3 + "e") == std::vector<int>{0x10, 0x31, 0x32, 0x33});
    const std::string huge = std::string("\x95\0\0\0\0\0\x01\0\0", 9);
    CHECK(error_of(P(head + "(" + e1 + huge + e2 + e3 + "e" + tail)).find("truncated: FRAME announces") !=
          std::string::npos);
    // a record used twice (DUP), put in a tuple, left open at STOP
    CHECK(error_of(P(head + "(" + e1 + e2 + "2" + "e" + tail)).find("record that was already consumed") != std::string::npos);
    CHECK(error_of(P(head + "(" + e1 + e2 + "t" + tail)).find("outside a list of trace entries") != std::string::npos);
    CHECK(error_of(P(head + "(" + e1 + e2 + ".")).find("STOP with an open MARK") != std::string::npos);
    // a dict that is not an entry ends the batch; the general path reads it, and the list's
    // check names it
    CHECK(error_of(P(head + "(" + e1 + "}" + "(" + s("addr") + "K\x01" + "u" + e2 + "e" + tail))
              .find("byte 128: 'device_traces' item holds something other than trace entry dicts") != std::string::npos);
    // the stack limit: 6 values below the batch, so the 11th entry of a batch is the 17th value
    snap::load_limits lim;
    lim.max_stack = 16;
    std::string batch = "(";
    std::size_t eleventh = 0;
    for (int i = 0; i < 12; ++i) {
        if (i == 10) eleventh = 2 + head.size() + batch.size();  // P's 2 bytes
        batch += entry(0x40 + i);
    }
    const std::string msg = error_of(P(head + batch + "e" + tail), lim);
    CHECK(msg.find("byte " + std::to_string(eleventh) + ": limit exceeded") != std::string::npos);
    CHECK(msg.find("values on the stack") != std::string::npos);
    lim.max_stack = 17;
    CHECK(error_of(P(head + batch + "e" + tail), lim).find("byte " + std::to_string(eleventh + entry(0).size())) !=
          std::string::npos);
}

// Action values read as LONG_BINGETs are remembered by memo id (snap27); a LONG_BINPUT over
// that id must change the action of the entries after it.
TEST_CASE("trace entry actions remembered by memo id follow an overwritten memo slot") {
    const auto s = memo_str;
    const std::string M = k_memoize;
    const auto lg = long_get;
    std::string b = trace_preamble();
    for (int i = 0; i < 300; ++i) b += s("filler") + "0";  // memo ids 6-305, popped
    // entry 306 (general path): keys 307 action, 308 alloc, 309 addr
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + "K\x10" + "u";
    auto entry = [&](int addr) {  // fast path: the action value as LONG_BINGET 308
        return "}" + M + "(" + lg(307) + lg(308) + lg(309) + "K" + char(addr) + "u";
    };
    b += entry(0x30) + entry(0x40);  // the action's memo id is remembered
    // id 308 is stored again (LONG_BINPUT over it): "free_completed"
    b += std::string("\x8c\x0e") + "free_completed" + "r" + lg(308).substr(1) + "0";
    b += entry(0x50);  // the same bytes, now a free_completed
    b += entry(0x60) + entry(0x70) + entry(0x74);  // the fast path stops 16 bytes before the end
    b += std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 7);
    CHECK(t[0].kind == snap::action_kind::alloc);
    CHECK(t[1].kind == snap::action_kind::alloc);
    CHECK(t[2].kind == snap::action_kind::alloc);
    CHECK(t[3].kind == snap::action_kind::free_completed);
    CHECK(t[3].addr == 0x50);
    CHECK(t[4].kind == snap::action_kind::free_completed);
}

// Whole trace entries are matched against a template of their bytes (snap30): learned from an
// entry the key loop read, it maps fixed places to fields as long as the key bytes do. An entry
// whose opcodes or lengths differ takes the key loop, and a memo slot stored again (here the
// keys "addr" and "size" swapped by LONG_BINPUTs) drops the template with the keys.
TEST_CASE("trace entry templates: other widths take the key loop, an overwritten key slot drops them") {
    const auto s = memo_str;
    const std::string M = k_memoize;
    const auto lg = long_get;
    auto i4 = [](std::uint32_t v) {  // BININT
        std::string r = "J";
        for (int i = 0; i < 4; ++i) r += char((v >> (8 * i)) & 0xff);
        return r;
    };
    const auto l1 = long1;
    std::string b = trace_preamble();
    for (int i = 0; i < 300; ++i) b += s("filler") + "0";  // memo ids 6-305, popped
    // entry 306 (general path): keys 307 action, 308 alloc, 309 addr, 310 size
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + l1(0x10, 6) + s("size") + i4(0x100) + "u";
    auto entry = [&](const std::string& addr, const std::string& size) {
        return "}" + M + "(" + lg(307) + lg(308) + lg(309) + addr + lg(310) + size + "u";
    };
    b += entry(l1(0x7f0000000020, 6), i4(0x200));  // the key loop; the template is learned
    b += entry(l1(0x7f0000000030, 6), i4(0x300));  // the template
    b += entry(l1(0x7f0000000040, 6), "K\x05");    // another opcode: the key loop
    b += entry(l1(0x40, 1), i4(0x500));            // another LONG1 length: the key loop
    b += entry(l1(0xffffffffff80, 6), i4(0x600));  // the template; a negative LONG1
    // ids 309 and 310 stored again (LONG_BINPUT): "size" and "addr" swap
    b += std::string("\x8c\x04size") + "r" + lg(309).substr(1) + "0" + "\x8c\x04" + "addr" + "r" + lg(310).substr(1) + "0";
    b += entry(l1(0x70, 6), "K\x07");  // the key loop: a template with BININT1 is learned
    b += entry(l1(0x71, 6), i4(0x7f000071));  // the skeleton of the dropped template: size first now
    for (int i = 0; i < 4; ++i) b += entry(l1(0x80 + i, 6), i4(0x7f000080));  // the template's range ends 80 bytes early
    b += std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 12);
    CHECK(t[0].addr == 0x10);
    CHECK(t[1].addr == 0x7f0000000020);
    CHECK(t[2].addr == 0x7f0000000030);
    CHECK(t[2].size == 0x300);
    CHECK(t[2].kind == snap::action_kind::alloc);
    CHECK(t[3].size == 5);
    CHECK(t[4].addr == 0x40);
    CHECK(t[4].size == 0x500);
    CHECK(t[5].addr == -0x80);
    CHECK(t[5].size == 0x600);
    CHECK(t[6].size == 0x70);
    CHECK(t[6].addr == 7);
    CHECK(t[7].size == 0x71);  // a template kept across the overwrite would read addr 0x71 here
    CHECK(t[7].addr == 0x7f000071);
    for (std::size_t i = 8; i < 12; ++i) {
        CHECK(t[i].size == static_cast<std::int64_t>(0x80 + i - 8));
        CHECK(t[i].addr == 0x7f000080);
    }
}

// After a template's head (snap33), a frames value that is a BINGET is read in place and a
// SETITEMS right after it ends the entry; a BINGET of anything but a frames list, or another key
// after the frames, is left to the key loop and the general path, with their results and errors.
TEST_CASE("trace entry templates: the frames BINGET and SETITEMS after the head") {
    const auto s = memo_str;
    const std::string M = k_memoize;
    const auto lg = long_get;
    auto l1 = [](std::uint64_t v) { return long1(v, 6); };
    auto pickle = [&](bool bad) {
        std::string b = trace_preamble();
        for (int i = 0; i < 300; ++i) b += s("filler") + "0";  // memo ids 6-305, popped
        // entry 306 (general path): keys 307 action, 308 alloc, 309 addr, 310 size, 311 frames,
        // list 312 of frame dict 313 (keys and values 314-318), key 319 stream after the frames
        b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + l1(0x10) + s("size") + std::string("J\x00\x01\x00\x00", 5) +
             s("frames") + "]" + M + "(" + "}" + M + "(" + s("name") + s("f") + s("filename") + s("a.py") + s("line") +
             "K\x01" + "u" + "e" + s("stream") + std::string("K\x00", 2) + "u";
        auto entry = [&](std::uint64_t addr, const std::string& frames, const std::string& tail) {
            return "}" + M + "(" + lg(307) + lg(308) + lg(309) + l1(addr) + lg(310) + std::string("J\x00\x02\x00\x00", 5) + lg(311) +
                   frames + tail;
        };
        const std::string stream1 = lg(319) + "K\x01" + "u";
        b += entry(0x20, lg(312), stream1);  // the key loop; the template (head through "frames") is learned
        b += entry(0x30, lg(312), stream1);  // the template, then the key loop for "stream"
        b += entry(0x40, lg(312), "u");      // the template, SETITEMS after the frames
        b += entry(0x50, lg(bad ? 307 : 312), "u");  // bad: the frames value names the string "action"
        b += entry(0x60, lg(312), stream1);
        for (int i = 0; i < 4; ++i) b += entry(0x70 + i, lg(312), "u");  // the template's range ends 80 bytes early
        b += std::string("e") + "e" + "u" + ".";
        return P(b);
    };
    const snap::snapshot snap = snap::load_snapshot_bytes(pickle(false), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 10);
    const std::int64_t stream[] = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0};
    const std::int64_t addr[] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x71, 0x72, 0x73};
    for (std::size_t i = 0; i < t.size(); ++i) {
        CAPTURE(i);
        CHECK(t[i].addr == addr[i]);
        CHECK(t[i].size == (i == 0 ? 0x100 : 0x200));
        CHECK(t.stream(i) == stream[i]);
        CHECK(t[i].frames == t[0].frames);
        CHECK(t[i].kind == snap::action_kind::alloc);
    }
    CHECK(std::string(snap.top_frame(t[4].frames)->filename) == "a.py");
    // The general path's error, at that entry
    CHECK(error_of(pickle(true)).find("field 'frames' is not a list of {name, filename, line} frames") !=
          std::string::npos);
}

// The memo ids of trace entry dicts the fast path consumed take no slot (docs/snapshot.md,
// snap25): a BINGET of one is the consumed-record error, one stored again (BINPUT) reads back,
// and the ids after them read their own values across many 64-id words.
TEST_CASE("memo ids of consumed trace entries: no slot, stored again, and the ids after them") {
    const auto s = memo_str;
    const auto h = memo_get;
    const std::string M = k_memoize;
    std::string b = trace_preamble();
    // entry 6 (general path): keys 7 action, 8 alloc, 9 addr, 10 size
    b += "}" + M + "(" + s("action") + s("alloc") + s("addr") + "K\x10" + s("size") + "K\x20" + "u";
    auto entry = [&](int addr, const std::string& size_key) {  // fast path: one memo id, consumed
        return "}" + M + "(" + h(7) + h(8) + h(9) + "K" + char(addr) + size_key + "K\x20" + "u";
    };
    for (int i = 0; i < 200; ++i) b += entry(0x30, h(10));  // ids 11..210
    // id 211 a string between consumed ids; ids 212..245 entries again
    b += s("size") + "0";
    for (int i = 0; i < 34; ++i) b += entry(0x31, h(10));
    // a string stored over consumed id 100 (BINPUT), then read as a key twice
    b += std::string("\x8c\x04size") + "q\x64" + "0";
    b += entry(0x40, h(100)) + entry(0x41, h(211)) + entry(0x42, h(100));
    b += entry(0x43, h(10)) + entry(0x44, h(10));  // the fast path stops 16 bytes before the end
    const std::string tail = std::string("e") + "e" + "u" + ".";
    const snap::snapshot snap = snap::load_snapshot_bytes(P(b + tail), "t.pickle");
    REQUIRE(snap.device_traces.size() == 1);
    const auto& t = snap.device_traces[0];
    REQUIRE(t.size() == 1 + 200 + 34 + 5);
    CHECK(t[200].addr == 0x30);
    CHECK(t[201].addr == 0x31);
    for (std::size_t i = 235; i < 240; ++i) {
        CAPTURE(i);
        CHECK(t[i].addr == static_cast<std::int64_t>(0x40 + i - 235));
        CHECK(t[i].size == 0x20);
    }
    // a consumed id read back: the same error as when it had a slot
    CHECK(error_of(P(b + "h\x0b" + tail)).find("memo index 11 refers to a record that was already consumed") !=
          std::string::npos);
    CHECK(error_of(P(b + std::string("j\xf5\x00\x00\x00", 5) + tail)).find("memo index 245 refers to a record that was already consumed") !=
          std::string::npos);
}

// finish_snapshot checks a trace in one pass over its chunks and runs the naming loop only when
// something is out of range: the same errors, and the 4 EiB total checked every 4096 entries.
TEST_CASE("trace sizes out of range and allocation totals past 4 EiB are named as before") {
    auto trace = [](const std::vector<std::string>& entries) {
        std::string s = R"({"segments": [], "device_traces": [[)";
        for (std::size_t i = 0; i < entries.size(); ++i) s += (i ? "," : "") + entries[i];
        return s + "]]}";
    };
    auto entry = [](const char* action, std::int64_t size) {
        return std::string(R"({"action": ")") + action + R"(", "addr": 4096, "size": )" + std::to_string(size) + "}";
    };
    CHECK(error_of(trace({entry("alloc", 8), entry("free_completed", -1)}), {}).find("device_traces[0][1]: size = -1 is out of range") !=
          std::string::npos);
    const std::int64_t pib = std::int64_t{1} << 50;  // the largest size in range
    CHECK(error_of(trace({entry("alloc", pib + 1)})).find("device_traces[0][0]: size") != std::string::npos);
    // 4096 allocations of 1 PiB are exactly 4 EiB (allowed), one more is past it.
    std::vector<std::string> es(4096, entry("alloc", pib));
    CHECK(error_of(trace(es)).empty());
    es.push_back(entry("free_completed", pib));  // frees are not counted
    CHECK(error_of(trace(es)).empty());
    es.push_back(entry("alloc", 1));
    CHECK(error_of(trace(es)).find("trace allocations add up to more than 4 EiB") != std::string::npos);
    // (snap33) The total is summed as the entries are read: one that wraps past 2^64 is caught too.
    es.assign(16385, entry("alloc", pib));
    CHECK(error_of(trace(es)).find("trace allocations add up to more than 4 EiB") != std::string::npos);
    es.assign(5000, entry("segment_alloc", pib));
    es[4999] = entry("alloc", -5);  // a bad size after the total passed: the first error is named
    CHECK(error_of(trace(es)).find("add up to more than 4 EiB") != std::string::npos);
    const auto ok = snap::load_snapshot_bytes(trace({entry("alloc", 8), entry("free_completed", 8)}), "t.json");
    CHECK(!ok.info.has_time_us);
}
