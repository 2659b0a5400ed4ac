// Restricted unpickler for memory snapshots.
//
// A small stack machine over the data opcodes only. Containers live in a node pool; when a
// container is placed into its parent it is "settled": frame dicts become interned frame ids,
// lists of frames become interned frame lists, and record dicts (trace entries, blocks,
// segments) appended to a list are converted into the model's structs and stored in the
// list's typed storage. Memo slots follow: a settled object's slot then holds its interned id,
// so the thousands of later references to a shared frame or frame list cost one lookup and
// are never copied. Nodes of consumed records are recycled.
#include "parsers/snapshot/pickle_reader.h"
#include "parsers/snapshot/read_ahead.h"

#include <algorithm>
#include <array>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <memory>
#include <new>
#include <type_traits>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/utf8.h"
#include "parsers/snapshot/list_span_cache.h"
#include "parsers/snapshot/pickle_common.h"
#include "parsers/snapshot/pickle_opcodes.h"

namespace oomdx::snap {
namespace {

enum class vt : std::uint8_t {
    unset,  // 0: a zero-filled memo chunk reads as unset
    none, boolean, integer, uint64, floating, str, node, frame, frames, consumed,
    record  // a trace entry decoded by the fast path, waiting in m_records[a] for its list
};

struct val {
    vt t = vt::unset;
    std::uint32_t a = 0;  // string id, node id, frame id, frames id
    std::int64_t i = 0;   // integer value, float bits, node generation
};

// The value stack: a vector whose push is inlined (std::vector's is not, for its growth path).
class val_stack {
public:
    std::size_t size() const { return m_size; }
    val& back() { return m_data[m_size - 1]; }
    val& operator[](std::size_t i) { return m_data[i]; }
    [[gnu::always_inline]] void push_back(const val& v) {
        if (m_size == m_cap) [[unlikely]] grow(m_cap ? m_cap * 2 : 64);
        m_data[m_size++] = v;
    }
    void resize(std::size_t n) {  // shrinks only
        if (n < m_size) m_size = n;
    }
    void reserve(std::size_t n) {
        if (n > m_cap) grow(n);
    }

private:
    // Raw storage: slots are written before they are read, and a page is touched only when
    // the stack reaches it (value-initialising the 4096 reserved slots faulted in 64 KiB).
    [[gnu::noinline]] void grow(std::size_t cap) {
        std::unique_ptr<val[], raw_delete> d(static_cast<val*>(::operator new[](cap * sizeof(val))));
        if (m_size) std::memcpy(static_cast<void*>(d.get()), m_data.get(), m_size * sizeof(val));
        m_data = std::move(d);
        m_cap = cap;
    }
    struct raw_delete {
        void operator()(val* p) const { ::operator delete[](static_cast<void*>(p)); }
    };
    std::unique_ptr<val[], raw_delete> m_data;
    std::size_t m_size = 0, m_cap = 0;
};

enum class nk : std::uint8_t { free, list, dict, tuple };

struct node {
    nk kind = nk::free;
    bool resolved = false;  // settled into `res`
    bool consumed = false;  // moved into a record; no longer usable
    bool visiting = false;  // cycle guard for to_json
    std::uint32_t gen = 0;
    std::uint32_t depth = 0;
    std::uint32_t refs = 0;  // references from the stack
    std::int64_t memo = -1;
    val res;
    std::vector<val> items;  // list/tuple items, or dict key,value pairs
    trace_list entries;
    std::vector<block> blocks;
    std::vector<segment> segs;
};

constexpr std::uint64_t bit(key_id k) { return std::uint64_t(1) << k; }

// The memo in chunks of 512 Ki slots of 4 bytes (2 MiB; no reallocation copies): zero-filled
// block_pool::array_block blocks, and zero reads as unset. A slot is a tag and a payload: a
// string, frame or frame-list id, or the index of a value kept whole in a side array (a
// container being built, a number, an id that does not fit in 28 bits).
//
// A consumed record appended at the end (a trace entry dict the fast path read: three of
// four memo ids of a Python-written trace) takes no slot: one bit per id (`m_words`, 64 ids a
// word, with the count of such ids before the word) says "consumed", and the other ids are
// stored in order without gaps. A slot index is the id less the consumed ids before it. A
// consumed id later stored again keeps its bit; its value is in `m_over` (rare: a BINPUT over
// a trace entry's slot).
class memo_table {
    static constexpr std::size_t k_shift = 19;
    static constexpr std::size_t k_chunk = std::size_t(1) << k_shift;
    static_assert(k_chunk * sizeof(std::uint32_t) <= block_pool::k_block);
    static constexpr std::size_t k_step = (std::size_t(64) << 10) / sizeof(std::uint32_t);

public:
    enum tag : std::uint32_t { t_unset, t_consumed, t_str, t_frame, t_frames, t_boxed };
    static constexpr unsigned k_tag_shift = 28;
    static constexpr std::uint32_t k_payload = (std::uint32_t(1) << k_tag_shift) - 1;
    static tag tag_of(std::uint32_t raw) { return static_cast<tag>(raw >> k_tag_shift); }
    static std::uint32_t payload(std::uint32_t raw) { return raw & k_payload; }
    static constexpr std::uint32_t make(tag t, std::uint32_t x) { return (std::uint32_t(t) << k_tag_shift) | x; }

    std::size_t size() const { return m_size; }
    [[gnu::always_inline]] std::uint32_t raw(std::size_t i) const {
        if (i < m_clean) return slot(i);
        const word& w = m_words[i >> 6];
        const std::uint64_t b = std::uint64_t(1) << (i & 63);
        if (w.gone & b) [[unlikely]] return gone_value(i);
        return slot(i - w.before - ones(w.gone & (b - 1)));
    }
    // Raw slot of id i < size(), reading the first chunk (where a trace's keys and frame dicts
    // usually are) without the chunk table: one load instead of three dependent ones.
    [[gnu::always_inline]] std::uint32_t raw_near(std::size_t i) const {
        if (i < m_clean) return i < k_chunk ? m_first[i] : slot(i);  // before any id went
        const word& w = m_words[i >> 6];
        const std::uint64_t b = std::uint64_t(1) << (i & 63);
        if (w.gone & b) [[unlikely]] return gone_value(i);
        const std::size_t k = i - w.before - ones(w.gone & (b - 1));
        return k < k_chunk ? m_first[k] : slot(k);
    }
    val get(std::size_t i) const {
        const std::uint32_t r = raw(i);
        switch (tag_of(r)) {
        case t_unset: return val{};
        case t_consumed: return val{vt::consumed};
        case t_str: return val{vt::str, payload(r), 0};
        case t_frame: return val{vt::frame, payload(r), 0};
        case t_frames: return val{vt::frames, payload(r), 0};
        default: return m_boxed[payload(r)];
        }
    }
    void set(std::size_t i, const val& v) {
        const word& w = m_words[i >> 6];
        const std::uint64_t b = std::uint64_t(1) << (i & 63);
        if (w.gone & b) [[unlikely]] {
            std::uint32_t& s = m_over[i];  // unset (0) when new: nothing to free
            if (tag_of(s) == t_boxed) m_box_free.push_back(payload(s));
            s = encode(v);
            return;
        }
        std::uint32_t& s = slot(i - w.before - ones(w.gone & (b - 1)));
        if (tag_of(s) == t_boxed) m_box_free.push_back(payload(s));
        s = encode(v);
    }
    // try_append(val{vt::consumed}): the id's bit only (snap41: no tests of the value).
    [[gnu::always_inline]] void append_consumed() {
        if ((m_size & 63) == 0) [[unlikely]] new_word();
        m_words.back().gone |= std::uint64_t(1) << (m_size & 63);
        if (m_gone++ == 0) m_clean = m_size;
        ++m_size;
    }
    [[gnu::always_inline]] bool try_append(const val& v) {
        if ((m_size & 63) == 0) [[unlikely]] new_word();
        if (v.a <= k_payload && v.t == vt::consumed) {  // no slot: the id's bit
            m_words.back().gone |= std::uint64_t(1) << (m_size & 63);
            if (m_gone++ == 0) m_clean = m_size;
            ++m_size;
            return true;
        }
        if (m_slots >= m_capacity) [[unlikely]] return false;
        std::uint32_t r;
        if (v.a <= k_payload && v.t == vt::str) r = make(t_str, v.a);
        else if (v.a <= k_payload && v.t == vt::frames) r = make(t_frames, v.a);
        else r = encode(v);
        slot(m_slots++) = r;
        ++m_size;
        return true;
    }
    // n ids (n > size()): the new ones unset, each with its slot. Slots below m_capacity have
    // their pages: the first block (from the heap, not prepared ahead) is faulted in 64 KiB at
    // a time with one call each (docs/snapshot.md, snap14); try_append stops at m_capacity.
    void resize(std::size_t n) {
        const std::size_t slots = m_slots + (n - m_size);
        while (m_chunks.size() * k_chunk < slots) m_chunks.push_back(block_pool::array_block(m_chunks.empty()));
        m_first = static_cast<std::uint32_t*>(m_chunks.front().get());
        const std::size_t to = std::min(m_chunks.size() * k_chunk, (slots / k_step + 1) * k_step);
        while (m_capacity < to) {
            if (m_capacity >= k_chunk) {  // pool blocks: prepared ahead by its helper
                m_capacity = m_chunks.size() * k_chunk;
                break;
            }
            populate_write(&slot(m_capacity), k_step * sizeof(std::uint32_t));
            m_capacity += k_step;
        }
        for (; m_size < n; ++m_size) {
            if ((m_size & 63) == 0) new_word();
        }
        m_slots = slots;
    }

private:
    // Bits set in x: the POPCNT instruction where the CPU has it (the build targets baseline
    // x86-64, where the builtin is a library call), else the same count in a few shifts.
#if defined(__x86_64__)
    static inline const bool k_popcnt = __builtin_cpu_supports("popcnt");
#endif
    [[gnu::always_inline]] static std::size_t ones(std::uint64_t x) {
#if defined(__x86_64__)
        if (k_popcnt) [[likely]] {
            std::uint64_t r;
            asm("popcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
            return static_cast<std::size_t>(r);
        }
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
        return static_cast<std::size_t>((x * 0x0101010101010101ULL) >> 56);
#else
        return static_cast<std::size_t>(__builtin_popcountll(x));
#endif
    }
    struct word {
        std::uint64_t gone = 0;     // ids consumed without a slot
        std::uint64_t before = 0;   // such ids before this word's first
    };
    [[gnu::noinline]] void new_word() {  // for id m_size, once
        if ((m_words.size() << 6) <= m_size) m_words.push_back(word{0, m_gone});
    }
    [[gnu::noinline]] std::uint32_t gone_value(std::size_t i) const {
        if (!m_over.empty()) {
            auto it = m_over.find(i);
            if (it != m_over.end()) return it->second;
        }
        return make(t_consumed, 0);
    }
    std::uint32_t& slot(std::size_t k) const {
        return static_cast<std::uint32_t*>(m_chunks[k >> k_shift].get())[k & (k_chunk - 1)];
    }
    [[gnu::noinline]] std::uint32_t encode(const val& v) {
        if (v.a <= k_payload) {
            switch (v.t) {
            case vt::unset: return make(t_unset, 0);
            case vt::consumed: return make(t_consumed, 0);
            case vt::str: return make(t_str, v.a);
            case vt::frame: return make(t_frame, v.a);
            case vt::frames: return make(t_frames, v.a);
            default: break;
            }
        }
        std::uint32_t b;
        if (!m_box_free.empty()) {
            b = m_box_free.back();
            m_box_free.pop_back();
            m_boxed[b] = v;
        } else {
            b = static_cast<std::uint32_t>(m_boxed.size());
            m_boxed.push_back(v);
        }
        return make(t_boxed, b);
    }
    std::vector<block_pool::block_ptr> m_chunks;
    std::uint32_t* m_first = nullptr;  // m_chunks[0]
    std::size_t m_capacity = 0;        // slots faulted in (in m_chunks)
    std::size_t m_slots = 0;           // slots in use
    std::size_t m_size = 0;            // ids
    std::uint64_t m_gone = 0;          // ids consumed without a slot
    std::size_t m_clean = ~std::size_t(0);  // ids below it have the slot of the same index
    std::vector<word> m_words;         // ids / 64, rounded up
    std::unordered_map<std::size_t, std::uint32_t> m_over;  // values of such ids stored again
    std::vector<val> m_boxed;
    std::vector<std::uint32_t> m_box_free;
};

class reader {
public:
    reader(std::string_view data, const std::string& name, const load_limits& lim,
           snapshot& out, const std::function<void(std::size_t)>& release)
        : m_begin(reinterpret_cast<const std::uint8_t*>(data.data())),
          m_end(m_begin + data.size()),
          m_name(name),
          m_lim(lim),
          m_out(out),
          m_pool(out.strings()),
          m_frames(out),
          m_release(release),
          m_total(data.size()) {
        std::memset(m_key_at, k_not_key, sizeof m_key_at);
    }
    // Read in pieces into a window (the first refill is in run()).
    reader(const pickle_source& src, const std::string& name, const load_limits& lim, snapshot& out,
           const std::function<void(std::size_t)>& progress)
        : reader(std::string_view(), name, lim, out, progress) {
        m_src = &src;
        m_total = src.size;
        m_more = src.size > 0;
    }

    void run();

private:
    // ---- errors and input -------------------------------------------------------------
    [[noreturn, gnu::cold, gnu::noinline]] void fail(const std::string& msg) const {
        throw input_error::at_offset(m_name, static_cast<std::int64_t>(m_op), msg);
    }
    const char* opname() const { return describe_opcode(m_opcode).name; }
    // n bytes from p on are in the window (a window's refill moves p), else "truncated".
    void need(const std::uint8_t*& p, std::uint64_t n) {
        if (static_cast<std::uint64_t>(m_end - p) < n) [[unlikely]] need_more(p, n);
    }
    [[gnu::noinline]] void need_more(const std::uint8_t*& p, std::uint64_t n) {
        if (!m_more || n > left(p)) fail_need(p, n);
        refill(p, static_cast<std::size_t>(n));
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail_need(const std::uint8_t* p, std::uint64_t n) const {
            fail(std::string("truncated: ") + opname() + " needs " + std::to_string(n) +
                 " bytes, " + std::to_string(left(p)) + " left");
    }
    // Bytes of the input from q to its end (past the window's end when it is read in pieces).
    std::uint64_t left(const std::uint8_t* q) const {
        return m_total - m_base - static_cast<std::uint64_t>(q - m_begin);
    }
    // Window: the unread bytes [p, m_end) move to the buffer's start and the input's next bytes
    // follow, until the buffer is full (it grows for `want` bytes from p) or the input ends.
    void refill(const std::uint8_t*& p, std::size_t want) {
        const std::size_t keep = static_cast<std::size_t>(m_end - p);
        const std::uint64_t base = m_base + static_cast<std::uint64_t>(p - m_begin);
        const std::size_t cap = std::max(m_src->window, want);
        if (cap > m_cap) {
            std::unique_ptr<std::uint8_t[]> b(new std::uint8_t[cap]);
            if (keep) std::memcpy(b.get(), p, keep);
            m_buf = std::move(b);
            m_cap = cap;
        } else if (keep) {
            std::memmove(m_buf.get(), p, keep);
        }
        const std::size_t fill = static_cast<std::size_t>(std::min<std::uint64_t>(m_cap, m_total - base));
        std::size_t have = keep;
        while (have < fill) {
            const std::size_t got = m_src->read(m_buf.get() + have, fill - have);
            if (got == 0) {
                m_op = static_cast<std::size_t>(base + have);
                fail("file shrank while it was read");
            }
            have += got;
        }
        m_base = base;
        m_begin = m_buf.get();
        m_end = m_begin + have;
        m_more = base + have < m_total;
        // refilled when less than 1/16 of the window is left (4 KiB: a record is far shorter;
        // one that is not takes the general path there), so that little is moved each time
        m_event_at = m_more ? m_end - std::min(have, m_src->window / 16) : m_end;
        p = m_begin;
        if (m_release) m_release(static_cast<std::size_t>(base));
    }
    static std::uint32_t u32(const std::uint8_t* p) {
        return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
               std::uint32_t(p[3]) << 24;
    }
    static std::uint64_t u64(const std::uint8_t* p) {
        return std::uint64_t(u32(p)) | std::uint64_t(u32(p + 4)) << 32;
    }

    // ---- stack --------------------------------------------------------------------------
    [[gnu::always_inline]] void push(val v) {
        if (m_stack.size() >= static_cast<std::size_t>(m_lim.max_stack)) [[unlikely]] fail_stack();
        if (v.t == vt::node) ++m_nodes[v.a].refs;
        m_stack.push_back(v);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail_stack() const {
            fail("limit exceeded: more than " + std::to_string(m_lim.max_stack) +
                 " values on the stack (limit snapshot_stack)");
    }
    void unref(const val& v) {
        if (v.t != vt::node) return;
        node& n = m_nodes[v.a];
        if (n.gen != static_cast<std::uint32_t>(v.i) || n.refs == 0) return;
        if (--n.refs == 0 && (n.resolved || n.consumed)) retire(v);
    }
    [[gnu::always_inline]] void drop_to(std::size_t k) {
        for (std::size_t i = k; i < m_stack.size(); ++i)
            if (m_stack[i].t == vt::node) unref(m_stack[i]);
        m_stack.resize(k);
    }
    std::size_t floor() const { return m_marks.empty() ? 0 : m_marks.back(); }
    void need_stack(std::size_t n) const {
        if (m_stack.size() < floor() + n) [[unlikely]] fail_need_stack(n);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail_need_stack(std::size_t n) const {
            fail(std::string(opname()) + " needs " + std::to_string(n) +
                 " value(s) on the stack, found " + std::to_string(m_stack.size() - floor()));
    }
    std::size_t pop_mark() {
        if (m_marks.empty()) fail(std::string(opname()) + " without a MARK");
        std::size_t k = m_marks.back();
        m_marks.pop_back();
        return k;
    }
    void count(std::int64_t n = 1) {
        m_objects += n;
        if (m_objects > m_lim.max_objects) [[unlikely]] fail_objects();
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail_objects() const {
            fail("limit exceeded: more than " + std::to_string(m_lim.max_objects) + " objects (limit snapshot_objects)");
    }

    // ---- nodes --------------------------------------------------------------------------
    val new_node(nk kind) {
        std::uint32_t id;
        if (!m_free.empty()) {
            id = m_free.back();
            m_free.pop_back();
        } else {
            if (m_nodes.size() - m_free.size() >=
                static_cast<std::size_t>(m_lim.max_live_containers))
                fail("limit exceeded: more than " + std::to_string(m_lim.max_live_containers) +
                     " containers alive at once (limit snapshot_containers)");
            id = static_cast<std::uint32_t>(m_nodes.size());
            m_nodes.emplace_back();
        }
        node& n = m_nodes[id];
        n.kind = kind;
        n.depth = 0;
        count();
        return val{vt::node, id, n.gen};
    }
    node& deref(const val& v) {
        node& n = m_nodes[v.a];
        if (n.kind == nk::free || n.gen != static_cast<std::uint32_t>(v.i) || n.consumed)
            [[unlikely]] fail_stale();
        return n;
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail_stale() const {
            fail("reference to a record that was already consumed (shared records are not "
                 "supported)");
    }
    // Queues a resolved or consumed node for recycling once no stack slot refers to it.
    void retire(const val& v) { m_pending.push_back(v); }
    void flush() {
        for (const val& pv : m_pending) {
            const std::uint32_t id = pv.a;
            node& n = m_nodes[id];
            if (n.kind == nk::free || n.gen != static_cast<std::uint32_t>(pv.i) || n.refs > 0)
                continue;
            if (n.memo >= 0) memo_settle(n.memo, pv, n.resolved ? n.res : val{vt::consumed});
            n.kind = nk::free;
            n.resolved = n.consumed = n.visiting = false;
            n.refs = 0;
            n.memo = -1;
            ++n.gen;
            n.items.clear();
            n.entries.clear();
            n.blocks.clear();
            n.segs.clear();
            m_free.push_back(id);
        }
        m_pending.clear();
    }

    // ---- memo ---------------------------------------------------------------------------
    // A memo slot that still holds node `nv` takes the node's settled value.
    void memo_settle(std::int64_t idx, const val& nv, const val& settled) {
        if (idx < static_cast<std::int64_t>(m_memo.size())) {
            const val cur = m_memo.get(static_cast<std::size_t>(idx));
            if (cur.t == vt::node && cur.a == nv.a && cur.i == nv.i) {
                m_memo.set(static_cast<std::size_t>(idx), settled);
                sync_low(static_cast<std::size_t>(idx));
            }
            return;
        }
        auto it = m_sparse.find(idx);
        if (it != m_sparse.end() && it->second.t == vt::node && it->second.a == nv.a && it->second.i == nv.i)
            it->second = settled;
    }
    [[gnu::always_inline]] void memo_put(std::uint64_t idx, const val& v) {
        if (idx == m_memo.size() && idx < static_cast<std::uint64_t>(m_lim.max_memo) &&
            m_memo.try_append(v)) [[likely]] {
            ++m_memo_count;
            if (idx < 256) [[unlikely]] sync_low(idx);
            if (v.t == vt::node) m_nodes[v.a].memo = static_cast<std::int64_t>(idx);
            return;
        }
        memo_put_slow(idx, v);
    }
    // memo_put(m_memo_count, val{vt::consumed}): a trace entry's dict, once an entry.
    [[gnu::always_inline]] void memo_put_consumed() {
        const std::uint64_t idx = static_cast<std::uint64_t>(m_memo_count);
        if (idx == m_memo.size() && idx >= 256 && idx < static_cast<std::uint64_t>(m_lim.max_memo)) [[likely]] {
            m_memo.append_consumed();
            ++m_memo_count;
            return;
        }
        memo_put(idx, val{vt::consumed});
    }
    [[gnu::noinline]] void memo_put_slow(std::uint64_t idx, const val& v) {
        if (idx >= static_cast<std::uint64_t>(m_lim.max_memo))
            fail("limit exceeded: memo index " + std::to_string(idx) + " is above " +
                 std::to_string(m_lim.max_memo) + " (limit snapshot_memo)");
        if (idx < m_memo.size()) {
            if (m_memo.raw(idx) == 0) ++m_memo_count;
            m_memo.set(idx, v);
            m_spans.clear();  // cached list bytes may name this slot
            forget_keys();    // and so may the key bytes
        } else if (idx < m_memo.size() + 4096) {
            m_memo.resize(idx + 1);
            m_memo.set(idx, v);
            ++m_memo_count;
        } else {
            if (m_sparse.emplace(idx, v).second) ++m_memo_count;
            else m_sparse[idx] = v;
        }
        if (idx < 256) sync_low(idx);
        if (v.t == vt::node) m_nodes[v.a].memo = static_cast<std::int64_t>(idx);
    }
    void sync_low(std::size_t idx) {
        if (idx >= 256) return;
        const std::uint32_t r = idx < m_memo.size() ? m_memo.raw(idx) : 0;
        m_low_memo[idx] = r;
        m_key_at[idx] = memo_table::tag_of(r) == memo_table::t_str && memo_table::payload(r) < k_key_count
                            ? static_cast<std::uint8_t>(memo_table::payload(r))
                            : k_not_key;
    }
    [[gnu::always_inline]] val memo_get(std::uint64_t idx) {
        if (idx < m_memo.size()) [[likely]] {
            const std::uint32_t r = m_memo.raw(idx);
            switch (memo_table::tag_of(r)) {
            case memo_table::t_str: return val{vt::str, memo_table::payload(r), 0};
            case memo_table::t_frame: return val{vt::frame, memo_table::payload(r), 0};
            case memo_table::t_frames: return val{vt::frames, memo_table::payload(r), 0};
            default: break;
            }
        }
        return memo_get_slow(idx);
    }
    [[gnu::noinline]] val memo_get_slow(std::uint64_t idx) {
        val v;
        if (idx < m_memo.size()) {
            v = m_memo.get(idx);
        } else if (idx < static_cast<std::uint64_t>(m_lim.max_memo)) {
            auto it = m_sparse.find(static_cast<std::int64_t>(idx));
            if (it != m_sparse.end()) v = it->second;
        }
        if (v.t == vt::unset)
            fail("memo index " + std::to_string(idx) + " was never stored (memo holds " +
                 std::to_string(m_memo_count) + " entries)");
        if (v.t == vt::consumed)
            fail("memo index " + std::to_string(idx) +
                 " refers to a record that was already consumed (shared records are not "
                 "supported)");
        return v;
    }

    // ---- values -------------------------------------------------------------------------
    val str_val(const std::uint8_t* p, std::uint64_t n) {
        if (n > static_cast<std::uint64_t>(m_lim.max_string))
            fail("limit exceeded: string of " + std::to_string(n) + " bytes (limit snapshot_string_bytes=" +
                 std::to_string(m_lim.max_string) + ")");
        std::string_view s(reinterpret_cast<const char*>(p), n);
        count();
        return val{vt::str, intern_utf8(s), 0};
    }
    std::uint32_t intern_utf8(std::string_view s);
    val settle(val v) {
        if (v.t == vt::record) fail("a trace entry dict outside a list of trace entries");
        if (v.t != vt::node) [[likely]] return v;
        return settle_node(v);
    }
    val settle_node(val v);
    void place_child(node& parent, const val& v) {
        if (v.t != vt::node) return;
        node& c = m_nodes[v.a];
        if (&c == &parent) fail("a container contains itself");
        if (c.depth + 1 > parent.depth) {
            parent.depth = c.depth + 1;
            if (parent.depth > static_cast<std::uint32_t>(m_lim.max_depth))
                fail("limit exceeded: nesting deeper than " + std::to_string(m_lim.max_depth) + " (limit snapshot_depth)");
        }
    }
    [[gnu::always_inline]] void append_item(node& list, val v) {
        if (v.t == vt::record) {
            list.entries.push_back(take_record(v));
            return;
        }
        if (v.t != vt::node) [[likely]] {
            list.items.push_back(v);
            return;
        }
        append_node(list, v);
    }
    [[gnu::always_inline]] const trace_event& take_record(const val& v) {
        if (v.a >= m_records.size() || !m_record_live[v.a])
            fail("a trace entry was used twice");
        m_record_live[v.a] = 0;
        m_record_free.push_back(v.a);
        return m_records[v.a];
    }
    void append_node(node& list, val v);
    void set_item(node& dict, val k, val v) {
        if ((k.t == vt::node && &m_nodes[k.a] == &dict) || (v.t == vt::node && &m_nodes[v.a] == &dict))
            fail("a container contains itself");
        k = settle(k);
        v = settle(v);
        place_child(dict, k);
        place_child(dict, v);
        dict.items.push_back(k);
        dict.items.push_back(v);
    }
    node& target(std::size_t pos, nk want) {
        const val& t = m_stack[pos];
        if (t.t != vt::node) fail(std::string(opname()) + " target is not a container");
        node& n = deref(t);
        if (n.resolved || n.kind != want)
            fail(std::string(opname()) + " target is not a " +
                 (want == nk::dict ? "dict" : "list"));
        return n;
    }

    // ---- record conversion ---------------------------------------------------------------
    std::uint64_t key_mask(const node& n) const {
        std::uint64_t m = 0;
        for (std::size_t i = 0; i + 1 < n.items.size(); i += 2)
            if (n.items[i].t == vt::str && n.items[i].a < k_key_count) m |= bit(key_id(n.items[i].a));
        return m;
    }
    std::int64_t as_int(const val& v, std::uint32_t key, std::int64_t absent = 0) {
        switch (v.t) {
        case vt::integer: case vt::uint64: case vt::boolean: return v.i;
        case vt::floating: { double d; std::memcpy(&d, &v.i, 8); return saturate_to_int64(d); }
        case vt::none: return absent;
        default: fail("field '" + std::string(m_pool.view(key)) + "' is not a number");
        }
    }
    std::string_view as_str(const val& v, std::uint32_t key) {
        if (v.t == vt::str) return m_pool.view(v.a);
        if (v.t == vt::none) return {};
        fail("field '" + std::string(m_pool.view(key)) + "' is not a string");
    }
    frames_id as_frames(const val& v) {
        if (v.t == vt::frames) return static_cast<frames_id>(v.a);
        if (v.t == vt::none) return 0;
        fail("field 'frames' is not a list of {name, filename, line} frames");
    }
    action_kind action_of(std::uint32_t sid) {
        if (sid >= m_action_cache.size()) m_action_cache.resize(m_pool.size() + 64, -1);
        auto& c = m_action_cache[sid];
        if (c < 0) c = static_cast<std::int8_t>(parse_action(m_pool.view(sid)));
        return static_cast<action_kind>(c);
    }
    trace_event to_entry(const node& n);
    // A list of trace entries that the input's size says will fill its first chunk takes that
    // chunk as one huge page: one page fault instead of 512 (docs/snapshot.md, snap21).
    static constexpr std::size_t k_probe_entries = 2000;
    [[gnu::noinline]] void size_trace(node& l, const std::uint8_t* p) {
        constexpr std::size_t k_chunk = trace_list::first_chunk_size();
        const std::size_t n = l.entries.size();
        if (n >= k_chunk / 4) return;  // too late: most of its pages are in already
        // bytes per entry from the input's start: the segments before it make it an
        // overestimate, so the entries ahead are underestimated
        const std::uint64_t done = m_base + static_cast<std::uint64_t>(p - m_begin);
        if (done == 0 || static_cast<double>(n) * static_cast<double>(m_total) / static_cast<double>(done) <
                             1.125 * static_cast<double>(k_chunk))
            return;
        l.entries.first_chunk_whole();
    }
    static constexpr std::uint32_t k_no_str = ~std::uint32_t(0);
    std::uint32_t context_of(std::uint32_t cc, std::uint32_t um) {
        std::uint64_t key = (std::uint64_t(cc) << 32) | um;
        if (key == m_last_context_key) return m_last_context;
        auto it = m_contexts.find(key);
        if (it != m_contexts.end()) {
            m_last_context_key = key;
            return m_last_context = it->second;
        }
        if (m_out.entry_contexts.size() >= (1u << 24)) fail("limit exceeded: too many distinct compile_context/user_metadata pairs");
        auto id = static_cast<std::uint32_t>(m_out.entry_contexts.size());
        m_out.entry_contexts.push_back(entry_context{cc == k_no_str ? std::string_view() : m_pool.view(cc),
                                                     um == k_no_str ? std::string_view() : m_pool.view(um)});
        m_contexts.emplace(key, id);
        return id;
    }
    block to_block(const node& n);
    segment to_segment(node& n);
    std::vector<segment> take_segments(const val& v, const char* what);
    nlohmann::json to_json(const val& v, std::int64_t depth);
    void build_top(const val& top);

    // ---- fast paths ------------------------------------------------------------------------
    // Python's pickler writes a trace entry as EMPTY_DICT MEMOIZE MARK (key value)+ SETITEMS,
    // keys and enum-like values as BINGETs of memoized strings, a fresh frames list per
    // allocation (MEMOIZE, then BINGETs of shared frame dicts, new frame dicts inline), and it
    // starts a new FRAME at any object boundary. The fast paths decode exactly that shape
    // straight into the model: they scan first without side effects on the memo or the stack,
    // then commit; anything else returns false and takes the general path, which reports
    // errors. Interning during a scan is harmless: the general path interns the same values
    // in the same order. They stop 16 bytes before the end of the input, so that a key or a
    // number can be read without a bounds check; only strings check their length.
    static constexpr std::ptrdiff_t k_slack = 16;

    // Skips FRAME opcodes; false near the end of the input or on a FRAME longer than the rest.
    // (The pointer goes by value through the call, so that a caller's cursor stays in a register.)
    [[gnu::always_inline]] bool skip_frames(const std::uint8_t*& q) const {
        const std::uint8_t* r = past_frames(q);
        if (!r) return false;
        q = r;
        return true;
    }
    [[gnu::noinline]] const std::uint8_t* past_frames(const std::uint8_t* q) const {
        while (m_end - q >= k_slack && *q == 0x95) {
            const std::uint64_t len = u64(q + 1);
            q += 9;
            if (len > left(q)) return nullptr;
        }
        return m_end - q >= k_slack ? q : nullptr;
    }
    // The raw memo slot of BINGET / LONG_BINGET at q (q before the slack), or 0 when it is not
    // one or names a slot stored after the scan began.
    [[gnu::always_inline]] std::uint32_t memo_ref(const std::uint8_t*& q, std::size_t memo_size) const {
        std::uint64_t idx;
        if (*q == 'h') {
            idx = q[1];
            q += 2;
            return idx < memo_size ? m_low_memo[idx] : 0;
        }
        if (*q != 'j') return 0;
        idx = u32(q + 1);
        q += 5;
        return idx < memo_size ? m_memo.raw_near(idx) : 0;
    }
    static bool is(std::uint32_t raw, memo_table::tag t) { return memo_table::tag_of(raw) == t; }
    // SHORT_BINUNICODE or BINUNICODE followed by MEMOIZE: the string's id; its memo value is
    // queued in m_pend.
    [[gnu::always_inline]] bool fresh_str(const std::uint8_t*& q, std::size_t& npend, std::uint32_t& id) {
        std::size_t n, h;
        if (*q == 0x8c) {
            n = q[1];
            h = 2;
        } else {
            n = u32(q + 1);
            h = 5;
            if (n > static_cast<std::uint64_t>(m_lim.max_string)) return false;
        }
        if (static_cast<std::size_t>(m_end - q) < h + n + 1 || q[h + n] != 0x94 || npend == k_max_pend) return false;
        id = intern_cached(reinterpret_cast<const char*>(q + h), n);
        m_pend[npend++] = val{vt::str, id, 0};
        q += h + n + 1;
        return true;
    }
    // Interns through a small direct-mapped cache: a trace writes the same fresh strings
    // ("N/A", user metadata) for millions of entries.
    std::uint32_t intern_cached(const char* p, std::size_t n) {
        const std::size_t h = (n * 31 + (n ? std::uint8_t(p[0]) * 7 + std::uint8_t(p[n - 1]) : 0)) & (k_str_cache - 1);
        str_cache_entry& c = m_str_cache[h];
        if (c.text && c.n == n && std::memcmp(c.text, p, n) == 0) return c.id;
        const std::uint32_t id = intern_utf8({p, n});
        const std::string_view stored = m_pool.view(id);
        if (stored.size() == n) c = str_cache_entry{stored.data(), static_cast<std::uint32_t>(n), id};
        return id;
    }
    // BININT1, BININT2, BININT or LONG1 of 1-8 bytes (q before the slack).
    [[gnu::always_inline]] static bool small_int(const std::uint8_t*& q, std::int64_t& v) {
        switch (*q) {
        case 'K': v = q[1]; q += 2; return true;
        case 'M': v = q[1] | (q[2] << 8); q += 3; return true;
        case 'J': v = static_cast<std::int32_t>(u32(q + 1)); q += 5; return true;
        case 0x8a: return long1(q, v);
        default: return false;
        }
    }
    // LONG1 of 1-8 bytes at q (q before the slack).
    [[gnu::always_inline]] static bool long1(const std::uint8_t*& q, std::int64_t& v) {
        const std::size_t n = q[1];
        if (n - 1 > 7) return false;  // n is 1-8 (n = 0 wraps around)
        std::uint64_t x;
        std::memcpy(&x, q + 2, 8);
        // The low n bytes, sign-extended from the top one: two shifts (0 when n is 8).
        const unsigned s = static_cast<unsigned>(64 - 8 * n);
        v = static_cast<std::int64_t>(x << s) >> s;
        q += 2 + n;
        return true;
    }
    // A new frame dict inline: EMPTY_DICT MEMOIZE MARK, name/filename/line keys (memoized
    // strings) with fresh or memoized strings and an int, SETITEMS. `q` points at EMPTY_DICT.
    [[gnu::noinline]] bool fresh_frame(const std::uint8_t*& q, std::size_t memo_size, std::size_t& npend, frame_id& out) {
        if (q[1] != 0x94 || npend == k_max_pend) return false;
        q += 2;
        const std::size_t slot = npend++;  // the dict's memo value, known at the end
        if (!skip_frames(q) || *q != '(') return false;
        ++q;
        std::uint32_t fn = k_no_str, nm = k_no_str;
        std::int64_t line = 0;
        for (int items = 0;; ++items) {
            if (!skip_frames(q)) return false;
            if (*q == 'u') break;
            const std::uint32_t kr = memo_ref(q, memo_size);
            if (items == 3 || !is(kr, memo_table::t_str) || !skip_frames(q)) return false;
            const std::uint32_t key = memo_table::payload(kr);
            if (key == k_line) {
                if (!small_int(q, line)) return false;
                continue;
            }
            if (key != k_name && key != k_filename) return false;
            std::uint32_t id;
            if (*q == 'h' || *q == 'j') {
                const std::uint32_t vr = memo_ref(q, memo_size);
                if (!is(vr, memo_table::t_str)) return false;
                id = memo_table::payload(vr);
            } else if (*q != 0x8c && *q != 'X') {
                return false;
            } else if (!fresh_str(q, npend, id)) {
                return false;
            }
            (key == k_name ? nm : fn) = id;
        }
        ++q;  // SETITEMS
        if (fn == k_no_str || nm == k_no_str) return false;
        out = m_frames.intern_frame(fn, nm, line);
        m_pend[slot] = val{vt::frame, static_cast<std::uint32_t>(out), 0};
        return true;
    }

    // The items of a fresh frames list after its MARK, up to APPENDS: BINGETs of frame dicts
    // (the hot loop), new frame dicts inline, FRAMEs. The ids go to m_fids[0, n).
    bool list_items(const std::uint8_t*& qref, std::size_t memo_size, std::size_t& npend, std::size_t& nref) {
        frame_id* const out = m_fids.get();
        const std::size_t cap = k_fids;
        const std::uint8_t* const lim = m_end - k_slack;
        const std::uint32_t* const low = m_low_memo;
        const std::uint8_t* q = qref;  // locals: stores through `out` cannot alias them
        std::size_t n = nref;
        bool ok = false;
        for (;;) {
            // Every item takes 2 bytes or more: `stop` keeps n below cap and q before the slack.
            const std::uint8_t* const stop = q + std::min<std::ptrdiff_t>(lim - q, 2 * static_cast<std::ptrdiff_t>(cap - n));
            while (q < stop) {
                std::uint32_t r;
                if (*q == 'h') {  // slots 0-255 not stored yet read 0 (unset)
                    r = low[q[1]];
                    q += 2;
                } else if (*q == 'j') {
                    const std::uint32_t idx = u32(q + 1);
                    r = idx < memo_size ? m_memo.raw_near(idx) : 0;
                    q += 5;
                } else {
                    break;
                }
                if (!is(r, memo_table::t_frame)) goto done;
                out[n++] = static_cast<frame_id>(memo_table::payload(r));
            }
            if (q >= lim || n >= cap) break;
            if (*q == 'e') {
                ok = n > 0;
                break;
            }
            if (*q == '}') {
                frame_id f;
                if (!fresh_frame(q, memo_size, npend, f)) break;
                out[n++] = f;
            } else if (*q != 0x95 || !skip_frames(q)) {
                break;
            }
        }
    done:
        qref = q;
        nref = n;
        return ok;
    }
    // The items of a fresh frames list after its MARK when they are BINGETs only, up to
    // APPENDS: a list whose bytes were read before (list_span_cache) is not read again. On a
    // hit `q` moves to the APPENDS and `n` is the item count; on a miss the bytes are kept in
    // m_span for commit_list.
    bool cached_span(const std::uint8_t*& q, std::size_t& n) {
        const std::uint8_t* const lim = m_end - k_slack;
        if (q >= lim) return false;
        if (const auto c = m_spans.find_predicted(q, static_cast<std::size_t>(lim - q), 'e'); c.id >= 0) {
            m_span.hit = c.id;
            n = c.items;
            q += c.len;
            return true;
        }
        // a span seen before, found by its first 16 bytes: no scan of its items, no hash
        if (const auto c = m_spans.find_head(q, static_cast<std::size_t>(lim - q), 'e'); c.id >= 0) {
            m_span.hit = c.id;
            n = c.items;
            q += c.len;
            return true;
        }
        const std::uint8_t* t = q;
        std::uint32_t items = 0;
        while (t < lim) {
            if (*t == 'j') t += 5;  // LONG_BINGET first: a trace's frame dicts are memoized past id 255
            else if (*t == 'h') t += 2;
            else break;
            ++items;
        }
        if (t >= lim || *t != 'e' || items == 0) return false;
        const std::size_t len = static_cast<std::size_t>(t - q);
        std::uint64_t h;
        if (const auto c = m_spans.find(q, len, h, true); c.id >= 0) {
            m_span.hit = c.id;
            n = c.items;
            q = t;
            return true;
        }
        m_span = span{q, len, items, h, -1};
        return false;
    }
    // The id of the fresh list just read (its items in m_fids[0, n) unless cached_span hit).
    frames_id commit_list(std::size_t n) {
        if (m_span.hit >= 0) return m_span.hit;
        const frames_id id = m_frames.intern_list(m_fids.get(), n);
        if (m_span.p) m_spans.add(m_span.p, m_span.len, m_span.items, m_span.hash, id);
        else m_spans.forget_previous();
        return id;
    }

    // A frames list as a record's value: a BINGET of a settled list, or a fresh list
    // (EMPTY_LIST MEMOIZE, then nothing, one item and APPEND, or MARK items APPENDS). A fresh
    // list's memo value is queued at m_pend[lpend] and its items are m_fids[0, n).
    [[gnu::always_inline]] bool frames_value(const std::uint8_t*& q, std::size_t memo_size, std::size_t& npend,
                                             int& lpend, std::size_t& n, frames_id& id) {
        const std::uint8_t* r = frames_value_at(q, memo_size, npend, lpend, n, id);
        if (!r) return false;
        q = r;
        return true;
    }
    const std::uint8_t* frames_value_at(const std::uint8_t* q, std::size_t memo_size, std::size_t& npend,
                                        int& lpend, std::size_t& n, frames_id& id) {
        return frames_value_in(q, memo_size, npend, lpend, n, id) ? q : nullptr;
    }
    [[gnu::always_inline]] bool frames_value_in(const std::uint8_t*& q, std::size_t memo_size, std::size_t& npend,
                                                int& lpend, std::size_t& n, frames_id& id) {
        if (*q == 'h' || *q == 'j') {
            const std::uint32_t r = memo_ref(q, memo_size);
            if (!is(r, memo_table::t_frames)) return false;
            id = static_cast<frames_id>(memo_table::payload(r));
            return true;
        }
        if (*q != ']' || q[1] != 0x94 || lpend >= 0 || npend == k_max_pend) return false;
        q += 2;
        lpend = static_cast<int>(npend++);
        n = 0;
        m_span = span{};
        if (*q == 0x95 && !skip_frames(q)) return false;
        if (*q == '(') {
            ++q;
            if (!(m_spans.enabled() && cached_span(q, n)) && !list_items(q, memo_size, npend, n)) return false;
            ++q;  // APPENDS
        } else if (*q == 'h' || *q == 'j' || *q == '}') {  // one item, then APPEND
            if (*q == '}') {
                frame_id f;
                if (!fresh_frame(q, memo_size, npend, f)) return false;
                m_fids[n++] = f;
            } else {
                const std::uint32_t fr = memo_ref(q, memo_size);
                if (!is(fr, memo_table::t_frame)) return false;
                m_fids[n++] = static_cast<frame_id>(memo_table::payload(fr));
            }
            if (!skip_frames(q) || *q != 'a') return false;
            ++q;
        } else {
            return true;  // an empty list
        }
        // Another batch (MARK ... APPENDS) or an APPEND would add to the list.
        const std::uint8_t* r = q;
        return skip_frames(r) && *r != '(' && *r != 'a';
    }

    // What a trace entry does with the value of each known key.
    enum class field : std::uint8_t {
        ignored, action, addr, size, stream, time_us, device_free, frames, compile_context, user_metadata
    };
    static constexpr std::array<field, k_key_count> k_fields = [] {
        std::array<field, k_key_count> f{};
        f[k_action] = field::action;
        f[k_addr] = field::addr;
        f[k_size] = field::size;
        f[k_stream] = field::stream;
        f[k_time_us] = field::time_us;
        f[k_device_free] = field::device_free;
        f[k_frames] = field::frames;
        f[k_compile_context] = field::compile_context;
        f[k_user_metadata] = field::user_metadata;
        return f;
    }();

    // The opcodes a trace entry's value starts with, by class.
    enum class vc : std::uint8_t { other, int1, int2, int4, long1, object, flag };
    static constexpr std::array<vc, 256> k_value_class = [] {
        std::array<vc, 256> c{};
        c['K'] = vc::int1;
        c['M'] = vc::int2;
        c['J'] = vc::int4;
        c[0x8a] = vc::long1;
        for (std::uint8_t o : {std::uint8_t('h'), std::uint8_t('j'), std::uint8_t(0x8c), std::uint8_t('X'), std::uint8_t(']')})
            c[o] = vc::object;  // BINGET, LONG_BINGET, SHORT_BINUNICODE, BINUNICODE, EMPTY_LIST
        for (std::uint8_t o : {std::uint8_t(0x88), std::uint8_t(0x89), std::uint8_t('N')}) c[o] = vc::flag;
        return c;
    }();

    // The keys of the previous records, by position: Python's pickler writes every trace entry
    // with the same keys in the same order, as the same BINGETs, so a key is recognised by
    // comparing its 2 or 5 bytes with the ones at its position last time. An entry stands for
    // "these bytes name this key", true until a memo slot is overwritten (forget_keys). The
    // masks of unused entries are 0 with bytes 1: they never match.
    // The value's opcode is learned too (learn_value): a wide entry's mask and bytes cover the
    // key and the opcode byte after it, and `cls` is that opcode's class, so a match needs no
    // FRAME test and no class look-up. A frames key keeps its key bytes only (its value is a
    // BINGET or a fresh list, in turn) with cls = object: frames_value reads the opcode itself.
    static constexpr std::size_t k_max_keys = 64;
    struct alignas(32) key_bytes {  // 32 bytes: a count of entries is a shift, not a division by 24
        std::uint64_t mask = 0, bytes = 1;
        std::uint8_t len = 0;
        field f = field::ignored;
        vc cls = vc::other;  // other: the value's opcode is looked up (and then learned)
        bool wide = false;   // mask and bytes cover the opcode byte after the key
    };
    static std::uint64_t load64(const std::uint8_t* q) {
        std::uint64_t x;
        std::memcpy(&x, q, 8);
        return x;
    }
    void learn_key(std::size_t i, const std::uint8_t* k, std::size_t len, field f) {
        key_bytes& t = m_keys[i];
        t.mask = (std::uint64_t(1) << (8 * len)) - 1;  // len is 2 or 5
        t.bytes = load64(k) & t.mask;
        t.len = static_cast<std::uint8_t>(len);
        t.f = f;
        t.cls = vc::other;
        t.wide = false;
    }
    // The opcode `op` (class c) right after the key of `t`, which is not wide.
    static void learn_value(key_bytes& t, std::uint8_t op, vc c) {
        if (t.f == field::frames) {
            if (c == vc::object) t.cls = vc::object;
            return;
        }
        if (c == vc::other) return;  // the entry fails at this value
        t.mask = (t.mask << 8) | 0xff;  // a key takes at most 5 bytes: 6 with the opcode
        t.bytes |= std::uint64_t(op) << (8 * t.len);
        t.cls = c;
        t.wide = true;
    }
    void forget_keys() {
        for (key_bytes& t : m_keys) t = key_bytes{};
        for (action_ref& c : m_action_refs) c = action_ref{};
        m_tpl_n = m_tpl_last = m_tpl_next = 0;  // templates name keys by their bytes too
    }
    // The action values read as LONG_BINGETs, by memo id (direct-mapped): a trace names its few
    // action strings by the same memo ids millions of times. Ids always below the memo's size
    // and naming a string when stored; cleared with the keys when a memo slot is overwritten.
    struct action_ref {
        std::uint64_t idx = ~std::uint64_t(0);  // never equals a 32-bit id
        std::uint32_t sid = 0;
        action_kind kind = action_kind::other;
    };
    // (snap41) Two ways of 32 sets: direct-mapped on 8 slots, the ids 2473 (alloc) and 2497
    // (free_completed) of a Python-written trace took one slot and evicted each other every
    // entry (9% of 2.9M-d35-lpe-like entries went to the key loop and a template re-learning).
    static constexpr std::size_t k_action_refs = 64;
    action_ref m_action_refs[k_action_refs];
    [[gnu::always_inline]] const action_ref* find_action(std::uint32_t idx) const {
        const std::size_t h = (idx & (k_action_refs / 2 - 1)) * 2;
        if (m_action_refs[h].idx == idx) [[likely]] return &m_action_refs[h];
        if (m_action_refs[h + 1].idx == idx) return &m_action_refs[h + 1];
        return nullptr;
    }
    void remember_action(std::uint32_t idx, std::uint32_t sid) {
        const std::size_t h = (idx & (k_action_refs / 2 - 1)) * 2;
        // the first way when free, else the second (a third id of the set evicts the second's)
        action_ref& c = m_action_refs[h].idx == ~std::uint64_t(0) ? m_action_refs[h] : m_action_refs[h + 1];
        c = action_ref{idx, sid, action_of(sid)};
    }
    key_bytes m_keys[k_max_keys + 1];  // [k_max_keys] never matches: the loop stops there

    // (snap30) Whole entries against a template of their bytes. Python's pickler writes every
    // entry of a trace with the same keys in the same order as the same BINGETs, the same value
    // opcodes (and LONG1 lengths) most of the time, so up to its frames value an entry is a
    // fixed skeleton with a few slots of fixed width at fixed places: the action's LONG_BINGET
    // id and the numbers. A template is learned from an entry the key loop decoded (learn_template)
    // and says "bytes matching this skeleton decode to these fields": it holds as long as the
    // key bytes do, so forget_keys drops it too. A match is a masked compare of up to 64 bytes
    // and fixed-width reads; any mismatch (another opcode or length, a FRAME inside, an action
    // id not in m_action_refs) decodes the entry with the key loop, as before.
    struct entry_template {
        std::uint64_t bytes[16] = {}, mask[16] = {};
        std::uint8_t nw = 0;      // 8-byte words compared
        std::uint8_t len = 0;     // bytes from the MEMOIZE after EMPTY_DICT: through the frames
                                  // key, or through SETITEMS when the entry has no frames key
        std::uint8_t kpos = 0;    // keys in that head
        bool frames = false;      // the head ends at the frames key (its value follows)
        std::uint8_t action = 0xff;  // the action's LONG_BINGET id, from the head's start; 0xff: none
        // (snap41) The numbers by field, addr, size, time_us, stream, device_free: the 8 bytes at
        // `off`, the low ones sign-extended, masked, or'ed with `def`. An absent field keeps
        // nothing (keep 0) and reads its default; a present one has def 0. All five are written
        // without a branch or a member pointer; a field written twice takes the key loop.
        struct num {
            std::uint64_t keep = 0;  // all ones, or the low bytes of an unsigned BININT1 / BININT2
            std::int64_t def = 0;
            std::uint8_t off = 0;
            std::uint8_t shift = 0;  // 64 - 8 * width
        } nums[5];
        // (snap41) A string under compile_context, user_metadata or an ignored key, as the
        // pickler writes them per entry: a fresh SHORT_BINUNICODE + MEMOIZE whose opcode and
        // length are fixed and whose text is read at `off` (interned through the cache, its
        // memo value queued as the key loop queues it), or a BINGET / LONG_BINGET of a
        // memoized string, fixed bytes whose string `sid` was read when the template was learned.
        struct str_slot {
            std::uint8_t off;  // the text (fresh) or unused
            std::uint8_t n;    // the text's length (fresh)
            bool fresh;
            field f;
            std::uint32_t sid;  // a memoized string's id; a fresh one's last id (when `seen`)
            // A fresh text of up to 16 bytes: its two words as last read (masked to n bytes),
            // so that the same text again costs two compares, not the string cache's hash.
            std::uint64_t m0 = 0, m1 = 0, w0 = 0, w1 = 0;
            bool seen = false;
        } strs[4];
        std::uint8_t nstrs = 0;
        bool fresh_strs = false;  // a string slot is fresh (queues a memo value)
    };
    static constexpr std::size_t k_templates = 4;
    // Up to 128 bytes: an entry with compile_context and user_metadata strings takes ~110.
    static constexpr std::size_t k_template_bytes = 128;
    entry_template m_tpl[k_templates];
    std::uint32_t m_tpl_n = 0, m_tpl_last = 0, m_tpl_next = 0;
    std::uint64_t m_tpl_tries = 0, m_tpl_hits = 0;
    // Learning costs a second pass over the entry: it stops when templates do not pay (a trace
    // whose entries vary too much), counted against the entries they decoded.
    bool template_learning() const { return m_tpl_tries < 64 + m_tpl_hits / 8; }

    // The entry at p (its MEMOIZE) that the key loop just decoded, with `nkeys` keys as
    // m_keys[0, nkeys) describe them: a template when its head fits one.
    [[gnu::noinline]] void learn_template(const std::uint8_t* p, std::size_t nkeys) {
        ++m_tpl_tries;
        entry_template t;
        std::uint8_t raw[k_template_bytes + 16] = {};
        bool fixed[k_template_bytes + 16] = {};
        const std::uint8_t* q = p;
        if (static_cast<std::size_t>(m_end - q) < k_template_bytes + k_slack || q[0] != 0x94 || q[1] != '(') return;
        t.nums[2].def = t.nums[4].def = -1;  // time_us and device_free when absent (trace_event's defaults)
        unsigned seen_fields = 0;
        auto keep = [&](std::size_t n, bool fix) {  // the next n bytes of the head
            const std::size_t at = static_cast<std::size_t>(q - p);
            if (at + n > k_template_bytes - 1) return false;  // keeps the head before `lim`
            for (std::size_t i = 0; i < n; ++i) raw[at + i] = q[i], fixed[at + i] = fix;
            q += n;
            return true;
        };
        keep(2, true);
        std::size_t i = 0;
        for (; i < nkeys; ++i) {
            const key_bytes& k = m_keys[i];
            const std::uint64_t km = (std::uint64_t(1) << (8 * k.len)) - 1;  // the key alone
            if (k.len == 0 || (load64(q) & km) != (k.bytes & km) || !keep(k.len, true)) return;
            if (k.f == field::frames) {
                t.frames = true;
                ++i;
                break;
            }
            const std::uint8_t op = *q;
            if (op == 0x8c || ((op == 'h' || op == 'j') && k.f != field::action)) {  // a string, as the key loop takes one
                if ((k.f != field::compile_context && k.f != field::user_metadata && k.f != field::ignored) ||
                    t.nstrs == std::size(t.strs))
                    return;
                entry_template::str_slot ss{0, 0, op == 0x8c, k.f, 0};
                if (ss.fresh) {  // opcode and length fixed, the text read per entry, MEMOIZE
                    const std::size_t n = q[1];  // the key loop read this string: q[2 + n] is in the input
                    if (n >= k_template_bytes || q[2 + n] != 0x94 || !keep(2, true)) return;
                    ss.off = static_cast<std::uint8_t>(q - p);
                    ss.n = static_cast<std::uint8_t>(n);
                    auto low = [](std::size_t b) { return b >= 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * b)) - 1; };
                    ss.m0 = low(n);
                    ss.m1 = n > 8 ? low(n - 8) : 0;
                    if (!keep(n, false) || !keep(1, true)) return;
                    t.fresh_strs = true;
                } else {  // a memoized string: its bytes fixed, its id known now
                    const std::uint8_t* r = q;
                    const std::uint32_t sr = memo_ref(r, m_memo.size());
                    if (!is(sr, memo_table::t_str) || !keep(static_cast<std::size_t>(r - q), true)) return;
                    ss.sid = memo_table::payload(sr);
                }
                t.strs[t.nstrs++] = ss;
                continue;
            }
            entry_template::num s{~std::uint64_t(0), 0, 0, 0};
            int fi = -1;  // the field's index in nums
            std::size_t head = 1, width;
            bool action = false;
            switch (op) {
            case 'K': width = 1; s.keep = 0xff; break;
            case 'M': width = 2; s.keep = 0xffff; break;
            case 'J': width = 4; break;
            case 0x8a:
                if (q[1] - 1u > 7u) return;
                head = 2;
                width = q[1];
                break;
            case 'j':
                if (k.f != field::action || t.action != 0xff) return;
                action = true;
                width = 4;
                break;
            case 0x88: case 0x89: case 'N':  // a flag under a key the record does not read
                if (k.f != field::ignored) return;
                width = 0;
                break;
            default: return;  // a list, a string under another key: not of fixed width
            }
            s.shift = static_cast<std::uint8_t>(64 - 8 * width);
            if (width && !action) {
                switch (k.f) {  // the fields the key loop stores a number in
                case field::addr: fi = 0; break;
                case field::size: fi = 1; break;
                case field::time_us: fi = 2; break;
                case field::stream: fi = 3; break;
                case field::device_free: fi = 4; break;
                case field::ignored: break;
                default: return;
                }
            }
            if (!keep(head, true)) return;
            const std::uint8_t off = static_cast<std::uint8_t>(q - p);
            if (!keep(width, false)) return;
            if (action) {
                t.action = off;
            } else if (fi >= 0) {
                if (seen_fields & (1u << fi)) return;  // written twice: the later value wins, in the key loop
                seen_fields |= 1u << fi;
                s.off = off;
                t.nums[fi] = s;
            }
        }
        if (!t.frames) {
            if (i != nkeys || *q != 'u' || !keep(1, true)) return;
        }
        t.kpos = static_cast<std::uint8_t>(i);
        t.len = static_cast<std::uint8_t>(q - p);
        t.nw = static_cast<std::uint8_t>((t.len + 7) / 8);
        for (std::size_t w = 0; w < t.nw; ++w) {
            for (std::size_t b = 0; b < 8; ++b) {
                if (!fixed[8 * w + b]) continue;
                t.bytes[w] |= std::uint64_t(raw[8 * w + b]) << (8 * b);
                t.mask[w] |= std::uint64_t(0xff) << (8 * b);
            }
        }
        m_tpl_last = m_tpl_next;
        m_tpl[m_tpl_next] = t;
        m_tpl_next = (m_tpl_next + 1) % k_templates;
        if (m_tpl_n < k_templates) ++m_tpl_n;
    }
    // The fixed bytes of template t at q: the first 64 bytes compared at once (unused ones
    // masked), the next 64 when the head is longer.
    static bool same_fixed(const std::uint8_t* q, const entry_template& t) {
#if defined(__SSE2__)
        auto block = [&](int w) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * w));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.bytes + 2 * w));
            const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.mask + 2 * w));
            return _mm_and_si128(_mm_xor_si128(x, b), m);
        };
        __m128i d = _mm_or_si128(_mm_or_si128(block(0), block(1)), _mm_or_si128(block(2), block(3)));
        if (t.nw > 8) [[unlikely]]
            d = _mm_or_si128(d, _mm_or_si128(_mm_or_si128(block(4), block(5)), _mm_or_si128(block(6), block(7))));
        return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
#else
        std::uint64_t d = 0;
        for (std::size_t w = 0; w < t.nw; ++w) d |= (load64(q + 8 * w) ^ t.bytes[w]) & t.mask[w];
        return d == 0;
#endif
    }
    // The entry at q (its MEMOIZE) decoded into `e` by a template: the head's end, or null.
    // Bounds: the caller checked that k_template_bytes + k_slack bytes are left, so every word
    // read here (at most 8 bytes at an offset below 128) lies in the input, and the head ends
    // before `lim` (a head takes at most 127 bytes), where frames_value may read.
    [[gnu::always_inline]] const std::uint8_t* match_template(const std::uint8_t* q, trace_event& e,
                                                              entry_template*& used) {
        // the latest match first; slots [0, m_tpl_n) hold templates (an unset one matches anything)
        for (std::uint32_t k = 0, j = m_tpl_last; k < m_tpl_n; ++k, j = j + 1 == m_tpl_n ? 0 : j + 1) {
            entry_template& t = m_tpl[j];
            if ((load64(q) ^ t.bytes[0]) & t.mask[0]) continue;
            if (!same_fixed(q, t)) continue;
            const action_ref* c = nullptr;
            if (t.action != 0xff) {
                const std::uint32_t idx = u32(q + t.action);
                c = find_action(idx);
                if (!c) return nullptr;  // the key loop reads it (and remembers it)
            }
            // Every field of `e` written once (what `e = trace_event{}` and the key loop's stores give).
            e.kind = action_kind::other;
            e.action = {};
            if (c) {
                e.kind = c->kind;
                if (c->kind == action_kind::other) e.action = m_pool.view(c->sid);
            }
            e.frames = 0;
            e.context = 0;
            auto num = [&](const entry_template::num& n) {
                const std::uint64_t x = load64(q + n.off) << n.shift;
                return ((static_cast<std::int64_t>(x) >> n.shift) & static_cast<std::int64_t>(n.keep)) | n.def;
            };
            e.addr = num(t.nums[0]);
            e.size = num(t.nums[1]);
            e.time_us = num(t.nums[2]);
            e.stream = num(t.nums[3]);
            e.device_free = num(t.nums[4]);
            m_tpl_last = j;
            ++m_tpl_hits;
            used = &t;
            return q + t.len;
        }
        return nullptr;
    }

    // Out of line, as GCC placed it before snap21: the size_trace call in run() tipped it into
    // inlining this into run() and moving intern_cached, count and build_top out, off the
    // hot-code list (cmake/oomdx_hot_symbols.txt). The same for fast_frames_list.
    [[gnu::noinline]] bool fast_entry(const std::uint8_t*& p) {
        // The entry is decoded into the free record slot it will take on success (a copy of
        // the 64 bytes at the end compiled to `rep movs`, a sixth of this function's time).
        if (m_record_free.empty()) [[unlikely]] {
            m_record_free.push_back(static_cast<std::uint32_t>(m_records.size()));
            m_records.emplace_back();
            m_record_live.push_back(0);
        }
        const std::uint32_t slot = m_record_free.back();
        if (!decode_entry(p, m_records[slot])) return false;
        m_record_free.pop_back();
        m_record_live[slot] = 1;
        push(val{vt::record, slot, 0});
        return true;
    }

    // A batch of trace entries, MARK (EMPTY_DICT entry)+ APPENDS over a list, as Python's
    // pickler writes a trace (1000 items a batch): the entries are decoded into m_batch_buf
    // and appended to the list at APPENDS, without a record slot, a stack value, a pass of
    // run()'s dispatch per entry and APPENDS's per-item checks. The batch starts at a MARK
    // (an EMPTY_DICT right after a MARK) whose stack top is a list that APPENDS could extend.
    // While it is on, the stack ends at that MARK (only entries and FRAMEs were read since),
    // so at APPENDS the target is the same list and every check of the general path holds.
    // Any other opcode first moves the buffered entries to the stack as records (unbatch):
    // from there the general path sees exactly the stack it would have built.
    [[gnu::noinline]] bool start_batch() {
        if (m_marks.empty() || m_marks.back() != m_stack.size() || m_stack.size() == 0) return false;
        const val& t = m_stack.back();
        if (t.t != vt::node) return false;
        const node& n = m_nodes[t.a];
        if (n.kind != nk::list || n.resolved || n.consumed || n.gen != static_cast<std::uint32_t>(t.i)) return false;
        m_batch_on = true;
        m_batch_list = t.a;
        m_batch_n = 0;
        if (m_batch_buf.capacity() < k_batch_items) [[unlikely]] {
            // No record on the stack: the records' storage (a list's first batch takes the
            // general path, its first entry naming the keys) becomes the buffer, so that a run
            // does not touch both. Then Python's batch size at once, not a chain of doublings.
            if (m_record_free.size() == m_records.size() && m_records.capacity() > m_batch_buf.capacity()) {
                m_batch_buf.swap(m_records);
                m_records.clear();
                m_record_free.clear();
                m_record_live.clear();
            }
            if (m_batch_buf.capacity() < k_batch_items) m_batch_buf.reserve(k_batch_items);
        }
        return true;
    }
    enum class batch_step { more, full, not_entry };
    // From an EMPTY_DICT (`p` after it) in a batch: entries into the buffer until the next
    // opcode is not EMPTY_DICT, or the window's event point (run() refills or releases). `more`:
    // at least one entry, `p` at the next opcode. Otherwise nothing read and `p` unchanged:
    // `full` when the general path's next push would pass the stack limit (its error comes from
    // there), `not_entry` when this dict is not a trace entry the fast path reads.
    [[gnu::noinline]] batch_step batch_entries(const std::uint8_t*& p) {
        const std::uint8_t* at = p - 1;  // the EMPTY_DICT
        const std::size_t stack_limit = static_cast<std::size_t>(m_lim.max_stack);
        const std::size_t first = m_batch_n;
        // entries read here push nothing: the stack's size is that of the loop's start
        const std::size_t room = stack_limit > m_stack.size() ? stack_limit - m_stack.size() : 0;
        for (;;) {
            m_op = static_cast<std::size_t>(m_base + static_cast<std::uint64_t>(at - m_begin));  // errors' offset
            if (m_batch_n >= room) [[unlikely]] break;
            if (m_batch_n == m_batch_buf.size()) [[unlikely]] m_batch_buf.emplace_back();
            const std::uint8_t* q = at + 1;
            if (!decode_entry(q, m_batch_buf[m_batch_n])) break;
            ++m_batch_n;
            // decode_entry ends before `lim`: *q is in the input
            if (*q == 0x95) {
                const std::uint8_t* r = past_frames(q);
                if (!r) [[unlikely]] {
                    p = q;  // run() reads the FRAME (and reports it)
                    return batch_step::more;
                }
                q = r;
            }
            at = q;
            if (at >= m_event_at || *at != '}') break;
        }
        if (m_batch_n == first) return m_stack.size() + m_batch_n >= stack_limit ? batch_step::full : batch_step::not_entry;
        p = at;
        return batch_step::more;
    }
    // The buffered entries to the stack as records, in order: the stack the general path builds.
    [[gnu::noinline]] void unbatch() {
        m_batch_on = false;
        for (std::size_t i = 0; i < m_batch_n; ++i) {
            if (m_record_free.empty()) {
                m_record_free.push_back(static_cast<std::uint32_t>(m_records.size()));
                m_records.emplace_back();
                m_record_live.push_back(0);
            }
            const std::uint32_t slot = m_record_free.back();
            m_record_free.pop_back();
            m_records[slot] = m_batch_buf[i];
            m_record_live[slot] = 1;
            push(val{vt::record, slot, 0});
        }
        m_batch_n = 0;
    }
    // APPENDS closing a batch: its MARK is the top one and the stack ends there (start_batch).
    void finish_batch(const std::uint8_t* p) {
        m_marks.pop_back();
        node& l = m_nodes[m_batch_list];
        l.entries.append(m_batch_buf.data(), m_batch_n);
        m_batch_on = false;
        m_batch_n = 0;
        flush();
        if (l.entries.size() >= k_probe_entries) [[unlikely]] size_trace(l, p);
    }

    // One trace entry dict after its EMPTY_DICT (`p`), decoded into `e` and committed (memo
    // slots, object count); false, with no memo or stack change, when it is not the shape
    // Python's pickler writes. Inlined into fast_entry and batch_entries.
    [[gnu::always_inline]] bool decode_entry(const std::uint8_t*& p, trace_event& e) {
        const std::uint8_t* q = p;
        const std::uint8_t* const lim = m_end - k_slack;
        __builtin_prefetch(q + 1024);  // hardware prefetch stops at page boundaries
        const std::size_t memo_size = m_memo.size();
        std::uint32_t cc = k_no_str, um = k_no_str;
        std::size_t npend = 0, nframes = 0;
        int lpend = -1;
        key_bytes* kt = m_keys;  // the key learned at this position (a pointer: no index math)
        entry_template* tpl = nullptr;
        if (m_tpl_n && lim - q >= static_cast<std::ptrdiff_t>(k_template_bytes)) {
            if (const std::uint8_t* r = match_template(q, e, tpl)) {
                if (tpl->nstrs) [[unlikely]] {  // strings in the head, in file order (snap41)
                    for (std::size_t i = 0; i < tpl->nstrs; ++i) {
                        entry_template::str_slot& ss = tpl->strs[i];
                        std::uint32_t sid = ss.sid;
                        if (ss.fresh) {
                            // 16 bytes at the text lie in the head's 128 bytes and the slack
                            const std::uint64_t w0 = load64(q + ss.off) & ss.m0, w1 = load64(q + ss.off + 8) & ss.m1;
                            if (!(ss.seen && w0 == ss.w0 && w1 == ss.w1)) [[unlikely]] {
                                sid = intern_cached(reinterpret_cast<const char*>(q + ss.off), ss.n);
                                ss.seen = ss.n <= 16;
                                ss.w0 = w0;
                                ss.w1 = w1;
                                ss.sid = sid;
                            }
                            m_pend[npend++] = val{vt::str, sid, 0};
                        }
                        if (ss.f == field::compile_context) cc = sid;
                        else if (ss.f == field::user_metadata) um = sid;
                    }
                }
                q = r;
                kt = m_keys + tpl->kpos;
                if (!tpl->frames) goto entry_end;  // SETITEMS read
                if (*q == 'h' || *q == 'j') {  // a frames list memoized before, inline (snap33)
                    const std::uint32_t fr = memo_ref(q, memo_size);
                    if (!is(fr, memo_table::t_frames)) return false;
                    e.frames = static_cast<frames_id>(memo_table::payload(fr));
                } else if (!frames_value(q, memo_size, npend, lpend, nframes, e.frames)) {
                    return false;
                }
                if (q < lim && *q == 'u') {  // SETITEMS after the frames: what the key loop does there
                    ++q;
                    goto entry_end;
                }
            }
        }
        if (!tpl) {
            if (q >= lim || q[0] != 0x94) return false;
            ++q;
            if (*q == 0x95 && !skip_frames(q)) return false;
            if (*q != '(') return false;
            ++q;
            e = trace_event{};
        }
        for (;;) {
            if (q >= lim) return false;
            field f;
            vc cls;
            key_bytes& t = *kt;
            const std::uint64_t x = load64(q);
            if ((x & t.mask) == t.bytes) [[likely]] {
                f = t.f;  // the key the previous record had here, written the same way
                cls = t.cls;  // and its value's opcode when wide
                q += t.len;
                ++kt;
            } else if (t.wide && ((x ^ t.bytes) & (t.mask >> 8)) == 0) {
                // The same key, another opcode (a number of another width): the key alone again.
                t.mask >>= 8;
                t.bytes &= t.mask;
                t.cls = vc::other;
                t.wide = false;
                f = t.f;
                cls = vc::other;
                q += t.len;
                ++kt;
            } else {
                const std::uint8_t* const k0 = q;
                std::uint32_t key;
                if (*q == 'h') {
                    key = m_key_at[q[1]];
                    q += 2;
                } else if (*q == 'u') {
                    break;
                } else if (*q == 'j') {
                    const std::uint32_t kr = memo_ref(q, memo_size);
                    key = is(kr, memo_table::t_str) && memo_table::payload(kr) < k_key_count ? memo_table::payload(kr) : k_not_key;
                } else if (*q == 0x95) {
                    if (!skip_frames(q)) return false;
                    continue;
                } else {
                    return false;
                }
                const std::size_t at = static_cast<std::size_t>(kt - m_keys);
                if (key == k_not_key || (at == 0 && key != k_action) || at >= k_max_keys) return false;
                f = k_fields[key];
                learn_key(at, k0, static_cast<std::size_t>(q - k0), f);
                cls = vc::other;
                ++kt;
            }
            // No bounds check here: q was before `lim` at the loop's top and a key takes at
            // most 5 bytes (skip_frames stops before `lim`), so the value's opcode and its
            // fixed-size argument (at most 9 bytes) lie before the end of the input. A wide
            // match has read the opcode: it is not a FRAME, and `cls` is its class.
            if (cls == vc::other) [[unlikely]] {
                const std::uint8_t* const v0 = q;
                if (*q == 0x95 && !skip_frames(q)) return false;
                cls = k_value_class[*q];
                if (q == v0) learn_value(kt[-1], *q, cls);  // not after a FRAME: learned
            }
            std::int64_t iv;
            switch (cls) {  // dense: one jump table, no compare tree
            case vc::int1: iv = q[1]; q += 2; break;
            case vc::int2: iv = q[1] | (q[2] << 8); q += 3; break;
            case vc::int4: iv = static_cast<std::int32_t>(u32(q + 1)); q += 5; break;
            case vc::long1:  // not small_int: GCC merged the int cases into its compare tree
                if (!long1(q, iv)) return false;
                break;
            case vc::object: {
                if (f == field::frames) {
                    if (!frames_value(q, memo_size, npend, lpend, nframes, e.frames)) return false;
                    continue;
                }
                std::uint32_t sid;
                if (f == field::action && *q == 'j') {  // the action as a LONG_BINGET seen before
                    const std::uint32_t idx = u32(q + 1);
                    if (const action_ref* c = find_action(idx)) [[likely]] {
                        e.kind = c->kind;
                        if (c->kind == action_kind::other) e.action = m_pool.view(c->sid);
                        q += 5;
                        continue;
                    }
                }
                if (*q == 'h' || *q == 'j') {
                    const bool long_get = *q == 'j';
                    const std::uint32_t r = memo_ref(q, memo_size);
                    if (!is(r, memo_table::t_str)) return false;
                    sid = memo_table::payload(r);
                    if (f == field::action && long_get) {
                        const std::uint32_t idx = u32(q - 4);
                        remember_action(idx, sid);
                    }
                } else if (*q == ']' || !fresh_str(q, npend, sid)) {
                    return false;
                }
                switch (f) {
                case field::action:  // a known action's text is action_name(kind)
                    e.kind = action_of(sid);
                    if (e.kind == action_kind::other) e.action = m_pool.view(sid);
                    break;
                case field::compile_context: cc = sid; break;
                case field::user_metadata: um = sid; break;
                case field::ignored: break;
                default: return false;  // a string where a number belongs
                }
                continue;
            }
            case vc::flag:
                if (f != field::ignored) return false;
                ++q;  // a bool or None under a key the record does not read
                continue;
            case vc::other: return false;
            default: __builtin_unreachable();  // the table holds vc values only: no range check
            }
            switch (f) {  // a number
            case field::addr: e.addr = iv; break;
            case field::size: e.size = iv; break;
            case field::stream: e.stream = iv; break;
            case field::time_us: e.time_us = iv; break;
            case field::device_free: e.device_free = iv; break;
            case field::ignored: break;
            case field::action: case field::frames: case field::compile_context: case field::user_metadata:
                return false;  // a number where a string or a list belongs
            default: __builtin_unreachable();  // every field is named above: no range check
            }
        }
        ++q;  // SETITEMS
    entry_end:
        const std::size_t nkeys = static_cast<std::size_t>(kt - m_keys);
        if (nkeys == 0) return false;
        if (*q != '}') {  // (q is before `lim`) the next entry of a batch: not an item of this dict
            const std::uint8_t* r = q;  // another batch of items for the same dict
            if (*r == 0x95 && !skip_frames(r)) return false;
            if (r < m_end && (*r == '(' || *r == 's')) return false;
        }
        if (!tpl && template_learning()) learn_template(p, nkeys);

        // Commit: the dict's memo slot, then its fresh values' slots in file order.
        memo_put_consumed();
        for (std::size_t i = 0; i < npend; ++i) {
            if (static_cast<int>(i) == lpend) {
                e.frames = commit_list(nframes);
                m_pend[i] = val{vt::frames, static_cast<std::uint32_t>(e.frames), 0};
            }
            memo_put(static_cast<std::uint64_t>(m_memo_count), m_pend[i]);
        }
        if (cc != k_no_str) m_has_cc = true;
        if (um != k_no_str) m_has_um = true;
        if (cc != k_no_str || um != k_no_str) {
            const std::uint64_t key = (std::uint64_t(cc) << 32) | um;  // context_of's first test, inline
            e.context = key == m_last_context_key ? m_last_context : context_of(cc, um);
        }
        count(static_cast<std::int64_t>(nkeys * 2 + nframes + npend + 1));
        p = q;
        return true;
    }

    // A fresh list of frames outside a record (a block's or a segment's): the same shapes as
    // in frames_value. `p` points after the EMPTY_LIST opcode.
    [[gnu::noinline]] bool fast_frames_list(const std::uint8_t*& p) {
        const std::uint8_t* q = p - 1;
        if (m_end - q < k_slack) return false;
        std::size_t npend = 0, n = 0;
        int lpend = -1;
        frames_id id = 0;
        if (!frames_value(q, m_memo.size(), npend, lpend, n, id) || lpend < 0 || n == 0) return false;
        id = commit_list(n);
        m_pend[lpend] = val{vt::frames, static_cast<std::uint32_t>(id), 0};
        for (std::size_t i = 0; i < npend; ++i) memo_put(static_cast<std::uint64_t>(m_memo_count), m_pend[i]);
        count(static_cast<std::int64_t>(n + npend));
        push(m_pend[lpend]);
        p = q;
        return true;
    }

    struct span {  // the fresh frames list being read (cached_span)
        const std::uint8_t* p = nullptr;  // its item bytes when they may be cached
        std::size_t len = 0;
        std::uint32_t items = 0;
        std::uint64_t hash = 0;
        frames_id hit = -1;  // the list, when its bytes were cached
    };
    span m_span;
    list_span_cache m_spans;
    static constexpr std::size_t k_max_pend = 256;   // memo values one record may queue
    static constexpr std::size_t k_str_cache = 64;
    struct str_cache_entry {
        const char* text = nullptr;
        std::uint32_t n = 0, id = 0;
    };
    val m_pend[k_max_pend];
    str_cache_entry m_str_cache[k_str_cache];
    std::uint32_t m_low_memo[256] = {};  // raw memo slots 0-255 (BINGET), 0 while unset
    static constexpr std::uint8_t k_not_key = 0xff;
    std::uint8_t m_key_at[256];  // the known key a BINGET of slots 0-255 names, or k_not_key

    const std::uint8_t* m_begin;  // the input, or its window
    const std::uint8_t* m_end;
    const std::string& m_name;
    const load_limits& m_lim;
    snapshot& m_out;
    string_pool& m_pool;
    frame_interner m_frames;
    const std::function<void(std::size_t)>& m_release;

    std::size_t m_op = 0;
    std::uint8_t m_opcode = 0;
    int m_protocol = 0;
    std::int64_t m_objects = 0;
    val_stack m_stack;
    std::vector<std::size_t> m_marks;
    std::deque<node> m_nodes;
    std::vector<std::uint32_t> m_free;
    std::vector<val> m_pending;
    memo_table m_memo;
    std::unordered_map<std::int64_t, val> m_sparse;
    std::int64_t m_memo_count = 0;
    std::vector<std::int8_t> m_action_cache;
    std::vector<trace_event> m_records;
    bool m_batch_on = false;          // a batch of entries is being read (start_batch)
    std::uint32_t m_batch_list = 0;   // its list's node
    std::size_t m_batch_n = 0;        // entries in m_batch_buf
    std::vector<trace_event> m_batch_buf;
    static constexpr std::size_t k_batch_items = 1024;  // pickle's _BATCHSIZE is 1000
    std::vector<std::uint8_t> m_record_live;
    std::vector<std::uint32_t> m_record_free;
    // Frames of one entry; not zero-filled, so that only the pages a stack reaches are touched.
    static constexpr std::size_t k_fids = std::size_t(1) << 14;
    std::unique_ptr<frame_id[]> m_fids{new frame_id[k_fids]};
    std::unordered_map<std::uint64_t, std::uint32_t> m_contexts;
    std::uint64_t m_last_context_key = ~std::uint64_t(0);
    std::uint32_t m_last_context = 0;
    std::vector<frame_id> m_scratch;
    std::string m_utf8;
    bool m_has_cc = false, m_has_um = false;

    // The input in all, and its window when it is read in pieces.
    std::uint64_t m_total = 0;
    const pickle_source* m_src = nullptr;
    std::unique_ptr<std::uint8_t[]> m_buf;
    std::size_t m_cap = 0;
    std::uint64_t m_base = 0;  // the input's offset of m_begin
    bool m_more = false;       // input bytes after m_end
    const std::uint8_t* m_event_at = nullptr;  // run(): at or past it, release or refill
};

// Strings are stored as valid UTF-8: invalid bytes become U+FFFD.
std::uint32_t reader::intern_utf8(std::string_view s) {
    if (first_invalid_utf8(s) == std::string_view::npos) return m_pool.intern(s);
    m_utf8 = to_valid_utf8(s);
    return m_pool.intern(m_utf8);
}

// Turns a value that is being placed into a container into its settled form.
val reader::settle_node(val v) {
    node& n = deref(v);
    if (n.resolved) return n.res;
    if (n.kind == nk::dict) {
        std::uint64_t m = key_mask(n);
        if ((m & (bit(k_filename) | bit(k_name))) != (bit(k_filename) | bit(k_name)) ||
            (m & (bit(k_action) | bit(k_size) | bit(k_state))))
            return v;
        std::uint32_t fn = 0, nm = 0;
        std::int64_t line = 0;
        bool have_fn = false, have_nm = false;
        for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
            const val& k = n.items[i];
            const val& x = n.items[i + 1];
            if (k.t != vt::str) continue;
            if (k.a == k_filename || k.a == k_name) {
                std::uint32_t id = x.t == vt::str ? x.a : m_pool.intern("");
                if (k.a == k_filename) { fn = id; have_fn = true; }
                else { nm = id; have_nm = true; }
            } else if (k.a == k_line) {
                line = as_int(x, k_line);
            }
        }
        if (!have_fn || !have_nm) return v;
        n.res = val{vt::frame, static_cast<std::uint32_t>(m_frames.intern_frame(fn, nm, line)), 0};
    } else if (n.kind == nk::list) {
        if (!n.entries.empty() || !n.blocks.empty() || !n.segs.empty()) return v;
        m_scratch.clear();
        for (const val& x : n.items) {
            if (x.t != vt::frame) return v;
            m_scratch.push_back(static_cast<frame_id>(x.a));
        }
        n.res = val{vt::frames,
                    static_cast<std::uint32_t>(m_frames.intern_list(m_scratch.data(), m_scratch.size())), 0};
    } else {
        return v;
    }
    n.resolved = true;
    retire(v);
    return n.res;
}

void reader::append_node(node& list, val v) {
    {
        node& n = deref(v);
        if (&n == &list) fail("a container contains itself");
        if (!n.resolved && n.kind == nk::dict) {
            std::uint64_t m = key_mask(n);
            if (m & bit(k_action)) {
                list.entries.push_back(to_entry(n));
            } else if (m & (bit(k_total_size) | bit(k_blocks))) {
                list.segs.push_back(to_segment(n));
            } else if ((m & bit(k_state)) && (m & bit(k_size))) {
                list.blocks.push_back(to_block(n));
            } else {
                goto generic;
            }
            n.consumed = true;
            retire(v);
            return;
        }
    }
generic:
    v = settle(v);
    place_child(list, v);
    list.items.push_back(v);
}

trace_event reader::to_entry(const node& n) {
    trace_event e;
    std::uint32_t cc = k_no_str, um = k_no_str;
    for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
        const val& k = n.items[i];
        const val& x = n.items[i + 1];
        if (k.t != vt::str) continue;
        switch (k.a) {
        case k_action:
            if (x.t != vt::str) fail("trace entry 'action' is not a string");
            e.action = m_pool.view(x.a);
            e.kind = action_of(x.a);
            break;
        case k_addr: e.addr = as_int(x, k.a); break;
        case k_size: e.size = as_int(x, k.a); break;
        case k_stream: e.stream = as_int(x, k.a); break;
        case k_time_us: e.time_us = as_int(x, k.a, -1); break;
        case k_device_free: e.device_free = as_int(x, k.a, -1); break;
        case k_frames: e.frames = as_frames(x); break;
        case k_compile_context:
            if (x.t != vt::str) fail("trace entry 'compile_context' is not a string");
            cc = x.a;
            m_has_cc = true;
            break;
        case k_user_metadata:
            if (x.t != vt::str) fail("trace entry 'user_metadata' is not a string");
            um = x.a;
            m_has_um = true;
            break;
        default: break;
        }
    }
    if (cc != k_no_str || um != k_no_str) e.context = context_of(cc, um);
    return e;
}

block reader::to_block(const node& n) {
    block b;
    bool have_addr = false;
    std::int64_t req = -1, hist_req = -1;
    for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
        const val& k = n.items[i];
        const val& x = n.items[i + 1];
        if (k.t != vt::str) continue;
        switch (k.a) {
        case k_address: b.address = as_int(x, k.a); have_addr = true; break;
        case k_size: b.size = as_int(x, k.a); break;
        case k_requested_size: req = as_int(x, k.a, -1); break;
        case k_state:
            if (x.t != vt::str) fail("block 'state' is not a string");
            b.state_text = m_pool.view(x.a);
            b.state = parse_block_state(b.state_text);
            break;
        case k_frames: b.frames = as_frames(x); break;
        case k_history: {
            b.has_history = true;
            if (x.t == vt::frames) break;  // empty list
            if (x.t != vt::node) fail("block 'history' is not a list");
            node& h = deref(x);
            if (h.kind != nk::list || h.items.empty()) break;
            const val& first = h.items.front();
            if (first.t != vt::node) break;
            node& d = deref(first);
            if (d.kind != nk::dict) break;
            for (std::size_t j = 0; j + 1 < d.items.size(); j += 2) {
                const val& hk = d.items[j];
                if (hk.t != vt::str) continue;
                if (hk.a == k_real_size) hist_req = as_int(d.items[j + 1], hk.a, -1);
                else if (hk.a == k_frames) b.frames = as_frames(d.items[j + 1]);
                else if (hk.a == k_addr && !have_addr) b.address = as_int(d.items[j + 1], hk.a);
            }
            break;
        }
        default: break;
        }
    }
    b.requested_size = req >= 0 ? req : hist_req >= 0 ? hist_req : b.size;
    b.address_derived = !have_addr;
    return b;
}

segment reader::to_segment(node& n) {
    segment s;
    for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
        const val& k = n.items[i];
        const val& x = n.items[i + 1];
        if (k.t != vt::str) continue;
        switch (k.a) {
        case k_device: s.device = as_int(x, k.a); break;
        case k_address: s.address = as_int(x, k.a); break;
        case k_total_size: s.total_size = as_int(x, k.a); break;
        case k_allocated_size: s.allocated_size = as_int(x, k.a); break;
        case k_active_size: s.active_size = as_int(x, k.a); break;
        case k_requested_size: s.requested_size = as_int(x, k.a); break;
        case k_stream: s.stream = as_int(x, k.a); break;
        case k_segment_type: s.segment_type = as_str(x, k.a); break;
        case k_is_expandable: s.is_expandable = as_int(x, k.a) != 0; break;
        case k_frames: s.frames = as_frames(x); break;
        case k_segment_pool_id:
            if (x.t == vt::node) {
                node& t = deref(x);
                if (t.items.size() == 2) {
                    s.pool_id_0 = as_int(t.items[0], k.a);
                    s.pool_id_1 = as_int(t.items[1], k.a);
                    s.has_pool_id = true;
                }
            }
            break;
        case k_blocks:
            if (x.t == vt::frames && x.a == 0) break;  // empty list
            if (x.t != vt::node) fail("segment 'blocks' is not a list of block dicts");
            {
                node& l = deref(x);
                if (l.kind != nk::list || !l.items.empty())
                    fail("segment 'blocks' holds items that are not block dicts");
                s.blocks = std::move(l.blocks);
                l.consumed = true;
                retire(x);
            }
            break;
        default: break;
        }
    }
    std::int64_t next = s.address;
    for (auto& b : s.blocks) {
        if (b.address_derived) b.address = next;
        next = wrapping_add(b.address, b.size);  // validated after reading
    }
    return s;
}

std::vector<segment> reader::take_segments(const val& v, const char* what) {
    if (v.t == vt::frames && v.a == 0) return {};
    if (v.t != vt::node) fail(std::string("'") + what + "' is not a list");
    node& l = deref(v);
    if (l.kind != nk::list) fail(std::string("'") + what + "' is not a list");
    if (!l.items.empty())
        fail(std::string("'") + what + "' holds " + std::to_string(l.items.size()) +
             " item(s) that are not segment dicts");
    return std::move(l.segs);
}

nlohmann::json reader::to_json(const val& v, std::int64_t depth) {
    if (depth > m_lim.max_depth) fail("limit exceeded: nesting deeper than " + std::to_string(m_lim.max_depth) + " (limit snapshot_depth)");
    switch (v.t) {
    case vt::none: return nullptr;
    case vt::boolean: return v.i != 0;
    case vt::integer: return v.i;
    case vt::uint64: return static_cast<std::uint64_t>(v.i);
    case vt::floating: { double d; std::memcpy(&d, &v.i, 8); return d; }
    case vt::str: return std::string(m_pool.view(v.a));
    case vt::frame: {
        const frame& f = m_out.frames[v.a];
        return {{"name", f.name}, {"filename", f.filename}, {"line", f.line}};
    }
    case vt::frames: {
        auto j = nlohmann::json::array();
        for (frame_id id : m_out.frame_list(static_cast<frames_id>(v.a)))
            j.push_back(to_json(val{vt::frame, static_cast<std::uint32_t>(id), 0}, depth + 1));
        return j;
    }
    case vt::node: {
        node& n = deref(v);
        if (n.visiting) fail("recursive structure");
        n.visiting = true;
        nlohmann::json j;
        if (n.kind == nk::dict) {
            j = nlohmann::json::object();
            for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
                const val& k = n.items[i];
                std::string key = k.t == vt::str ? std::string(m_pool.view(k.a))
                                                 : to_json(k, depth + 1).dump();
                j[key] = to_json(n.items[i + 1], depth + 1);
            }
        } else {
            j = nlohmann::json::array();
            for (const val& x : n.items) j.push_back(to_json(x, depth + 1));
        }
        n.visiting = false;
        return j;
    }
    default: return nullptr;
    }
}

void reader::build_top(const val& topv) {
    auto& info = m_out.info;
    info.format = "pickle";
    info.pickle_protocol = m_protocol;
    if (topv.t != vt::node) fail("top-level object is not a dict or a list");
    node& top = deref(topv);
    if (top.kind == nk::list) {
        info.top_level = "list";
        if (!top.items.empty())
            fail("top-level list holds " + std::to_string(top.items.size()) +
                 " item(s) that are not segment dicts");
        m_out.segments = std::move(top.segs);
        return;
    }
    if (top.kind != nk::dict) fail("top-level object is not a dict or a list");
    info.top_level = "dict";
    bool have_segments = false;
    for (std::size_t i = 0; i + 1 < top.items.size(); i += 2) {
        const val& k = top.items[i];
        const val& x = top.items[i + 1];
        if (k.t != vt::str) continue;
        switch (k.a) {
        case k_segments:
            m_out.segments = take_segments(x, "segments");
            have_segments = true;
            break;
        case k_host_segments: m_out.host_segments = take_segments(x, "host_segments"); break;
        case k_device_traces:
        case k_traces: {
            info.has_traces_key = true;
            if (x.t == vt::frames && x.a == 0) break;
            if (x.t != vt::node || deref(x).kind != nk::list) fail("'device_traces' is not a list");
            node& l = deref(x);
            if (!l.entries.empty()) {  // a flat list of entries: treat as device 0
                m_out.device_traces.push_back(std::move(l.entries));
                break;
            }
            for (const val& d : l.items) {
                if (d.t == vt::frames && d.a == 0) {
                    m_out.device_traces.emplace_back();
                    continue;
                }
                if (d.t != vt::node) fail("'device_traces' item is not a list of trace entries");
                node& t = deref(d);
                if (t.kind != nk::list || !t.items.empty())
                    fail("'device_traces' item holds something other than trace entry dicts");
                m_out.device_traces.push_back(std::move(t.entries));
            }
            break;
        }
        case k_allocator_settings:
            info.has_allocator_settings = true;
            m_out.allocator_settings = to_json(x, 0);
            break;
        case k_external_annotations: {
            info.has_external_annotations = true;
            if (x.t != vt::node) break;
            node& l = deref(x);
            for (const val& a : l.items) {
                if (a.t != vt::node) continue;
                node& d = deref(a);
                if (d.kind != nk::dict) continue;
                annotation an;
                for (std::size_t j = 0; j + 1 < d.items.size(); j += 2) {
                    const val& ak = d.items[j];
                    const val& ax = d.items[j + 1];
                    if (ak.t != vt::str) continue;
                    if (ak.a == k_name) an.name = as_str(ax, ak.a);
                    else if (ak.a == k_stage) an.stage = as_str(ax, ak.a);
                    else if (ak.a == k_device) an.device = as_int(ax, ak.a, -1);
                    else if (ak.a == k_time_us) an.time_us = as_int(ax, ak.a, -1);
                }
                m_out.external_annotations.push_back(an);
            }
            break;
        }
        case k_host_traces: break;
        default: info.unknown_top_keys.emplace_back(m_pool.view(k.a)); break;
        }
    }
    if (!have_segments) fail("top-level dict has no 'segments' key: not a memory snapshot");
    info.has_compile_context = m_has_cc;
    info.has_user_metadata = m_has_um;
}

void reader::run() {
    const std::uint8_t* p = m_begin;
    const std::size_t size = static_cast<std::size_t>(m_total);
    if (size == 0) fail("empty file");
    if (m_src) refill(p, 0);
    if (p[0] != 0x80)
        fail("not a pickle of protocol 2-5 (no PROTO opcode at the start)");
    m_stack.reserve(4096);
    // Mapped whole: the pages behind the reader are released every release_step bytes. In
    // pieces: the window is refilled (refill sets m_event_at).
    const std::size_t release_step = read_ahead::step_for(size);
    if (!m_src) m_event_at = m_begin + std::min(size, release_step);
    for (;;) {
        if (p >= m_event_at) [[unlikely]] {
            if (m_src) {
                if (m_more) refill(p, 0);
            } else {
                const std::size_t at = static_cast<std::size_t>(p - m_begin);
                if (m_release && at < size) m_release(at);
                m_event_at = m_begin + std::min(size, at + release_step);
            }
        }
        m_op = static_cast<std::size_t>(m_base + static_cast<std::uint64_t>(p - m_begin));
        if (p >= m_end) fail("truncated: end of data before STOP");
        m_opcode = *p++;
        if (m_batch_on) [[unlikely]] {
            if (m_opcode != '}' && m_opcode != 'e' && m_opcode != 0x95) unbatch();
        }
        switch (m_opcode) {
        case 0x80:  // PROTO
            need(p, 1);
            m_protocol = *p++;
            if (m_protocol < 2 || m_protocol > 5)
                fail("unsupported pickle protocol " + std::to_string(m_protocol) +
                     " (expected 2-5)");
            break;
        case 0x95: {  // FRAME
            need(p, 8);
            std::uint64_t len = u64(p);
            p += 8;
            if (len > left(p))
                fail("truncated: FRAME announces " + std::to_string(len) + " bytes, " +
                     std::to_string(left(p)) + " left");
            break;
        }
        case '.': {  // STOP
            need_stack(1);
            if (!m_marks.empty()) fail("STOP with an open MARK");
            val top = m_stack.back();
            flush();
            build_top(top);
            finish_snapshot(m_out);
            return;
        }
        case '(':
            if (m_marks.size() >= static_cast<std::size_t>(m_lim.max_depth))
                fail("limit exceeded: more than " + std::to_string(m_lim.max_depth) + " open MARKs (limit snapshot_depth)");
            m_marks.push_back(m_stack.size());
            break;
        case '0':
            if (!m_marks.empty() && m_marks.back() == m_stack.size()) m_marks.pop_back();
            else { need_stack(1); drop_to(m_stack.size() - 1); }
            break;
        case '1': drop_to(pop_mark()); flush(); break;
        case '2': need_stack(1); push(m_stack.back()); break;
        case 'N': push(val{vt::none}); count(); break;
        case 0x88: push(val{vt::boolean, 0, 1}); count(); break;
        case 0x89: push(val{vt::boolean, 0, 0}); count(); break;
        case 'K': need(p, 1); push(val{vt::integer, 0, *p}); p += 1; count(); break;
        case 'M': need(p, 2); push(val{vt::integer, 0, p[0] | (p[1] << 8)}); p += 2; count(); break;
        case 'J':
            need(p, 4);
            push(val{vt::integer, 0, static_cast<std::int32_t>(u32(p))});
            p += 4;
            count();
            break;
        case 0x8a:    // LONG1
        case 0x8b: {  // LONG4
            std::uint64_t n;
            if (m_opcode == 0x8a) { need(p, 1); n = *p++; }
            else {
                need(p, 4);
                std::int32_t s = static_cast<std::int32_t>(u32(p));
                p += 4;
                if (s < 0) fail("LONG4 with a negative length");
                n = static_cast<std::uint64_t>(s);
            }
            if (n > 9) fail("integer of " + std::to_string(n) + " bytes is too large (at most 9)");
            need(p, n);
            std::uint64_t x = 0;
            for (std::uint64_t i = 0; i < n && i < 8; ++i) x |= std::uint64_t(p[i]) << (8 * i);
            val v{vt::integer, 0, 0};
            if (n == 9) {
                if (p[8] != 0) fail("integer of 9 bytes does not fit in 64 bits");
                v.t = vt::uint64;
            } else if (n > 0 && n < 8 && (p[n - 1] & 0x80)) {
                x |= ~std::uint64_t(0) << (8 * n);  // sign-extend
            }
            v.i = static_cast<std::int64_t>(x);
            p += n;
            push(v);
            count();
            break;
        }
        case 'G': {  // BINFLOAT, big-endian
            need(p, 8);
            std::uint64_t x = 0;
            for (int i = 0; i < 8; ++i) x = (x << 8) | p[i];
            p += 8;
            push(val{vt::floating, 0, static_cast<std::int64_t>(x)});
            count();
            break;
        }
        case 0x8c:  // SHORT_BINUNICODE
        case 'C':   // SHORT_BINBYTES
        case 'U': { // SHORT_BINSTRING
            need(p, 1);
            std::uint64_t n = *p++;
            need(p, n);
            push(str_val(p, n));
            p += n;
            break;
        }
        case 'X':    // BINUNICODE
        case 'B':    // BINBYTES
        case 'T': {  // BINSTRING
            need(p, 4);
            std::uint64_t n = u32(p);
            if (m_opcode == 'T' && (n >> 31)) fail("BINSTRING with a negative length");
            p += 4;
            if (n > static_cast<std::uint64_t>(m_lim.max_string)) str_val(p, n);
            need(p, n);
            push(str_val(p, n));
            p += n;
            break;
        }
        case 0x8d:    // BINUNICODE8
        case 0x8e: {  // BINBYTES8
            need(p, 8);
            std::uint64_t n = u64(p);
            p += 8;
            if (n > static_cast<std::uint64_t>(m_lim.max_string)) str_val(p, n);
            need(p, n);
            push(str_val(p, n));
            p += n;
            break;
        }
        case '}':
            if (m_batch_on || start_batch()) {
                const batch_step b = batch_entries(p);
                if (b == batch_step::more) break;
                unbatch();
                if (b == batch_step::not_entry) {  // the same bytes fail fast_entry
                    push(new_node(nk::dict));
                    break;
                }
            }
            if (!fast_entry(p)) push(new_node(nk::dict));
            break;
        case ']':
            if (!fast_frames_list(p)) push(new_node(nk::list));
            break;
        case 0x8f: push(new_node(nk::list)); break;  // EMPTY_SET: kept as a list
        case ')': push(new_node(nk::tuple)); break;
        case 0x94: need_stack(1); memo_put(static_cast<std::uint64_t>(m_memo_count), m_stack.back()); break;
        case 'q': need(p, 1); need_stack(1); memo_put(*p, m_stack.back()); p += 1; break;
        case 'r': need(p, 4); need_stack(1); memo_put(u32(p), m_stack.back()); p += 4; break;
        case 'h': need(p, 1); push(memo_get(*p)); p += 1; break;
        case 'j': need(p, 4); push(memo_get(u32(p))); p += 4; break;
        case 'a': {  // APPEND
            need_stack(2);
            val v = m_stack.back();
            append_item(target(m_stack.size() - 2, nk::list), v);
            drop_to(m_stack.size() - 1);
            flush();
            break;
        }
        case 'e':      // APPENDS
            if (m_batch_on) {
                finish_batch(p);
                break;
            }
            [[fallthrough]];
        case 0x90: {   // ADDITEMS
            std::size_t k = pop_mark();
            if (k == 0) fail(std::string(opname()) + " has no list below its MARK");
            node& l = target(k - 1, nk::list);
            for (std::size_t i = k; i < m_stack.size(); ++i) append_item(l, m_stack[i]);
            drop_to(k);
            flush();
            if (l.entries.size() >= k_probe_entries) [[unlikely]] size_trace(l, p);
            break;
        }
        case 's': {  // SETITEM
            need_stack(3);
            val v = m_stack.back();
            val key = m_stack[m_stack.size() - 2];
            set_item(target(m_stack.size() - 3, nk::dict), key, v);
            drop_to(m_stack.size() - 2);
            flush();
            break;
        }
        case 'u': {  // SETITEMS
            std::size_t k = pop_mark();
            if (k == 0) fail("SETITEMS has no dict below its MARK");
            if ((m_stack.size() - k) % 2) fail("SETITEMS with an odd number of items");
            node& d = target(k - 1, nk::dict);
            for (std::size_t i = k; i < m_stack.size(); i += 2) set_item(d, m_stack[i], m_stack[i + 1]);
            drop_to(k);
            flush();
            break;
        }
        case 0x85: case 0x86: case 0x87: case 't': case 'l': case 'd': case 0x91: {
            std::size_t k;
            if (m_opcode >= 0x85 && m_opcode <= 0x87) {
                std::size_t n = m_opcode - 0x84;
                need_stack(n);
                k = m_stack.size() - n;
            } else {
                k = pop_mark();
            }
            nk kind = m_opcode == 'l' || m_opcode == 0x91 ? nk::list
                      : m_opcode == 'd'                   ? nk::dict
                                                          : nk::tuple;
            val c = new_node(kind);
            node& n = m_nodes[c.a];
            if (kind == nk::dict) {
                if ((m_stack.size() - k) % 2) fail("DICT with an odd number of items");
                for (std::size_t i = k; i < m_stack.size(); i += 2) set_item(n, m_stack[i], m_stack[i + 1]);
            } else if (kind == nk::list) {
                for (std::size_t i = k; i < m_stack.size(); ++i) append_item(n, m_stack[i]);
            } else {
                for (std::size_t i = k; i < m_stack.size(); ++i) {
                    val x = settle(m_stack[i]);
                    place_child(n, x);
                    n.items.push_back(x);
                }
            }
            drop_to(k);
            push(c);
            flush();
            break;
        }
        default: {
            opcode_info oi = describe_opcode(m_opcode);
            switch (oi.cls) {
            case opcode_class::code:
                fail(std::string("refused opcode ") + oi.name +
                     ": it could import or run Python code, and a memory snapshot never "
                     "contains one");
            case opcode_class::unsupported:
                fail(std::string("unsupported opcode ") + oi.name +
                     " (snapshot producers write protocol 2-5 data opcodes only)");
            default:
                fail(std::string("invalid opcode ") + oi.name + ": not a pickle, or corrupt");
            }
        }
        }
    }
}

}  // namespace

void read_pickle(std::string_view data, const std::string& name, const load_limits& limits,
                 snapshot& out, const std::function<void(std::size_t)>& release) {
    intern_known_keys(out.strings());
    reader r(data, name, limits, out, release);
    r.run();
}

void read_pickle(const pickle_source& src, const std::string& name, const load_limits& limits,
                 snapshot& out, const std::function<void(std::size_t)>& progress) {
    intern_known_keys(out.strings());
    reader r(src, name, limits, out, progress);
    r.run();
}

}  // namespace oomdx::snap
