#include "export_keys.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "ck/error.hpp"
#include "ck/support/json_string.hpp"
#include "ck/support/python_float.hpp"
#include "export_config.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {

std::optional<std::uint32_t> ExportKeys::count(const std::string& key) const {
    const ck::Value* v = find(key);
    if (!v) return std::nullopt;
    const auto n = v->as_uint();
    if (!n || *n > std::numeric_limits<std::uint32_t>::max())
        fail(key, "is " + v->to_display() + ", not an integer from 0 to 4294967295");
    return static_cast<std::uint32_t>(*n);
}

std::optional<float> ExportKeys::f32(const std::string& key) const {
    const ck::Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type() != ck::ValueType::f32 && v->type() != ck::ValueType::f64)
        fail(key, "is " + v->to_display() + ", not a float");
    const auto f = static_cast<float>(*v->as_double());
    if (!std::isfinite(f))
        fail(key, "is " + v->to_display() + ": config.json holds finite numbers");
    return f;
}

std::optional<std::string> ExportKeys::text(const std::string& key) const {
    const ck::Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type() != ck::ValueType::string) fail(key, "is " + v->to_display() + ", not text");
    return v->str();
}

std::optional<bool> ExportKeys::flag(const std::string& key) const {
    const ck::Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type() != ck::ValueType::boolean) fail(key, "is " + v->to_display() + ", not a bool");
    return v->raw() != 0;
}

void ExportKeys::fail(const std::string& key, const std::string& what) const {
    throw ck::key_error(what, key, header_.source);
}

ordered_json json_f32(float value, bool integral) {
    // 2^53: every whole float below it is exactly a JSON integer.
    if (integral && value == std::floor(value) && std::fabs(value) < 9007199254740992.0f)
        return value < 0 ? ordered_json(static_cast<std::int64_t>(value))
                         : ordered_json(static_cast<std::uint64_t>(value));
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text - 1, value).ptr;
    *end = '\0';
    const double shortest = std::strtod(text, nullptr);
    // A decimal rounded to a double and then to a float can land beside the float it was the
    // shortest text of (double rounding); the float's exact value never does.
    return static_cast<float>(shortest) == value ? shortest : static_cast<double>(value);
}

namespace {

// json.dumps(value, indent=2, sort_keys=True): items on their own lines, ", " never written,
// empty containers as [] and {}, floats as repr() prints them.
class PythonJsonWriter {
  public:
    explicit PythonJsonWriter(ck::support::JsonEscape style) : style_(style) {}

    void value(const ordered_json& v, std::size_t depth) {
        switch (v.type()) {
            case ordered_json::value_t::null:
                out += "null";
                return;
            case ordered_json::value_t::boolean:
                out += v.get<bool>() ? "true" : "false";
                return;
            case ordered_json::value_t::number_integer:
                out += std::to_string(v.get<std::int64_t>());
                return;
            case ordered_json::value_t::number_unsigned:
                out += std::to_string(v.get<std::uint64_t>());
                return;
            case ordered_json::value_t::number_float:
                return number(v.get<double>());
            case ordered_json::value_t::string:
                ck::support::append_json_string(out, v.get_ref<const std::string&>(), style_);
                return;
            case ordered_json::value_t::array:
                return array(v, depth);
            case ordered_json::value_t::object:
                return object(v, depth);
            default:
                throw ck::Error("a JSON file holds no binary values");
        }
    }

    std::string out;

  private:
    void number(double d) {
        // Python would write NaN or Infinity, which is not JSON.
        if (!std::isfinite(d)) throw ck::Error("a JSON number must be finite");
        out += ck::support::python_float_repr(d, false);
    }
    void newline(std::size_t depth) { out += "\n" + std::string(2 * depth, ' '); }
    void array(const ordered_json& v, std::size_t depth) {
        if (v.empty()) {
            out += "[]";
            return;
        }
        out += "[";
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ",";
            newline(depth + 1);
            value(v[i], depth + 1);
        }
        newline(depth);
        out += "]";
    }
    void object(const ordered_json& v, std::size_t depth) {
        if (v.empty()) {
            out += "{}";
            return;
        }
        // Python sorts str keys by code point, which is UTF-8's byte order.
        std::vector<std::pair<const std::string*, const ordered_json*>> items;
        for (auto it = v.begin(); it != v.end(); ++it) items.emplace_back(&it.key(), &it.value());
        std::sort(items.begin(), items.end(),
                  [](const auto& a, const auto& b) { return *a.first < *b.first; });
        out += "{";
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i) out += ",";
            newline(depth + 1);
            ck::support::append_json_string(out, *items[i].first, style_);
            out += ": ";
            value(*items[i].second, depth + 1);
        }
        newline(depth);
        out += "}";
    }

    ck::support::JsonEscape style_;
};

}  // namespace

std::string hf_json_text(const ordered_json& value, bool ensure_ascii) {
    PythonJsonWriter writer(ensure_ascii ? ck::support::JsonEscape::ascii
                                         : ck::support::JsonEscape::utf8);
    writer.value(value, 0);
    return writer.out + "\n";
}

std::string hf_json_text(const ordered_json& value) {
    return hf_json_text(value, true);
}

}  // namespace ckplugin::hf
