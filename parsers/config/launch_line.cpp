#include "parsers/config/launch_line.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace oomdx {

std::vector<std::string> split_launch_words(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    char quote = 0;
    bool any = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
            else cur += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            any = true;
        } else if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\n') {
            ++i;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (any || !cur.empty()) out.push_back(cur);
            cur.clear();
            any = false;
        } else {
            cur += c;
        }
    }
    if (any || !cur.empty()) out.push_back(cur);
    return out;
}

std::vector<std::string> launch_overrides(const std::string& line) {
    std::vector<std::string> words = split_launch_words(line);
    size_t start = 0;
    for (size_t i = 0; i < words.size(); ++i)
        if (words[i].ends_with(".py") || words[i].ends_with(".sh") || words[i] == "-m") start = i + 1;
    if (start < words.size() && start > 0 && words[start - 1] == "-m") ++start;  // module name
    std::vector<std::string> out;
    for (size_t i = start; i < words.size(); ++i)
        if (words[i].rfind("--", 0) == 0 || (!out.empty() && words[i].rfind("-", 0) != 0)) out.push_back(words[i]);
    return out;
}

std::string launch_script(const std::string& line) {
    for (const std::string& w : split_launch_words(line))
        if (w.size() > 3 && w.ends_with(".py") && w.rfind("-", 0) != 0)
            return w.substr(w.rfind('/') == std::string::npos ? 0 : w.rfind('/') + 1);
    return "";
}

std::optional<std::int64_t> launch_world_size(const std::string& line) {
    const std::vector<std::string> w = split_launch_words(line);
    std::int64_t per_node = 0, nodes = 1;
    auto number = [](const std::string& s) -> std::int64_t {
        char* end = nullptr;
        long long v = std::strtoll(s.c_str(), &end, 10);
        return (end && *end == 0 && v > 0 && v < 1000000) ? v : 0;
    };
    for (size_t i = 0; i < w.size(); ++i) {
        std::string key = w[i], val;
        const size_t eq = key.find('=');
        if (eq != std::string::npos) {
            val = key.substr(eq + 1);
            key = key.substr(0, eq);
        } else if (i + 1 < w.size()) {
            val = w[i + 1];
        }
        if (key == "--nproc_per_node" || key == "--nproc-per-node" || key == "--num_gpus" || key == "--num-gpus")
            per_node = number(val);
        else if (key == "--nnodes" || key == "--num_nodes" || key == "--num-nodes")
            nodes = std::max<std::int64_t>(1, number(val));
        if (w[i].ends_with(".py") || w[i] == "-m") break;  // the script's own flags start here
    }
    if (per_node <= 0) return std::nullopt;
    return per_node * nodes;
}

}  // namespace oomdx
