// Paths the tests read (the test tree, the source tree, the shared corpus, the built oomdx). They are defined in one
// translation unit (tests/test_paths.cpp), so that no other test file's compile line holds a path and ccache shares
// the objects between checkouts at different paths. Force-included into every test file (tests/CMakeLists.txt).
#pragma once

namespace oomdx::test_paths {
const char* test_dir();
const char* source_dir();
const char* shared_dir();
const char* binary();
}  // namespace oomdx::test_paths

#define OOMDX_TEST_DIR (::oomdx::test_paths::test_dir())
#define OOMDX_SOURCE_DIR (::oomdx::test_paths::source_dir())
#define OOMDX_SHARED_DIR (::oomdx::test_paths::shared_dir())
#define OOMDX_BINARY (::oomdx::test_paths::binary())
