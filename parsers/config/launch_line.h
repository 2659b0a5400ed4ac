// A launch command printed in a training log (`torchrun --nproc_per_node 8 train.py --a.b=1`):
// the words after the training script (config overrides) and the world size of the launcher.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomdx {

// Words of a shell command line: quotes kept together, backslash-newlines joined.
std::vector<std::string> split_launch_words(const std::string& line);
// The words after the training script or `-m module`: `torchrun ... train.py --a.b=1` -> ["--a.b=1"].
std::vector<std::string> launch_overrides(const std::string& line);
// The basename of the Python script a launch line runs (`accelerate launch ... hv_train.py --a 1` -> "hv_train.py"),
// "" when it runs none (rev28: read as job.entry_script, which an adapter may key renders on).
std::string launch_script(const std::string& line);
// torchrun --nproc_per_node N [--nnodes M], deepspeed --num_gpus N; nullopt when not stated.
std::optional<std::int64_t> launch_world_size(const std::string& line);

}  // namespace oomdx
