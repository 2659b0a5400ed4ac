// The one test translation unit built with the checkout's paths (tests/test_paths.h says why).
#include "tests/test_paths.h"

namespace oomdx::test_paths {
const char* test_dir() { return OOMDX_TEST_DIR_VALUE; }
const char* source_dir() { return OOMDX_SOURCE_DIR_VALUE; }
const char* shared_dir() { return OOMDX_SHARED_DIR_VALUE; }
const char* binary() { return OOMDX_BINARY_VALUE; }
}  // namespace oomdx::test_paths
