#include "engine/core/value.h"

#include <fmt/format.h>

namespace oomdx {

const char* value_type_name(value_type t) {
    switch (t) {
        case value_type::null: return "null";
        case value_type::integer: return "integer";
        case value_type::number: return "number";
        case value_type::boolean: return "bool";
        case value_type::string: return "string";
        case value_type::list: return "list";
    }
    return "?";
}

double value::as_number() const {
    if (is_integer()) return static_cast<double>(as_integer());
    return std::get<double>(m_v);
}

std::string value::to_string() const {
    switch (type()) {
        case value_type::null: return "null";
        case value_type::integer: return std::to_string(as_integer());
        case value_type::number: return fmt::format("{:g}", as_number());
        case value_type::boolean: return as_bool() ? "true" : "false";
        case value_type::string: return fmt::format("\"{}\"", as_string());
        case value_type::list: {
            std::string out = "[";
            for (size_t i = 0; i < as_list().size(); ++i) {
                if (i) out += ", ";
                out += as_list()[i].to_string();
            }
            return out + "]";
        }
    }
    return "?";
}

bool operator==(const value& a, const value& b) {
    if (a.is_numeric() && b.is_numeric()) {
        if (a.is_integer() && b.is_integer()) return a.as_integer() == b.as_integer();
        return a.as_number() == b.as_number();
    }
    return a.m_v == b.m_v;
}

}  // namespace oomdx
