// Where knowledge/ and rules/ live: $OOMDX_DATA_DIR, the source tree, or <prefix>/share/oomdx.
#pragma once

#include <string>

namespace oomdx {

std::string data_dir();
// data_dir() joined with a relative path such as "knowledge/devices.yaml".
std::string data_path(const std::string& rel);

}  // namespace oomdx
