// Readers of model dimensions from files: HF config.json, torchtitan flavor files
// (`"8B": TransformerModelArgs(dim=4096, ...)`), Megatron argument scripts.
#pragma once

#include <string>

#include "parsers/config/model_dims.h"

namespace oomdx {

model_dims load_hf_config(const std::string& path);
// `flavor` empty: the file must define exactly one flavor.
model_dims load_torchtitan_flavor(const std::string& path, const std::string& flavor);
model_dims load_megatron_model(const std::string& path);

}  // namespace oomdx
