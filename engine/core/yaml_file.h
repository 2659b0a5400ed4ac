// Reading shipped and user YAML files with located errors.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <system_error>
#include <vector>

namespace oomdx {

// Parses a YAML file; a syntax error becomes input_error "<file>:<line>: <message>", and a file
// above the limit text_file_bytes is refused before reading.
YAML::Node load_yaml_file(const std::string& file);
// The message of a YAML exception, worded for people (yaml-cpp says "bad file" for deep nesting).
std::string yaml_error_text(const YAML::Exception& e);
// Throws input_error when the file is larger than the limit text_file_bytes.
void check_text_file_size(const std::string& file);
// The *.yaml files directly in dir, sorted; ec is set when the directory cannot be read.
std::vector<std::string> yaml_files_in(const std::string& dir, std::error_code& ec);

}  // namespace oomdx
