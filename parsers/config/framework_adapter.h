// A framework adapter, loaded from knowledge/frameworks/<name>.yaml: how the framework writes
// each canonical key (key map with value translation, multi-key translations) and how a
// canonical override is rendered back in the framework's own syntax. Adding a framework is
// adding a YAML file; see docs/inputs.md for the format.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/value.h"
#include "parsers/config/raw_entry.h"

namespace re2 {
class RE2;
}

namespace oomdx {

struct canonical_override {
    std::string key;  // canonical fact name, e.g. "activation_checkpoint.mode"
    value val;
};

// One framework key -> canonical key mapping.
struct key_mapping {
    std::string key;        // as written: "training.local_batch_size", "--micro-batch-size", "env.X"
    std::string canonical;  // canonical fact name
    std::string type;       // integer | number | bool | string | "" (keep)
    std::map<std::string, value> values;  // raw value (as text) -> canonical value; null = no fact
    std::map<std::string, value> tokens;  // token found in a string or list -> canonical value
    std::optional<value> flag;            // value of a bare CLI flag / present container
    std::optional<value> otherwise;       // for tokens: value when no token matched
    double scale = 0;                     // multiply numeric values when > 0
    // Patterns tried in order on the value as text (whole match); the first that matches gives
    // its canonical value, with {1}..{9} replaced by its groups ("torchtune.models.llama3_1.
    // lora_llama3_1_8b" -> "llama3_1_8b"). No match: `values` decide, else the value is reported.
    struct pattern {
        std::string text;
        std::shared_ptr<const re2::RE2> re;
        value out;
    };
    std::vector<pattern> match;
    // Several keys name parts of one list ("q_proj,v_proj" + the MLP's "w1,w2,w3"): a value for a
    // canonical key this config already set through a `join` mapping is appended with this separator
    // ("+" adds integers: verl's prompt and response lengths make one sequence length).
    std::string join;
    // Each word of a list or comma-separated value renamed (NeMo 1.x LoRA `attention_dense` -> Megatron Core's
    // `linear_proj`; a word may become several: `attention` -> "linear_qkv,linear_proj"); other words kept. cfg67.
    std::map<std::string, std::string> rename;
    bool render = true;                   // false: an alias written only for a job that spells it
    bool many = false;                    // nargs "+": a CLI flag takes every following word up to the next flag
    std::string note;                     // era / meaning
    std::string since;                    // YYYY-MM[-DD]: builds that read the key are this new or newer
    int line = 0;                         // line in the adapter file
};

// A rendered item: one framework key set (or removed, when val is null).
struct render_item {
    std::string key;
    value val;
    bool remove = false;
};

// Fact values (as value_key text) a conditional render reads: {"model.diffusion_family": "flux"}.
using render_context = std::map<std::string, std::string>;

class framework_adapter {
public:
    // Throws input_error naming file:line when the YAML is malformed.
    static framework_adapter load(const std::string& yaml_path);
    // Shipped adapters (knowledge/frameworks/*.yaml); unknown names fall back to torchtitan.
    static const framework_adapter& get(const std::string& framework);
    // The shipped adapter a user named (--framework); usage_error listing the known names when none has it.
    static const framework_adapter& named(const std::string& framework);
    static const std::vector<framework_adapter>& shipped();
    // Loads every adapter in a directory (resolving `extends` inside it, then the shipped set).
    static std::vector<framework_adapter> load_dir(const std::string& dir);

    const std::string& name() const { return m_name; }
    const std::string& syntax() const { return m_syntax; }  // cli | toml | registry | json | yaml
    // How overrides of a config file (YAML, JSON, TOML) are written: "" = in the file's own format; "dotlist" =
    // as `key=value` operands on the launch line (Hydra / OmegaConf configs: NeMo, Megatron-Bridge).
    const std::string& file_syntax() const { return m_file_syntax; }
    const std::string& file() const { return m_file; }
    const std::vector<std::string>& formats() const { return m_formats; }
    bool reads(const std::string& format) const;  // an input format it may be detected for (no `formats`: any)
    const std::vector<key_mapping>& keys() const { return m_keys; }
    const std::map<std::string, value>& defaults() const { return m_defaults; }
    // Settings of a file the framework ships under that name (e.g. LLaMA-Factory's
    // ds_z3_config.json), for a job that names it where oomdx cannot read it; nullptr if unknown.
    const std::map<std::string, value>* shipped_file(const std::string& file_name) const;
    // Registry syntax: the dataclass a section is built with when the function does not name one.
    const std::map<std::string, std::string>& registry_classes() const { return m_registry_classes; }
    // `launch`: the words of the launch command; one of the adapter's `launchers` in them decides.
    int detect_score(const std::vector<raw_entry>& entries, const std::string& format,
                     const std::vector<std::string>& launch = {}) const;
    // Whether the launch command's leading words are one of this framework's own launchers
    // (`swift rlhf`, `megatron sft`): a stronger sign than any key.
    bool launched_by(const std::vector<std::string>& launch) const;
    // `console_script`: a command whose first argument names the script it runs (`trl dpo` runs
    // trl/scripts/dpo.py, `swift infer` swift/cli/infer.py): the script's basename for `sub`, or "" when
    // `command` (a word's file name) is not this adapter's console command.
    std::string console_script_for(const std::string& command, const std::string& sub) const;

    // Mappings whose key matches a raw key (CLI keys compare without dashes, '-' == '_').
    std::vector<const key_mapping*> find(const std::string& raw_key) const;
    bool is_known(const std::string& raw_key) const;
    // rev43: the known key (mapped or read) nearest to a raw key that is neither, by edit distance, when at most
    // max_distance edits away ("enable_liger_kernl" -> "enable_liger_kernel"), its edits in *distance; "" when none
    // is that near.
    std::string nearest_key(const std::string& raw_key, std::size_t max_distance, std::size_t* distance = nullptr) const;
    // For CLI parsing: 0 = bare flag, 1 = takes a value, -1 = unknown key.
    int takes_value(const std::string& flag) const;

    // Canonical -> framework items (multi-key translations expanded). `spelled`: the raw keys the
    // job's own config wrote; where several keys map to one canonical key, the one the job wrote,
    // else the one in the section it writes (OpenRLHF's --model.* for SFT, --actor.* for PPO), is
    // rendered instead of the adapter's first.
    // `context`: the facts `render_when` entries read (context_keys); the first entry whose facts all
    // hold and that spells the value renders it instead of `render`.
    std::vector<render_item> translate(const std::vector<canonical_override>&,
                                       const std::vector<std::string>& spelled = {},
                                       const render_context& context = {}) const;
    std::vector<std::string> context_keys() const;
    // In the job's own syntax, a paste-able snippet.
    std::string render(const std::vector<canonical_override>&) const;
    std::vector<std::string> render_lines(const std::vector<canonical_override>&) const;
    // Same in another syntax this framework accepts (torchtitan: toml, cli, registry).
    std::vector<std::string> render_lines_as(const std::vector<canonical_override>&,
                                             const std::string& syntax,
                                             const std::vector<std::string>& spelled = {},
                                             const render_context& context = {}) const;

private:
    std::string m_name, m_syntax, m_file, m_extends, m_description, m_file_syntax;
    std::vector<std::string> m_formats;          // input formats: toml, registry, cli, shell, json, yaml
    std::vector<std::string> m_detect;           // signature keys
    bool m_detect_exact = false;                 // detect_spelling: exact ('-' and '_' differ when signing)
    std::vector<std::string> m_detect_shared;    // keys it shares with other launchers: they score, never sign
    bool m_detect_required = false;              // chosen only when a signature key is present
    std::vector<std::vector<std::string>> m_launchers;  // command words that only this framework's jobs start with
    std::string m_console_command, m_console_script;     // console_script: {command, script with {sub}}
    std::vector<key_mapping> m_keys;
    std::vector<std::string> m_known;            // read but not mapped (patterns may end in *)
    // bare_flags: flags that take no value, the `key=value` words after them being operands (mmengine's
    // `--cfg-options a.b=1 c=2`), as cli_key
    std::vector<std::string> m_bare_flags;
    std::map<std::string, value> m_defaults;     // canonical -> framework default
    std::map<std::string, std::map<std::string, value>> m_shipped_files;  // file name -> canonical settings
    // canonical key -> canonical value text ("*" = any) -> items
    std::map<std::string, std::map<std::string, std::vector<render_item>>> m_render;
    // render_when: renders that apply while other facts have the given values (rev26)
    struct conditional_render {
        std::map<std::string, std::string> when;  // fact -> value text
        std::map<std::string, std::map<std::string, std::vector<render_item>>> render;
        // rev27: a line the rendered value needs beside the keys (kohya: LoRA runs in another script), as a
        // `note.` item rendered as a comment
        std::string note;
    };
    std::vector<conditional_render> m_render_when;
    const std::vector<render_item>* render_for(const std::string& canonical, const value& v,
                                               const render_context& context, const std::string** note = nullptr) const;
    std::map<std::string, std::string> m_registry_classes;  // section -> dataclass (registry syntax)
    void inherit(const framework_adapter& base);
    const key_mapping* spelling_for(const std::string& canonical, const std::vector<std::string>& spelled) const;
    static value typed_raw(const std::string& raw);
    friend struct adapter_loader;
};

// Canonical value as text for lookups ("true", "3", "full").
std::string value_key(const value& v);
// Normalized CLI key: no leading dashes, '-' -> '_'.
std::string cli_key(const std::string& k);

}  // namespace oomdx
