#include "parsers/snapshot/snapshot_model.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace oomdx::snap {

struct string_pool::index {
    std::unordered_map<std::string_view, std::uint32_t> map;
};

string_pool::string_pool() : m_index(std::make_unique<index>()) {}
string_pool::~string_pool() = default;

std::uint32_t string_pool::intern(std::string_view s) {
    auto it = m_index->map.find(s);
    if (it != m_index->map.end()) return it->second;
    char* dst = nullptr;
    if (s.size() > 4096) {
        m_chunks.push_back(std::make_unique_for_overwrite<char[]>(s.size() + 1));
        m_chunks.back()[s.size()] = 0;
        dst = m_chunks.back().get();
        // keep the current small chunk as the active one
        if (m_chunks.size() >= 2) std::swap(m_chunks[m_chunks.size() - 1], m_chunks[m_chunks.size() - 2]);
    } else {
        if (m_used + s.size() + 1 > m_cap || m_chunks.empty()) {
            m_cap = 64 * 1024;
            // Not zero-filled: a page of the chunk is touched when a string reaches it.
            m_chunks.push_back(std::make_unique_for_overwrite<char[]>(m_cap));
            m_used = 0;
        }
        dst = m_chunks.back().get() + m_used;
        dst[s.size()] = 0;
        m_used += s.size() + 1;
    }
    if (!s.empty()) std::memcpy(dst, s.data(), s.size());
    std::string_view stored(dst, s.size());
    auto id = static_cast<std::uint32_t>(m_views.size());
    m_views.push_back(stored);
    m_index->map.emplace(stored, id);
    m_bytes += s.size();
    return id;
}

snapshot::snapshot() : m_strings(std::make_unique<string_pool>()) {}
snapshot::~snapshot() = default;
snapshot::snapshot(snapshot&&) noexcept = default;
snapshot& snapshot::operator=(snapshot&&) noexcept = default;

std::vector<std::int64_t> snapshot::devices() const {
    std::vector<std::int64_t> d;
    for (const auto& s : segments) d.push_back(s.device);
    for (std::size_t i = 0; i < device_traces.size(); ++i)
        if (!device_traces[i].empty()) d.push_back(static_cast<std::int64_t>(i));
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
}

namespace {
template <class V>
const V* find_at(const std::vector<std::pair<std::uint64_t, V>>& v, std::uint64_t i) {
    auto it = std::lower_bound(v.begin(), v.end(), i, [](const auto& p, std::uint64_t x) { return p.first < x; });
    return it != v.end() && it->first == i ? &it->second : nullptr;
}
}  // namespace

void trace_list::push_back_extras(const trace_event& e) {
    const std::uint64_t i = m_entries.size();
    sums_to_add().add(e, i);
    m_entries.push_back(e);
    if (e.stream != m_stream) extras().streams.emplace_back(i, e.stream);
    m_stream = e.stream;
    if (e.device_free != -1) extras().device_free.emplace_back(i, e.device_free);
    if (e.kind == action_kind::other || (!e.action.empty() && e.action != action_name(e.kind)))
        extras().actions.emplace_back(i, e.action.empty() ? "" : e.action.data());
}

const std::vector<std::pair<std::uint64_t, std::int64_t>>& trace_list::device_frees() const {
    static const std::vector<std::pair<std::uint64_t, std::int64_t>> none;
    return m_side ? m_side->device_free : none;
}

std::int64_t trace_list::stream(std::size_t i) const {
    if (!m_side) return 0;
    const auto& v = m_side->streams;
    auto it = std::upper_bound(v.begin(), v.end(), std::uint64_t(i),
                               [](std::uint64_t x, const auto& p) { return x < p.first; });
    return it == v.begin() ? 0 : std::prev(it)->second;
}

std::int64_t trace_list::device_free(std::size_t i) const {
    const std::int64_t* v = m_side ? find_at(m_side->device_free, i) : nullptr;
    return v ? *v : -1;
}

std::string_view trace_list::action(std::size_t i) const {
    const char* const* v = m_side ? find_at(m_side->actions, i) : nullptr;
    return v ? std::string_view(*v) : std::string_view(action_name(m_entries[i].kind));
}

trace_event trace_list::event(std::size_t i) const {
    trace_event e;
    static_cast<trace_entry&>(e) = m_entries[i];
    e.stream = stream(i);
    e.device_free = device_free(i);
    e.action = action(i);
    return e;
}

namespace {
constexpr const char* k_action_names[] = {
    "alloc",         "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map",   "segment_unmap",  "snapshot",       "oom",           "user_defined",
    "annotate",      "workspace_snapshot", "other"};
}

action_kind parse_action(std::string_view s) {
    for (int i = 0; i < static_cast<int>(action_kind::other); ++i)
        if (s == k_action_names[i]) return static_cast<action_kind>(i);
    return action_kind::other;
}

const char* action_name(action_kind a) { return k_action_names[static_cast<int>(a)]; }

}  // namespace oomdx::snap
