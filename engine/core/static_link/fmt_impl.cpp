// fmt 9's compiled part, for the static link (CMakeLists.txt, OOMDX_STATIC): the package ships
// it as a shared library only. Built with the same flags as every user of fmt (FMT_SHARED),
// it defines what format.h declares and does not define inline.
#include <fmt/format.h>
#include <fmt/format-inl.h>

namespace fmt::v9::detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<wchar_t>(locale_ref) -> wchar_t;
template void vformat_to<char>(buffer<char>&, basic_string_view<char>,
                               basic_format_args<buffer_context<char>>, locale_ref);
}  // namespace fmt::v9::detail
