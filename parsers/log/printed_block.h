// A block a job prints over several lines after a header line: HF transformers' model config,
// "Model config LlamaConfig {" then the lines of to_json_string (indent 2) up to the "}" at
// column 0. Read line by line, capped: a block that does not close (truncated log, hostile
// input) is dropped with the reason, never kept in part.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oomdx::log_detail {

constexpr size_t k_block_cap = 64 * 1024;   // bytes of a block kept
constexpr std::int64_t k_block_foreign = 64;  // other lines tolerated inside (interleaved ranks)

class printed_block_reader {
public:
    enum class state { idle, open, closed, dropped };
    // `header`: the header line, `brace`: where its opening "{" is. A launcher prefix before
    // the line ("[rank0]: ", "[default0]:") is expected on the lines that follow.
    void start(std::string_view header, size_t brace);
    // The next line of the log. True when the line was the block's (false: another process's
    // line between its lines, or the block is no longer open).
    bool feed(std::string_view line);
    // The log (or the readable part) ended with the block open.
    void end(std::string_view why);
    state status() const { return m_state; }
    bool open() const { return m_state == state::open; }
    const std::string& text() const { return m_text; }  // the JSON text once closed
    std::int64_t lines() const { return m_lines; }       // lines read after the header
    const std::string& reason() const { return m_reason; }  // why it was dropped

private:
    void drop(std::string why);
    state m_state = state::idle;
    std::string m_text, m_prefix, m_reason;
    std::int64_t m_lines = 0, m_foreign = 0;
};

}  // namespace oomdx::log_detail
