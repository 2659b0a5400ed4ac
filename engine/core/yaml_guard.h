// Parsing YAML text that may be hostile. yaml-cpp shares the node an alias names, so a few lines
// of nested aliases (an "alias bomb") name billions of nodes, and any walk over the tree would
// never end. A document whose tree has more nodes than its text has bytes is refused.
#pragma once

#include "engine/core/yaml_node.h"

#include <string>

namespace oomdx {

// YAML::Load(text), then the node count check: throws what YAML::Load throws, or input_error
// "<file>:<line>: ..." (the line of the node where the count ran out).
YAML::Node load_yaml_text(const std::string& text, const std::string& file);

}  // namespace oomdx
