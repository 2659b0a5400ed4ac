// Temporary: flavor files and Megatron scripts (replaced by model_torchtitan.cpp / model_megatron.cpp).
#include "engine/core/errors.h"
#include "parsers/config/model_sources.h"

namespace oomdx {
model_dims load_torchtitan_flavor(const std::string& path, const std::string&) {
    throw input_error::in_file(path, "torchtitan flavor files are not supported yet");
}
model_dims load_megatron_model(const std::string& path) {
    throw input_error::in_file(path, "Megatron scripts are not supported yet");
}
}  // namespace oomdx
