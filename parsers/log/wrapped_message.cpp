#include "parsers/log/wrapped_message.h"
#include "parsers/log/line_splitter.h"

#include <algorithm>
#include <vector>

namespace oomdx::log_detail {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Columns of a line: code points (a terminal cuts at its width in characters, not bytes).
size_t columns(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}


// Byte units a size is printed in, and the part of one a wrap can leave at a line's end.
constexpr std::string_view k_units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "B"};

// `head` ends in a figure cut before its end: a number (`16.9`, `79.32`), a number and part of a unit
// (`20.75 G`, `20.75 Gi`), or a word that is followed by a figure (`only`, `of`, `allocate`) with no
// sentence end. The kind of cut tells what the next line must start with: the rest of the number or unit,
// or a whole figure.
enum class cut { none, in_number, in_unit, before_figure };

cut figure_cut(std::string_view head) {
    const std::string_view t = trim_line_end(head);
    if (t.empty()) return cut::none;
    const bool spaced = t.size() < head.size();
    if (digit(t.back())) return spaced ? cut::before_figure : cut::in_number;
    // a unit's first letters right after a number ("20.75 G", "512Mi")
    size_t i = t.size();
    while (i > 0 && (t[i - 1] == 'K' || t[i - 1] == 'M' || t[i - 1] == 'G' || t[i - 1] == 'T' || t[i - 1] == 'i' ||
                     t[i - 1] == 'b' || t[i - 1] == 'y' || t[i - 1] == 't' || t[i - 1] == 'e'))
        --i;
    const std::string_view part = t.substr(i);
    size_t j = i;
    if (j > 0 && t[j - 1] == ' ') --j;
    if (!spaced && !part.empty() && part.size() <= 3 && j > 0 && digit(t[j - 1]))
        for (auto u : k_units)
            if (u.size() > part.size() && u.substr(0, part.size()) == part) return cut::in_unit;
    // a word that a figure follows in an allocator's message, the line cut before the figure
    for (std::string_view w : {"only", "of", "allocate", "is", "has", "than", "capacity", "approximately"})
        if (t.size() >= w.size() && t.substr(t.size() - w.size()) == w &&
            (t.size() == w.size() || t[t.size() - w.size() - 1] == ' '))
            return cut::before_figure;
    return cut::none;
}

// The next line starts with a size: a number and a byte unit (`4 GiB`, `416.625000MB.`).
bool starts_with_size(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && (digit(s[i]) || s[i] == '.' || s[i] == ',')) ++i;
    if (i == 0 || !digit(s[0])) return false;
    if (i < s.size() && s[i] == ' ') ++i;
    for (auto u : k_units)
        if (s.substr(i, u.size()) == u) return true;
    return false;
}

// The next line starts with a byte unit (`GiB of which`).
bool starts_with_unit(std::string_view s) {
    for (auto u : k_units)
        if (s.substr(0, u.size()) == u && (s.size() == u.size() || !((s[u.size()] | 0x20) >= 'a' && (s[u.size()] | 0x20) <= 'z')))
            return true;
    return false;
}

// The next line starts with the rest of a unit cut at `head`'s end (`iB`, `B`, `ytes`).
bool starts_with_unit_rest(std::string_view head, std::string_view s) {
    const std::string_view t = trim_line_end(head);
    size_t i = t.size();
    while (i > 0 && !blank(t[i - 1]) && !digit(t[i - 1])) --i;
    const std::string_view part = t.substr(i);
    for (auto u : k_units)
        if (u.size() > part.size() && u.substr(0, part.size()) == part) {
            const std::string_view rest = u.substr(part.size());
            if (s.substr(0, rest.size()) == rest &&
                (s.size() == rest.size() || blank(s[rest.size()]) || s[rest.size()] == '.' ||
                 s[rest.size()] == ',' || s[rest.size()] == ';' || s[rest.size()] == ')'))
                return true;
        }
    return false;
}

}  // namespace

bool keep_wrapped_line(std::string& after, std::string_view line, size_t& taken) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim_line_end(line).empty() || taken >= k_wrap_lines || after.size() + line.size() + 1 > k_wrap_bytes)
        return false;
    if (taken++) after += '\n';
    after += line;
    return taken < k_wrap_lines;
}

// A full line that ends a sentence and a next line that starts a word of its own ("... by PyTorch)" then
// "[rank1]: torch.OutOfMemoryError"): a terminal cut there would have glued them; another message starts.
bool starts_another(std::string_view prev, std::string_view next) {
    if (prev.empty() || next.empty() || blank(next[0])) return false;
    const char e = prev.back(), n = next[0];
    return (e == '.' || e == ')' || e == ':') && ((n >= 'A' && n <= 'Z') || n == '[' || n == '(');
}

std::string join_wrapped(std::string_view head, std::string_view after) {
    std::vector<std::string_view> lines;
    for (size_t at = 0; !after.empty();) {
        const size_t nl = after.find('\n', at);
        lines.push_back(after.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at));
        if (nl == std::string_view::npos) break;
        at = nl + 1;
    }
    // The terminal's width: the widest of the run of lines about as wide as the failure line (a line
    // one column short lost the blank the cut fell on: the copy trimmed it).
    const size_t hw = columns(head);
    size_t width = 0;
    if (hw >= k_min_wrap_width && !lines.empty()) {
        for (auto l : lines) {
            const size_t c = columns(l);
            if (c + 1 < hw || c > hw + 1) break;
            width = std::max({width, hw, c});
        }
    }
    std::string out(head);
    std::string_view prev = head;
    for (std::string_view l : lines) {
        const size_t pw = columns(prev);
        if (width && (pw == width || pw + 1 == width)) {  // the terminal went on on the next line
            if (pw == width && starts_another(prev, l)) break;
            if (pw + 1 == width && !l.empty() && !blank(l[0])) out += ' ';
            out += l;
            prev = l;
            continue;
        }
        const cut c = figure_cut(prev);
        size_t lead = 0;
        while (lead < l.size() && blank(l[lead])) ++lead;
        const std::string_view body = l.substr(lead);
        std::string glue;  // what goes between the two lines
        if (c == cut::in_number && lead == 0 && starts_with_size(body)) glue = "";     // `16.9` + `4 GiB`
        else if (c == cut::in_number && starts_with_unit(body)) glue = " ";          // `79.32` + `GiB of which`
        else if (c == cut::in_unit && lead == 0 && starts_with_unit_rest(prev, body)) glue = "";  // `20.75 G` + `iB`
        else if (c == cut::before_figure && starts_with_size(body)) glue = " ";      // `is only` + `416.625000MB.`
        else if (c == cut::before_figure && digit(trim_line_end(prev).back()) && starts_with_unit(body)) glue = " ";
        else break;
        out = std::string(trim_line_end(out)) + glue + std::string(body);
        prev = l;
    }
    return out;
}

}  // namespace oomdx::log_detail
