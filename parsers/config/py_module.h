// An mmengine-style Python config (XTuner, MMDetection, MMSegmentation) read as data: module-level
// `NAME = value` assignments, `dict(key=value)` calls as mappings, names bound earlier resolved,
// simple arithmetic of numbers folded. Nothing is executed; what cannot be read is listed.
#pragma once

#include <string>
#include <vector>

#include "parsers/config/py_expr.h"
#include "parsers/config/raw_entry.h"

namespace oomdx {

struct py_module {
    std::vector<raw_entry> entries;    // dotted keys: batch_size, model.lora.r, optim_wrapper.optimizer.type
    std::vector<std::string> skipped;  // "from mmengine.config import read_base (file:3)": statements not read
};

// True when the file's top level holds at least one `NAME = ...` assignment and no function is
// a candidate config function (a torchtitan registry has `def` bodies instead).
bool looks_like_py_module(const py_source& src);
// Reads the module's top-level assignments. Throws input_error (file:line) only where the
// tokenizer does (unterminated brackets or strings, nesting past config_depth).
py_module read_py_module(const py_source& src);

}  // namespace oomdx
