// toml++'s compiled part, for the static link (CMakeLists.txt, OOMDX_STATIC): the package ships
// it as a shared library only. TOML_IMPLEMENTATION in one file is toml++'s documented way to
// build it into a program; the flags are those of every user (TOML_HEADER_ONLY=0).
#define TOML_IMPLEMENTATION
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>  // Debian ships the header under this name
#endif
