#include "config_json.hpp"

#include "ck/support/json_string.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"

namespace ckplugin::bump {
using namespace ck;

std::string python_json_string(std::string_view s) {
    return support::json_string(s, support::JsonEscape::ascii);
}

std::string render_config_json(const Config& c) {
    std::ostringstream out;
    out << "{\n"
        << "  \"architectures\": [\n"
        << "    \"LlamaForCausalLM\"\n"
        << "  ],\n"
        << "  \"model_type\": " << python_json_string(c.model_type) << ",\n"
        << "  \"num_hidden_layers\": " << c.num_hidden_layers << ",\n"
        << "  \"hidden_size\": " << c.hidden_size << ",\n"
        << "  \"intermediate_size\": " << c.intermediate_size << ",\n"
        << "  \"num_attention_heads\": " << c.num_attention_heads << ",\n"
        << "  \"num_key_value_heads\": " << c.num_key_value_heads << ",\n"
        << "  \"vocab_size\": " << c.vocab_size << ",\n"
        << "  \"max_position_embeddings\": " << c.max_position_embeddings << ",\n"
        << "  \"rms_norm_eps\": "
        << python_float_repr(c.rms_norm_eps.value, c.rms_norm_eps.single_precision) << ",\n"
        << "  \"rope_theta\": "
        << python_float_repr(c.rope_theta.value, c.rope_theta.single_precision);
    if (c.tie_word_embeddings)
        out << ",\n  \"tie_word_embeddings\": " << (*c.tie_word_embeddings ? "true" : "false");
    out << "\n}\n";
    return out.str();
}

Config read_config_json(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("cannot open config.json: " + std::string(std::strerror(errno)), path.string());
    // ordered_json: inspect lists the keys in the file's order.
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) throw Error("not a JSON object", path.string());
    auto integer = [&](const char* key) -> std::uint64_t {
        auto it = doc.find(key);
        if (it == doc.end() || !it->is_number_unsigned())
            throw key_error(
                it == doc.end() ? "missing" : "expected a non-negative integer, got " + it->dump(),
                key, path.string());
        return it->get<std::uint64_t>();
    };
    auto number = [&](const char* key) -> llama::FloatParam {
        auto it = doc.find(key);
        if (it == doc.end() || !it->is_number())
            throw key_error(it == doc.end() ? "missing" : "expected a number, got " + it->dump(),
                            key, path.string());
        return {it->get<double>(), false};
    };
    Config c;
    auto type = doc.find("model_type");
    if (type != doc.end() && type->is_string()) c.model_type = type->get<std::string>();
    c.num_hidden_layers = integer("num_hidden_layers");
    c.hidden_size = integer("hidden_size");
    c.intermediate_size = integer("intermediate_size");
    c.num_attention_heads = integer("num_attention_heads");
    c.num_key_value_heads = integer("num_key_value_heads");
    c.vocab_size = integer("vocab_size");
    c.max_position_embeddings = integer("max_position_embeddings");
    c.rms_norm_eps = number("rms_norm_eps");
    c.rope_theta = number("rope_theta");
    // Every key, for `inspect`: scalars keep their JSON type, string arrays stay arrays.
    for (auto& [key, value] : doc.items()) {
        std::string name = "config." + key;
        if (value.is_string())
            c.entries.set(name, Value::of_string(value.get<std::string>()));
        else if (value.is_boolean())
            c.entries.set(name, Value::of_bool(value.get<bool>()));
        else if (value.is_number_unsigned())
            c.entries.set(name, Value::of_u64(value.get<std::uint64_t>()));
        else if (value.is_number_integer())
            c.entries.set(name, Value::scalar(ValueType::i64, static_cast<std::uint64_t>(
                                                                  value.get<std::int64_t>())));
        else if (value.is_number_float())
            c.entries.set(name, Value::of_f64(value.get<double>()));
        else if (value.is_array() &&
                 std::all_of(value.begin(), value.end(),
                             [](const nlohmann::ordered_json& v) { return v.is_string(); })) {
            std::vector<std::string> items;
            for (const auto& v : value) items.push_back(v.get<std::string>());
            c.entries.set(
                name, Value::of_array(ArrayValue::of_strings(std::span<const std::string>(items))));
        } else
            c.entries.set(name, Value::of_string(value.dump()));
    }
    return c;
}

}  // namespace ckplugin::bump
