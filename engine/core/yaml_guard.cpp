#include "engine/core/yaml_guard.h"

#include <cstddef>
#include <vector>

#include "engine/core/errors.h"

namespace oomdx {

namespace {

// Throws when the tree parsed from `text_bytes` bytes has more nodes than that.
void refuse_alias_bomb(const YAML::Node& root, std::size_t text_bytes, const std::string& file) {
    // Without aliases every node takes at least one byte of the text (a key and its value two).
    std::size_t budget = text_bytes + 16;
    const auto refuse = [&](const YAML::Node& at) {
        throw input_error::at_line(file, at.Mark().line + 1,
                                   "YAML aliases expand to more nodes than the file has bytes (" +
                                       std::to_string(text_bytes) + "): an alias bomb, refused");
    };
    std::vector<YAML::Node> todo{root};
    while (!todo.empty()) {
        const YAML::Node n = todo.back();
        todo.pop_back();
        if (budget == 0) refuse(n);
        --budget;
        if (n.IsMap()) {
            for (auto it = n.begin(); it != n.end(); ++it) {
                todo.push_back(it->first);
                todo.push_back(it->second);
            }
        } else if (n.IsSequence()) {
            for (auto it = n.begin(); it != n.end(); ++it) todo.push_back(*it);
        }
        // Every node waiting will cost one: more waiting than the budget is already too many.
        if (todo.size() > budget) refuse(n);
    }
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& file) {
    YAML::Node root = YAML::Load(text);
    // Only a document with an alias can name more nodes than it spells out.
    if (text.find('*') != std::string::npos) refuse_alias_bomb(root, text.size(), file);
    return root;
}

}  // namespace oomdx
