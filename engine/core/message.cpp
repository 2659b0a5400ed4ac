#include "engine/core/message.h"

#include "engine/core/cjk_spacing.h"

namespace oomdx {

namespace {

struct segment {
    bool placeholder = false;
    std::string text;  // literal text, or the placeholder's name
};

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

std::vector<segment> parse(std::string_view t) {
    std::vector<segment> out;
    auto literal = [&](std::string_view s) {
        if (s.empty()) return;
        if (out.empty() || out.back().placeholder) out.push_back({false, {}});
        out.back().text += s;
    };
    size_t i = 0;
    while (i < t.size()) {
        const char c = t[i];
        if ((c == '{' || c == '}') && i + 1 < t.size() && t[i + 1] == c) {
            literal(t.substr(i, 1));
            i += 2;
            continue;
        }
        if (c == '{') {
            size_t j = i + 1;
            while (j < t.size() && name_char(t[j])) ++j;
            if (j > i + 1 && j < t.size() && t[j] == '}') {
                out.push_back({true, std::string(t.substr(i + 1, j - i - 1))});
                i = j + 1;
                continue;
            }
        }
        literal(t.substr(i, 1));
        ++i;
    }
    return out;
}

class matcher {
public:
    matcher(const std::vector<segment>& segs, std::string_view text, bool prefix = false)
        : m_segs(segs), m_text(text), m_prefix(prefix) {}

    bool run(size_t seg, size_t pos) {
        if (++m_steps > 200000) return false;  // a bound for texts with many repeats of a literal
        if (seg == m_segs.size()) {
            m_end = pos;
            return m_prefix || pos == m_text.size();
        }
        const segment& s = m_segs[seg];
        if (!s.placeholder) {
            if (m_text.compare(pos, s.text.size(), s.text) != 0) return false;
            return run(seg + 1, pos + s.text.size());
        }
        if (pos >= m_text.size()) return false;
        if (seg + 1 == m_segs.size()) {
            m_args.push_back({s.text, std::string(m_text.substr(pos))});
            m_end = m_text.size();
            return true;
        }
        const segment& next = m_segs[seg + 1];
        for (size_t end = pos + 1; end <= m_text.size(); ++end) {
            if (!next.placeholder) {
                end = m_text.find(next.text, end);
                if (end == std::string_view::npos) return false;
            }
            m_args.push_back({s.text, std::string(m_text.substr(pos, end - pos))});
            if (run(seg + 1, end)) return true;
            m_args.pop_back();
        }
        return false;
    }
    message_args& args() { return m_args; }
    size_t end() const { return m_end; }

private:
    const std::vector<segment>& m_segs;
    std::string_view m_text;
    bool m_prefix = false;
    size_t m_end = 0;
    message_args m_args;
    long m_steps = 0;
};

}  // namespace

std::vector<std::string> message_placeholders(std::string_view tmpl) {
    std::vector<std::string> out;
    for (const auto& s : parse(tmpl))
        if (s.placeholder) out.push_back(s.text);
    return out;
}

std::string format_message(std::string_view tmpl, const message_args& args) {
    std::string out;
    std::vector<size_t> seams;  // where an argument starts and ends: a Chinese template spaces them from Latin
    for (const auto& s : parse(tmpl)) {
        if (!s.placeholder) {
            out += s.text;
            continue;
        }
        const std::string* v = nullptr;
        for (const auto& [k, val] : args)
            if (k == s.text) v = &val;
        seams.push_back(out.size());
        out += v ? *v : "{" + s.text + "}";
        seams.push_back(out.size());
    }
    space_cjk_seams(out, seams);
    return out;
}

std::optional<message_args> match_message(std::string_view tmpl, std::string_view text) {
    const std::vector<segment> segs = parse(tmpl);
    matcher m(segs, text);
    if (!m.run(0, 0)) return std::nullopt;
    return std::move(m.args());
}

std::optional<std::pair<message_args, size_t>> match_message_prefix(std::string_view tmpl, std::string_view text) {
    const std::vector<segment> segs = parse(tmpl);
    matcher m(segs, text, true);
    if (!m.run(0, 0)) return std::nullopt;
    return std::make_pair(std::move(m.args()), m.end());
}

}  // namespace oomdx
