#include "engine/core/errors.h"

#include <fmt/format.h>

namespace oomdx {

input_error input_error::at_line(const std::string& file, std::int64_t line,
                                 const std::string& msg) {
    return input_error(fmt::format("{}:{}: {}", file, line, msg));
}

input_error input_error::at_offset(const std::string& file, std::int64_t offset,
                                   const std::string& msg) {
    return input_error(fmt::format("{}: byte {}: {}", file, offset, msg));
}

input_error input_error::in_file(const std::string& file, const std::string& msg) {
    return input_error(fmt::format("{}: {}", file, msg));
}

}  // namespace oomdx
