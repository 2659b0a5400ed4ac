#include "parsers/log/printed_block.h"
#include "parsers/log/line_splitter.h"

#include <fmt/format.h>

namespace oomdx::log_detail {

namespace {

// A torchrun --tee / rank prefix at the start of the header ("[rank0]: ", "[default3]:"): a short
// bracket closed by "]:" with no space inside; the lines of the block carry the same one.
std::string_view launcher_prefix(std::string_view h) {
    if (h.empty() || h[0] != '[') return {};
    for (size_t i = 1; i < h.size() && i < 32; ++i) {
        if (h[i] == ' ' || h[i] == '[') return {};
        if (h[i] == ']') {
            if (i + 1 >= h.size() || h[i + 1] != ':') return {};
            size_t end = i + 2;
            if (end < h.size() && h[end] == ' ') ++end;
            return h.substr(0, end);
        }
    }
    return {};
}


}  // namespace

void printed_block_reader::start(std::string_view header, size_t brace) {
    m_state = state::open;
    m_prefix = std::string(launcher_prefix(header));
    m_text = "{\n";
    m_reason.clear();
    m_lines = m_foreign = 0;
    if (brace + 1 < header.size() && !trim_line_end(header.substr(brace + 1)).empty())
        drop("text after the opening brace");
}

bool printed_block_reader::feed(std::string_view line) {
    if (m_state != state::open) return false;
    ++m_lines;
    if (!m_prefix.empty()) {
        if (line.substr(0, m_prefix.size()) != m_prefix) {
            // Without its space the prefix may still be there ("[rank0]:}").
            const std::string_view bare = std::string_view(m_prefix).substr(0, m_prefix.find(':') + 1);
            if (line.substr(0, bare.size()) != bare) {
                if (++m_foreign > k_block_foreign) drop(fmt::format("more than {} other lines inside", k_block_foreign));
                return false;
            }
            line.remove_prefix(bare.size());
        } else {
            line.remove_prefix(m_prefix.size());
        }
    }
    const std::string_view t = trim_line_end(line);
    if (t == "}") {
        m_text += "}\n";
        m_state = state::closed;
        return true;
    }
    // Lines of the JSON are indented; anything else is another process's line between them.
    if (t.empty() || (t[0] != ' ' && t[0] != '\t')) {
        if (++m_foreign > k_block_foreign) drop(fmt::format("more than {} other lines inside", k_block_foreign));
        return false;
    }
    if (m_text.size() + t.size() + 1 > k_block_cap) {
        drop(fmt::format("longer than {} KiB", k_block_cap / 1024));
        return true;
    }
    m_text.append(t.data(), t.size());
    m_text += '\n';
    return true;
}

void printed_block_reader::end(std::string_view why) {
    if (m_state == state::open) drop(std::string(why));
}

void printed_block_reader::drop(std::string why) {
    m_state = state::dropped;
    m_reason = std::move(why);
    m_text.clear();
    m_text.shrink_to_fit();
}

}  // namespace oomdx::log_detail
