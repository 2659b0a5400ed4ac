// Reading shipped and user YAML files with located errors.
#pragma once

#include "engine/core/yaml_node.h"

#include <string>
#include <system_error>
#include <vector>

namespace oomdx {

// Parses a YAML file read with read_text_file (size limit, NUL bytes, UTF-8); a syntax error
// becomes input_error "<file>:<line>: <message>".
YAML::Node load_yaml_file(const std::string& file);
// The message of a YAML exception, worded for people (yaml-cpp says "bad file" for deep nesting).
std::string yaml_error_text(const YAML::Exception& e);

// The *.yaml files directly in dir, sorted; ec is set when the directory cannot be read.
std::vector<std::string> yaml_files_in(const std::string& dir, std::error_code& ec);

}  // namespace oomdx
