// JSON snapshots through nlohmann's SAX interface: no document tree is built; values go
// straight into the model, frames are interned as in the pickle reader.
#include "parsers/snapshot/json_reader.h"

#include <iterator>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "parsers/snapshot/pickle_common.h"

namespace oomdx::snap {
namespace {

enum class ctx : std::uint8_t {
    root, top, segments, segment, blocks, block, history, history_item, traces, device, entry,
    frames, frame, pool, annotations, annotation, capture, skip
};

struct level {
    ctx c;
    std::uint32_t key = ~0u;     // key id of the member being read in this object
    std::size_t frames_begin = 0;  // frames: start in m_scratch
    ctx owner = ctx::root;         // frames/pool: the object that owns the array
    std::vector<segment>* target = nullptr;  // segments: where segments go
};

class json_handler {
public:
    json_handler(const std::string& name, const load_limits& lim, snapshot& out)
        : m_name(name), m_lim(lim), m_out(out), m_pool(out.strings()), m_frames(out) {}

    // ---- SAX interface ----------------------------------------------------------------
    bool null() { return scalar(sv{sv::k_null}); }
    bool boolean(bool b) { return scalar(sv{sv::k_int, b ? 1 : 0}); }
    bool number_integer(std::int64_t v) { return scalar(sv{sv::k_int, v}); }
    bool number_unsigned(std::uint64_t v) { return scalar(sv{sv::k_int, static_cast<std::int64_t>(v), 0, 0, true}); }
    bool number_float(double d, const std::string&) { return scalar(sv{sv::k_float, saturate_to_int64(d), d}); }
    bool string(std::string& s) {
        check_string(s);
        return scalar(sv{sv::k_str, 0, 0, m_pool.intern(s)});
    }
    bool binary(nlohmann::json::binary_t&) { return scalar(sv{sv::k_null}); }
    bool key(std::string& k) {
        check_string(k);
        level& l = m_stack.back();
        l.key = m_pool.intern(k);
        if (l.c == ctx::capture) m_capture_key.back() = k;
        return true;
    }
    bool start_object(std::size_t) {
        push_depth();
        level& parent = m_stack.back();
        ctx c = ctx::skip;
        switch (parent.c) {
        case ctx::root: c = ctx::top; m_out.info.top_level = "dict"; break;
        case ctx::segments: c = ctx::segment; m_seg = segment{}; m_seg_has_addr.clear(); break;
        case ctx::blocks: c = ctx::block; m_block = block{}; m_block_req = -1; m_block_has_addr = false; break;
        case ctx::history: c = ctx::history_item; m_hist_index++; break;
        case ctx::device: c = ctx::entry; m_entry = trace_event{}; m_cc = m_um = no_str; break;
        case ctx::frames: c = ctx::frame; m_fn = m_nm = no_str; m_line = 0; break;
        case ctx::annotations: c = ctx::annotation; m_ann = annotation{}; break;
        case ctx::top:
            if (parent.key == k_allocator_settings) {
                c = ctx::capture;
                m_out.info.has_allocator_settings = true;
                m_out.allocator_settings = nlohmann::json::object();
                m_capture.push_back(&m_out.allocator_settings);
                m_capture_key.emplace_back();
            }
            break;
        case ctx::capture: {
            nlohmann::json* j = capture_slot();
            *j = nlohmann::json::object();
            m_capture.push_back(j);
            m_capture_key.emplace_back();
            c = ctx::capture;
            break;
        }
        default: break;
        }
        m_stack.push_back(level{c});
        return true;
    }
    bool end_object() {
        level l = m_stack.back();
        m_stack.pop_back();
        --m_depth;
        switch (l.c) {
        case ctx::segment: {
            std::int64_t next = m_seg.address;
            for (auto& b : m_seg.blocks) {
                if (b.address_derived) b.address = next;
                next = wrapping_add(b.address, b.size);  // validated after reading
            }
            m_stack.back().target->push_back(std::move(m_seg));
            m_seg = segment{};
            break;
        }
        case ctx::block:
            m_block.requested_size = m_block_req >= 0 ? m_block_req : m_hist_req >= 0 ? m_hist_req : m_block.size;
            m_block.address_derived = !m_block_has_addr;
            m_seg.blocks.push_back(m_block);
            break;
        case ctx::entry:
            if (m_cc != no_str || m_um != no_str) m_entry.context = context_of();
            m_out.device_traces.back().push_back(m_entry);
            break;
        case ctx::frame:
            m_scratch.push_back(m_frames.intern_frame(m_fn == no_str ? empty_id() : m_fn,
                                                      m_nm == no_str ? empty_id() : m_nm, m_line));
            break;
        case ctx::annotation: m_out.external_annotations.push_back(m_ann); break;
        case ctx::capture:
            m_capture.pop_back();
            m_capture_key.pop_back();
            break;
        default: break;
        }
        return true;
    }
    bool start_array(std::size_t) {
        push_depth();
        level& parent = m_stack.back();
        level l{ctx::skip};
        const std::uint32_t k = parent.key;
        switch (parent.c) {
        case ctx::root:
            l.c = ctx::segments;
            l.target = &m_out.segments;
            m_out.info.top_level = "list";
            break;
        case ctx::top:
            if (k == k_segments || k == k_host_segments) {
                l.c = ctx::segments;
                l.target = k == k_segments ? &m_out.segments : &m_out.host_segments;
                if (k == k_segments) m_have_segments = true;
            } else if (k == k_device_traces || k == k_traces) {
                l.c = ctx::traces;
                m_out.info.has_traces_key = true;
            } else if (k == k_external_annotations) {
                l.c = ctx::annotations;
                m_out.info.has_external_annotations = true;
            }
            break;
        case ctx::traces:
            l.c = ctx::device;
            m_out.device_traces.emplace_back();
            break;
        case ctx::segment:
            if (k == k_blocks) l.c = ctx::blocks;
            else if (k == k_frames) l.c = ctx::frames;
            else if (k == k_segment_pool_id) { l.c = ctx::pool; m_pool_n = 0; }
            break;
        case ctx::block:
            if (k == k_frames) l.c = ctx::frames;
            else if (k == k_history) { l.c = ctx::history; m_block.has_history = true; m_hist_index = -1; m_hist_req = -1; }
            break;
        case ctx::history_item:
        case ctx::entry:
            if (k == k_frames) l.c = ctx::frames;
            break;
        case ctx::capture: {
            nlohmann::json* j = capture_slot();
            *j = nlohmann::json::array();
            m_capture.push_back(j);
            m_capture_key.emplace_back();
            l.c = ctx::capture;
            break;
        }
        default: break;
        }
        if (l.c == ctx::frames) {
            l.owner = parent.c;
            l.frames_begin = m_scratch.size();
        }
        m_stack.push_back(l);
        return true;
    }
    bool end_array() {
        level l = m_stack.back();
        m_stack.pop_back();
        --m_depth;
        if (l.c == ctx::frames) {
            frames_id id = m_frames.intern_list(m_scratch.data() + l.frames_begin,
                                                m_scratch.size() - l.frames_begin);
            m_scratch.resize(l.frames_begin);
            switch (l.owner) {
            case ctx::segment: m_seg.frames = id; break;
            case ctx::block: m_block.frames = id; break;
            case ctx::history_item: if (m_hist_index == 0) m_block.frames = id; break;
            case ctx::entry: m_entry.frames = id; break;
            default: break;
            }
        } else if (l.c == ctx::pool) {
            m_seg.has_pool_id = m_pool_n == 2;
        } else if (l.c == ctx::capture) {
            m_capture.pop_back();
            m_capture_key.pop_back();
        }
        return true;
    }
    bool parse_error(std::size_t pos, const std::string&, const nlohmann::json::exception& ex) {
        // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
        // parsing value - invalid string: ill-formed UTF-8 byte; last read: '...'" -> the reason.
        std::string what = ex.what();
        if (auto dash = what.find(" - "); dash != std::string::npos) what = what.substr(dash + 3);
        else if (auto colon = what.rfind(": "); colon != std::string::npos) what = what.substr(colon + 2);
        if (auto last = what.find("; last read"); last != std::string::npos) what = what.substr(0, last);
        const std::size_t at = pos > 0 ? pos - 1 : 0;
        throw input_error::at_offset(m_name, static_cast<std::int64_t>(at),
                                     (at < 16 ? "not a memory snapshot (expected a pickle or JSON): invalid JSON: "
                                              : "invalid JSON: ") + what);
    }
    // The reader's position, kept by tracked_char below, for errors raised inside callbacks.
    void track(const char* base, const char* const* pos) {
        m_base = base;
        m_pos = pos;
    }

    void finish() {
        if (m_out.info.top_level == "dict" && !m_have_segments)
            fail("top-level object has no 'segments' key: not a memory snapshot");
        if (m_out.info.top_level.empty()) fail("top-level JSON value is not an object or an array");
        m_out.info.has_compile_context = m_has_cc;
        m_out.info.has_user_metadata = m_has_um;
    }

private:
    struct sv {
        enum kind_t { k_null, k_int, k_float, k_str } kind;
        std::int64_t i = 0;
        double d = 0;
        std::uint32_t s = 0;
        bool is_unsigned = false;
    };
    static constexpr std::uint32_t no_str = ~0u;

    [[noreturn]] void fail(const std::string& msg) const {
        if (!m_pos) throw input_error::in_file(m_name, msg);
        throw input_error::at_offset(m_name, *m_pos - m_base, msg);
    }
    void check_string(const std::string& s) const {
        if (static_cast<std::int64_t>(s.size()) > m_lim.max_string)
            fail("limit exceeded: string of " + std::to_string(s.size()) + " bytes (limit snapshot_string_bytes)");
    }
    void push_depth() {
        if (++m_depth > m_lim.max_depth)
            fail("limit exceeded: nesting deeper than " + std::to_string(m_lim.max_depth) + " (limit snapshot_depth)");
        if (++m_objects > m_lim.max_objects) fail("limit exceeded: more than " + std::to_string(m_lim.max_objects) + " values (limit snapshot_objects)");
    }
    std::uint32_t empty_id() { return m_pool.intern(""); }
    std::int64_t as_int(const sv& v, const char* what) const {
        if (v.kind == sv::k_int || v.kind == sv::k_float) return v.i;
        if (v.kind == sv::k_null) return -1;
        fail(std::string("field '") + what + "' is not a number");
    }
    std::uint32_t as_str(const sv& v, const char* what) const {
        if (v.kind == sv::k_str) return v.s;
        if (v.kind == sv::k_null) return no_str;
        fail(std::string("field '") + what + "' is not a string");
    }
    std::string_view view(std::uint32_t id) { return id == no_str ? std::string_view() : m_pool.view(id); }
    std::uint32_t context_of() {
        const std::uint64_t key = (std::uint64_t(m_cc) << 32) | m_um;
        auto it = m_contexts.find(key);
        if (it != m_contexts.end()) return it->second;
        auto id = static_cast<std::uint32_t>(m_out.entry_contexts.size());
        if (id >= (1u << 24)) fail("limit exceeded: too many distinct compile_context/user_metadata pairs");
        m_out.entry_contexts.push_back(entry_context{view(m_cc), view(m_um)});
        m_contexts.emplace(key, id);
        return id;
    }
    nlohmann::json* capture_slot() {
        nlohmann::json* j = m_capture.back();
        if (j->is_array()) {
            j->push_back(nullptr);
            return &j->back();
        }
        return &(*j)[m_capture_key.back()];
    }

    bool scalar(const sv& v) {
        if (++m_objects > m_lim.max_objects) fail("limit exceeded: more than " + std::to_string(m_lim.max_objects) + " values (limit snapshot_objects)");
        level& l = m_stack.back();
        const std::uint32_t k = l.key;
        switch (l.c) {
        case ctx::root: fail("top-level JSON value is not an object or an array");
        case ctx::segment:
            switch (k) {
            case k_device: m_seg.device = as_int(v, "device"); break;
            case k_address: m_seg.address = as_int(v, "address"); break;
            case k_total_size: m_seg.total_size = as_int(v, "total_size"); break;
            case k_allocated_size: m_seg.allocated_size = as_int(v, "allocated_size"); break;
            case k_active_size: m_seg.active_size = as_int(v, "active_size"); break;
            case k_requested_size: m_seg.requested_size = as_int(v, "requested_size"); break;
            case k_stream: m_seg.stream = as_int(v, "stream"); break;
            case k_segment_type: m_seg.segment_type = view(as_str(v, "segment_type")); break;
            case k_is_expandable: m_seg.is_expandable = as_int(v, "is_expandable") > 0; break;
            default: break;
            }
            break;
        case ctx::block:
            switch (k) {
            case k_address: m_block.address = as_int(v, "address"); m_block_has_addr = true; break;
            case k_size: m_block.size = as_int(v, "size"); break;
            case k_requested_size: m_block_req = as_int(v, "requested_size"); break;
            case k_state:
                m_block.state_text = view(as_str(v, "state"));
                m_block.state = parse_block_state(m_block.state_text);
                break;
            default: break;
            }
            break;
        case ctx::history_item:
            if (m_hist_index == 0 && k == k_real_size) m_hist_req = as_int(v, "real_size");
            if (m_hist_index == 0 && k == k_addr && !m_block_has_addr) m_block.address = as_int(v, "addr");
            break;
        case ctx::entry:
            switch (k) {
            case k_action: {
                std::uint32_t id = as_str(v, "action");
                if (id == no_str) fail("trace entry 'action' is not a string");
                m_entry.action = m_pool.view(id);
                m_entry.kind = parse_action(m_pool.view(id));
                break;
            }
            case k_addr: m_entry.addr = as_int(v, "addr"); break;
            case k_size: m_entry.size = as_int(v, "size"); break;
            case k_stream: m_entry.stream = as_int(v, "stream"); break;
            case k_time_us: m_entry.time_us = as_int(v, "time_us"); break;
            case k_device_free: m_entry.device_free = as_int(v, "device_free"); break;
            case k_compile_context: m_cc = as_str(v, "compile_context"); m_has_cc = true; break;
            case k_user_metadata: m_um = as_str(v, "user_metadata"); m_has_um = true; break;
            default: break;
            }
            break;
        case ctx::frame:
            if (k == k_name) m_nm = as_str(v, "name");
            else if (k == k_filename) m_fn = as_str(v, "filename");
            else if (k == k_line) m_line = as_int(v, "line");
            break;
        case ctx::pool:
            if (m_pool_n == 0) m_seg.pool_id_0 = as_int(v, "segment_pool_id");
            else if (m_pool_n == 1) m_seg.pool_id_1 = as_int(v, "segment_pool_id");
            ++m_pool_n;
            break;
        case ctx::annotation:
            if (k == k_name) m_ann.name = view(as_str(v, "name"));
            else if (k == k_stage) m_ann.stage = view(as_str(v, "stage"));
            else if (k == k_device) m_ann.device = as_int(v, "device");
            else if (k == k_time_us) m_ann.time_us = as_int(v, "time_us");
            break;
        case ctx::capture: {
            nlohmann::json* j = capture_slot();
            switch (v.kind) {
            case sv::k_null: *j = nullptr; break;
            case sv::k_int: *j = v.is_unsigned ? nlohmann::json(static_cast<std::uint64_t>(v.i)) : nlohmann::json(v.i); break;
            case sv::k_float: *j = v.d; break;
            case sv::k_str: *j = std::string(m_pool.view(v.s)); break;
            }
            break;
        }
        case ctx::segments:
        case ctx::blocks:
        case ctx::device:
        case ctx::traces:
            if (v.kind != sv::k_null) fail("expected an object in a list of segments, blocks or trace entries");
            break;
        case ctx::frames:
            fail("'frames' holds something other than {name, filename, line} objects");
        default: break;
        }
        return true;
    }

    const std::string& m_name;
    const load_limits& m_lim;
    snapshot& m_out;
    string_pool& m_pool;
    frame_interner m_frames;
    std::vector<level> m_stack{level{ctx::root}};
    std::int64_t m_depth = 0, m_objects = 0;
    segment m_seg;
    std::vector<bool> m_seg_has_addr;
    block m_block;
    std::int64_t m_block_req = -1, m_hist_req = -1;
    int m_hist_index = -1;
    bool m_block_has_addr = false;
    trace_event m_entry;
    std::uint32_t m_cc = no_str, m_um = no_str;
    std::uint32_t m_fn = no_str, m_nm = no_str;
    std::int64_t m_line = 0;
    int m_pool_n = 0;
    annotation m_ann;
    std::vector<frame_id> m_scratch;
    std::vector<nlohmann::json*> m_capture;
    std::vector<std::string> m_capture_key;
    std::unordered_map<std::uint64_t, std::uint32_t> m_contexts;
    bool m_have_segments = false, m_has_cc = false, m_has_um = false;
    const char* m_base = nullptr;
    const char* const* m_pos = nullptr;
};

// A character iterator that publishes how far the JSON reader has read.
struct tracked_char {
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    const char* p = nullptr;
    const char** pos = nullptr;
    reference operator*() const { return *p; }
    tracked_char& operator++() {
        *pos = ++p;
        return *this;
    }
    tracked_char operator++(int) {
        tracked_char t = *this;
        ++*this;
        return t;
    }
    bool operator==(const tracked_char& o) const { return p == o.p; }
    bool operator!=(const tracked_char& o) const { return p != o.p; }
};

}  // namespace

void read_json(std::string_view data, const std::string& name, const load_limits& limits,
               snapshot& out) {
    intern_known_keys(out.strings());
    out.info.format = "json";
    json_handler h(name, limits, out);
    const char* pos = data.data();
    h.track(data.data(), &pos);
    nlohmann::json::sax_parse(tracked_char{data.data(), &pos}, tracked_char{data.data() + data.size(), &pos}, &h);
    h.finish();
    finish_snapshot(out);
}

}  // namespace oomdx::snap
