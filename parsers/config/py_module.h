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

// True when the file's top level holds a `NAME = ...` assignment; with `mmengine_only`, one of
// mmengine's own (`NAME = dict(...)`, `_base_ = ...`), so that a torchtitan registry with several
// functions and a constant (`STEPS = 1000`) still asks for its function.
bool looks_like_py_module(const py_source& src, bool mmengine_only = false);
// Reads the module's top-level assignments. Throws input_error (file:line) only where the
// tokenizer does (unterminated brackets or strings, nesting past config_depth).
py_module read_py_module(const py_source& src);

}  // namespace oomdx
