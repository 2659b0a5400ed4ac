#include "engine/core/json_text.h"

#include <charconv>
#include <cmath>

namespace oomdx {

namespace {

class writer {
public:
    writer(std::string& out, int indent) : m_out(out), m_step(static_cast<std::size_t>(indent)) {}

    void value(const nlohmann::json& j, std::size_t depth) {
        using t = nlohmann::json::value_t;
        switch (j.type()) {
            case t::object: {
                const auto& o = j.get_ref<const nlohmann::json::object_t&>();
                if (o.empty()) {
                    m_out.append("{}", 2);
                    return;
                }
                m_out.append("{\n", 2);
                const std::size_t in = depth + m_step;
                bool first = true;
                for (const auto& [k, v] : o) {
                    if (!first) m_out.append(",\n", 2);
                    first = false;
                    m_out.append(in, ' ');
                    string(k);
                    m_out.append(": ", 2);
                    value(v, in);
                }
                m_out.push_back('\n');
                m_out.append(depth, ' ');
                m_out.push_back('}');
                return;
            }
            case t::array: {
                const auto& a = j.get_ref<const nlohmann::json::array_t&>();
                if (a.empty()) {
                    m_out.append("[]", 2);
                    return;
                }
                m_out.append("[\n", 2);
                const std::size_t in = depth + m_step;
                bool first = true;
                for (const auto& v : a) {
                    if (!first) m_out.append(",\n", 2);
                    first = false;
                    m_out.append(in, ' ');
                    value(v, in);
                }
                m_out.push_back('\n');
                m_out.append(depth, ' ');
                m_out.push_back(']');
                return;
            }
            case t::string:
                string(j.get_ref<const std::string&>());
                return;
            case t::boolean:
                if (j.get<bool>()) m_out.append("true", 4);
                else m_out.append("false", 5);
                return;
            case t::number_integer:
                number(j.get<std::int64_t>());
                return;
            case t::number_unsigned:
                number(j.get<std::uint64_t>());
                return;
            case t::number_float: {
                const double x = j.get<double>();
                if (!std::isfinite(x)) {
                    m_out.append("null", 4);
                    return;
                }
                char buf[64];
                char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, x);
                m_out.append(buf, static_cast<std::size_t>(end - buf));
                return;
            }
            case t::null:
                m_out.append("null", 4);
                return;
            default:  // binary, discarded: never in our reports; nlohmann's text
                m_out += j.dump(static_cast<int>(m_step));
                return;
        }
    }

private:
    template <class N>
    void number(N v) {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        m_out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    }
    // Printable ASCII without '"' and '\\' is written as it is; anything else by nlohmann.
    void string(const std::string& s) {
        for (unsigned char c : s) {
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                m_out += nlohmann::json(s).dump();
                return;
            }
        }
        m_out.push_back('"');
        m_out.append(s);
        m_out.push_back('"');
    }

    std::string& m_out;
    std::size_t m_step;
};

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
    if (indent < 0) return j.dump(indent);
    std::string out;
    out.reserve(4096);
    writer(out, indent).value(j, 0);
    return out;
}

}  // namespace oomdx
