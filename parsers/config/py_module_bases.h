// mmengine `_base_` inheritance for a config module read as data: the files `_base_` names (a string or a
// list, paths relative to the naming file) are read first, in order, and the module's own assignments are
// merged over them as mmengine's Config does (a dict merges key by key, `_delete_=True` replaces it, any
// other value replaces). Each entry keeps the file it was written in.
#pragma once

#include <string>

#include "parsers/config/py_module.h"

namespace oomdx {

// Bounds on what a chain of bases may hold (a hostile or runaway chain stops with one line).
inline constexpr int k_max_base_depth = 16;   // files from the config to its deepest base
inline constexpr int k_max_base_files = 64;   // files read in all (a diamond is read once per path)

// Reads `src` and, recursively, its bases. Throws input_error (file:line, key `_base_`) for a base that is
// not found, names an installed package's config (`mmdet::...`) or a file that is not Python, a cycle, a chain
// deeper than k_max_base_depth, more than k_max_base_files files, a `_base_` that is not a string or list of
// strings, and two bases that set the same top-level key (mmengine refuses it too).
py_module read_py_module_with_bases(const py_source& src);

}  // namespace oomdx
