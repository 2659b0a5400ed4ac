// Hydra's command-line words: the primary config and the override prefixes.
#include "parsers/config/hydra_args.h"

#include <filesystem>

namespace oomdx {

hydra_config_ref hydra_config_of(const std::vector<shell_word>& words, bool& found) {
    hydra_config_ref ref;
    found = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        auto take = [&](const char* long_flag, const char* short_flag, std::string& out) {
            const std::string lf = long_flag, sf = short_flag;
            if (w.rfind(lf + "=", 0) == 0) out = w.substr(lf.size() + 1);
            else if ((w == lf || w == sf) && i + 1 < words.size() && words[i + 1].literal) out = words[++i].text;
            else return false;
            if (!ref.excerpt.empty()) ref.excerpt += " ";
            ref.excerpt += lf + "=" + out;
            return true;
        };
        if (!words[i].literal) continue;
        if (take("--config-path", "-cp", ref.dir)) continue;
        const std::int64_t line = words[i].line;
        if (take("--config-name", "-cn", ref.name)) {
            ref.line = line;
            found = !ref.name.empty();
        }
    }
    if (found && std::filesystem::path(ref.name).extension().empty()) ref.name += ".yaml";
    return ref;
}

std::vector<std::string> hydra_config_candidates(const hydra_config_ref& ref, const std::string& script) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    const fs::path dir = ref.dir.rfind("file://", 0) == 0 ? fs::path(ref.dir.substr(7)) : fs::path(ref.dir);
    if (!script.empty() && !dir.is_absolute()) out.push_back((fs::path(script).parent_path() / dir / ref.name).lexically_normal().string());
    out.push_back((dir / ref.name).lexically_normal().string());
    return out;
}

bool hydra_override(const std::string& word, std::string& key, std::string& val, bool& removes) {
    removes = false;
    std::size_t at = 0;
    if (word.rfind("++", 0) == 0) at = 2;
    else if (!word.empty() && (word[0] == '+' || word[0] == '~')) {
        removes = word[0] == '~';
        at = 1;
    }
    const auto eq = word.find('=', at);
    if (eq == std::string::npos && !removes) return false;
    key = word.substr(at, eq == std::string::npos ? std::string::npos : eq - at);
    val = eq == std::string::npos ? "" : word.substr(eq + 1);
    return !key.empty();
}

}  // namespace oomdx
