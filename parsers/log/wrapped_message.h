// A failure message hard-wrapped over several lines (a terminal capture cut at its width, a poster's
// paste wrapped by an editor or a quote): the lines after the failure line joined back to it where the
// join is unambiguous. Two cases only:
//  * a cut at the terminal's width: the failure line and the next are both as wide as the terminal (at
//    least k_min_wrap_width columns); each line of that width goes on on the next line, exactly (the
//    terminal cut mid-token or kept the blank at the start of the next line), up to a shorter line;
//  * a cut inside a figure: the line ends in a number or a part of its unit (`16.9`, `20.75 G`, `is
//    only`) and the next line starts with the rest (`4 GiB`, `iB is`, an indented `416.625000MB.`).
// Anything else (a line that ends a sentence, a next line that starts a new message) stops the join.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oomdx::log_detail {

constexpr size_t k_wrap_lines = 12;         // lines after a failure line kept for the join
constexpr size_t k_wrap_bytes = 4096;       // bytes of them kept
constexpr size_t k_min_wrap_width = 60;     // narrower terminals are rare; short lines match by chance

// `head`: the failure line; `after`: the lines after it, '\n'-separated (no '\r'). The joined message,
// or `head` alone when nothing continues it.
std::string join_wrapped(std::string_view head, std::string_view after);

// Appends one line after a failure line to `after`; false when no more are wanted (a blank line ends a
// message, and the caps).
bool keep_wrapped_line(std::string& after, std::string_view line, size_t& taken);

}  // namespace oomdx::log_detail
