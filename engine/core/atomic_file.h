// Writes a whole file so that a reader never sees half of it: the text goes to a temporary
// file in the same directory, which is renamed over the target (rename is atomic on one file
// system). Used for per-rank summaries written concurrently into a shared folder.
#pragma once

#include <string>
#include <string_view>

namespace oomdx {

// Throws input_error naming the path when the directory cannot be written.
void write_file_atomic(const std::string& path, std::string_view text);

}  // namespace oomdx
