// Readers of model dimensions from files: HF config.json, torchtitan flavor files
// (`"8B": TransformerModelArgs(dim=4096, ...)`), Megatron argument scripts.
#pragma once

#include <string>

#include "parsers/config/model_dims.h"

namespace oomdx {

model_dims load_hf_config(const std::string& path);
// The same from the JSON text itself (a config the job printed in its log); `where` names it in
// errors and provenance.
model_dims hf_config_from_text(const std::string& text, const std::string& where);
// `flavor` empty: the file must define exactly one flavor.
model_dims load_torchtitan_flavor(const std::string& path, const std::string& flavor);
model_dims load_megatron_model(const std::string& path);

}  // namespace oomdx
