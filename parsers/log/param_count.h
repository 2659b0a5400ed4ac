// A parameter count as loggers print it: every digit with thousands separators ("6,738,415,616": HF Trainer, PEFT,
// Keras) or rounded with a K/M/B/T suffix ("217 M", "20430.40M": Lightning's summary, user scripts).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parsers/log/log_analysis.h"

namespace oomdx {

// The count and how it was printed, or nothing for zero, a count past 100 T or anything else.
std::optional<printed_count> read_param_count(std::string_view t);

// The count in billions as text with four significant digits ("6.738"): the setting's value.
std::string count_in_billions(const printed_count& c);

}  // namespace oomdx
