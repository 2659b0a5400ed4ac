// A read of a file mapping faults with SIGBUS when the file shrank after it was mapped (a log
// truncated by logrotate's copytruncate while oomdx reads it). Guarded mappings turn that fault
// into the usual one-line error naming the file, and exit code 2, instead of a crash.
#pragma once

#include <cstddef>
#include <string>

namespace oomdx {

// Registers [begin, begin + size) of `path`; installs the SIGBUS handler on first use. At most
// 16 mappings are guarded at once (more are simply not guarded).
void guard_mapping(const void* begin, size_t size, const std::string& path);
void unguard_mapping(const void* begin);

}  // namespace oomdx
