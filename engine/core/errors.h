// Errors that end a command with exit code 2: bad input files and bad usage.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace oomdx {

enum exit_code : int { exit_ok = 0, exit_does_not_fit = 1, exit_input_error = 2 };

// One line: "<file>:<line>: <message>" or "<file>: byte <offset>: <message>".
class input_error : public std::runtime_error {
public:
    explicit input_error(const std::string& msg) : std::runtime_error(msg) {}
    static input_error at_line(const std::string& file, std::int64_t line, const std::string& msg);
    static input_error at_offset(const std::string& file, std::int64_t offset,
                                 const std::string& msg);
    static input_error in_file(const std::string& file, const std::string& msg);
};

class usage_error : public std::runtime_error {
public:
    explicit usage_error(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace oomdx
