#include "engine/core/text_file.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/limits.h"
#include "engine/core/utf8.h"

namespace oomdx {

std::int64_t line_of_offset(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::int64_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string read_text_file(const std::string& path, const char* kind, bool allow_empty) {
    const auto max_bytes = static_cast<std::size_t>(current_limits().text_file_bytes);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error::in_file(path, "cannot open file");
    std::string data;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        data.append(buf, static_cast<std::size_t>(in.gcount()));
        if (data.size() > max_bytes)
            throw input_error::in_file(path, fmt::format("file larger than {} (limit text_file_bytes)",
                                                         format_bytes(static_cast<std::int64_t>(max_bytes))));
    }
    if (const auto nul = data.find('\0'); nul != std::string::npos)
        throw input_error::at_line(path, line_of_offset(data, nul),
                                   fmt::format("binary data (NUL byte at byte {}), expected {}", nul, kind));
    if (!allow_empty && data.find_first_not_of(" \t\r\n") == std::string::npos)
        throw input_error::in_file(path, fmt::format("empty file, expected {}", kind));
    // YAML and TOML readers build a node per item (about 500 bytes each): bound their number.
    const std::int64_t max_items = current_limits().text_items;
    std::int64_t items = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
        if ((data[i] == '\n' || data[i] == ',') && ++items > max_items)
            throw input_error::at_line(path, line_of_offset(data, i),
                                       fmt::format("more than {} lines and list items (limit text_items)", max_items));
    }
    if (const auto bad = first_invalid_utf8(data); bad != std::string::npos)
        throw input_error::at_line(path, line_of_offset(data, bad),
                                   fmt::format("invalid UTF-8 at byte {}, expected {} in UTF-8", bad, kind));
    return data;
}

}  // namespace oomdx
