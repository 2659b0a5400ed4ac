// A typed fact value: null, integer (sizes are integer bytes), number, bool, string, list.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace oomdx {

enum class value_type { null, integer, number, boolean, string, list };

const char* value_type_name(value_type t);

class value {
public:
    using list_t = std::vector<value>;

    value() = default;
    value(std::nullptr_t) {}
    value(bool b) : m_v(b) {}
    value(int i) : m_v(static_cast<std::int64_t>(i)) {}
    value(long i) : m_v(static_cast<std::int64_t>(i)) {}
    value(long long i) : m_v(static_cast<std::int64_t>(i)) {}
    value(unsigned i) : m_v(static_cast<std::int64_t>(i)) {}
    value(unsigned long i) : m_v(static_cast<std::int64_t>(i)) {}
    value(unsigned long long i) : m_v(static_cast<std::int64_t>(i)) {}
    value(double d) : m_v(d) {}
    value(const char* s) : m_v(std::string(s)) {}
    value(std::string s) : m_v(std::move(s)) {}
    value(list_t l) : m_v(std::move(l)) {}

    value_type type() const { return static_cast<value_type>(m_v.index()); }
    bool is_null() const { return type() == value_type::null; }
    bool is_integer() const { return type() == value_type::integer; }
    bool is_number() const { return type() == value_type::number; }
    bool is_numeric() const { return is_integer() || is_number(); }
    bool is_bool() const { return type() == value_type::boolean; }
    bool is_string() const { return type() == value_type::string; }
    bool is_list() const { return type() == value_type::list; }

    std::int64_t as_integer() const { return std::get<std::int64_t>(m_v); }
    double as_number() const;  // integer or number, as double
    bool as_bool() const { return std::get<bool>(m_v); }
    const std::string& as_string() const { return std::get<std::string>(m_v); }
    const list_t& as_list() const { return std::get<list_t>(m_v); }

    // Debug / explanation rendering: strings quoted, lists in brackets.
    std::string to_string() const;

    friend bool operator==(const value& a, const value& b);

private:
    std::variant<std::monostate, std::int64_t, double, bool, std::string, list_t> m_v;
};

}  // namespace oomdx
