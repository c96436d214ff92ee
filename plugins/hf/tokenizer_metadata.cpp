#include "tokenizer_metadata.hpp"

#include <bit>
#include <limits>

#include "ck/error.hpp"
#include "special_vocab.hpp"

namespace ckplugin::hf {
namespace {

constexpr std::string_view gguf_model_key = "tokenizer.ggml.model";
constexpr std::string_view gguf_pre_key = "tokenizer.ggml.pre";
constexpr std::string_view gguf_tokens_key = "tokenizer.ggml.tokens";
constexpr std::string_view gguf_scores_key = "tokenizer.ggml.scores";
constexpr std::string_view gguf_types_key = "tokenizer.ggml.token_type";
constexpr std::string_view gguf_merges_key = "tokenizer.ggml.merges";
constexpr std::string_view gguf_space_prefix_key = "tokenizer.ggml.add_space_prefix";
constexpr std::string_view gguf_template_key = "tokenizer.chat_template";

const ck::Value& required_tokenizer_key(const ck::Metadata& metadata, std::string_view key) {
    const ck::Value* value = metadata.find(key);
    if (!value) throw ck::key_error("required key is missing", key);
    return *value;
}

const std::string& tokenizer_string(const ck::Value& value, std::string_view key) {
    if (value.type() != ck::ValueType::string)
        throw ck::key_error("expected a string, got " + value.to_display(), key);
    return value.str();
}

bool tokenizer_bool(const ck::Value& value, std::string_view key) {
    if (value.type() != ck::ValueType::boolean)
        throw ck::key_error("expected a bool, got " + value.to_display(), key);
    return value.raw() != 0;
}

// The array at `key`, of `element` values and (when given) `length` of them.
const ck::ArrayValue& tokenizer_array(const ck::Value& value, ck::ValueType element,
                                      std::string_view key,
                                      std::optional<std::size_t> length = std::nullopt) {
    if (value.type() != ck::ValueType::array || value.array().element_type() != element)
        throw ck::key_error("expected an array of " + std::string(ck::value_type_name(element)) +
                                ", got " + value.to_display(),
                            key);
    if (length && value.array().size() != *length)
        throw ck::key_error("has " + std::to_string(value.array().size()) + " entries, but " +
                                std::string(gguf_tokens_key) + " has " + std::to_string(*length),
                            key);
    return value.array();
}

std::vector<std::string_view> array_strings(const ck::ArrayValue& array) {
    std::vector<std::string_view> strings;
    strings.reserve(array.size());
    array.for_each_string([&strings](std::string_view s) {
        strings.push_back(s);
        return true;
    });
    return strings;
}

std::vector<std::int32_t> token_types_of(const ck::Value& value, std::size_t n) {
    const ck::ArrayValue& array = tokenizer_array(value, ck::ValueType::i32, gguf_types_key, n);
    std::vector<std::int32_t> types(n);
    for (std::size_t i = 0; i < n; ++i) {
        types[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(array.raw_at(i)));
        if (types[i] < 1 || types[i] > 6)
            throw ck::key_error("token " + std::to_string(i) + " has type " +
                                    std::to_string(types[i]) +
                                    ", not one of llama.cpp's token types 1 to 6",
                                gguf_types_key);
    }
    return types;
}

std::vector<float> token_scores_of(const ck::Value& value, std::size_t n) {
    const ck::ArrayValue& array = tokenizer_array(value, ck::ValueType::f32, gguf_scores_key, n);
    std::vector<float> scores(n);
    for (std::size_t i = 0; i < n; ++i)
        scores[i] = std::bit_cast<float>(static_cast<std::uint32_t>(array.raw_at(i)));
    return scores;
}

std::uint32_t special_token_id(const ck::Value& value, std::string_view key, std::size_t n) {
    const auto id = value.as_uint();
    if (!id || *id > std::numeric_limits<std::uint32_t>::max())
        throw ck::key_error("expected a token id, got " + value.to_display(), key);
    if (*id >= n)
        throw ck::key_error("token id " + std::to_string(*id) + " is not below the " +
                                std::to_string(n) + " tokens",
                            key);
    return static_cast<std::uint32_t>(*id);
}

// A special id, add flag or chat template key, kept in the order the GGUF has them.
void read_ordered_tokenizer_key(const std::string& key, const ck::Value& value, GgufTokenizer& t) {
    for (const SpecialType& special : special_types) {
        if (key == special.id_key)
            return t.special_ids.push_back(
                {special.type, special_token_id(value, key, t.tokens.size())});
        if (special.has_add_key &&
            key == "tokenizer.ggml.add_" + std::string(special.type) + "_token")
            return t.add_flags.push_back({special.type, tokenizer_bool(value, key)});
    }
    if (key == gguf_template_key) {
        t.chat_template = tokenizer_string(value, key);
    } else if (key.starts_with(std::string(gguf_template_key) + ".") &&
               key.size() > gguf_template_key.size() + 1) {
        t.named_templates.push_back(
            {key.substr(gguf_template_key.size() + 1), tokenizer_string(value, key)});
    }
}

void read_ordered_tokenizer_keys(const ck::Metadata& metadata, GgufTokenizer& t) {
    for (const auto& [key, value] : metadata) {
        if (key == gguf_space_prefix_key) {
            t.add_space_prefix = tokenizer_bool(value, key);
        } else if (key.starts_with("tokenizer.")) {
            read_ordered_tokenizer_key(key, value, t);
        }
    }
}

std::optional<std::uint64_t> gguf_context_length(const ck::Metadata& metadata) {
    const ck::Value* arch = metadata.find("general.architecture");
    if (!arch || arch->type() != ck::ValueType::string) return std::nullopt;
    const ck::Value* length = metadata.find(arch->str() + ".context_length");
    return length ? length->as_uint() : std::nullopt;
}

}  // namespace

std::optional<std::uint32_t> GgufTokenizer::id_of(std::string_view type) const {
    for (const SpecialTokenId& s : special_ids)
        if (s.type == type) return s.id;
    return std::nullopt;
}

std::optional<bool> GgufTokenizer::flag(std::string_view type) const {
    for (const AddTokenFlag& f : add_flags)
        if (f.type == type) return f.value;
    return std::nullopt;
}

GgufTokenizer read_gguf_tokenizer(const ck::Metadata& metadata) {
    GgufTokenizer t;
    t.model = tokenizer_string(required_tokenizer_key(metadata, gguf_model_key), gguf_model_key);
    if (t.model != "llama" && t.model != "gpt2")
        throw ck::key_error("tokenizer model '" + t.model +
                                "' cannot be rebuilt as Hugging Face tokenizer files: the hf "
                                "writer knows llama (SentencePiece) and gpt2 (byte-level BPE)",
                            gguf_model_key);
    if (const ck::Value* pre = metadata.find(gguf_pre_key))
        t.pre = tokenizer_string(*pre, gguf_pre_key);
    t.tokens = array_strings(tokenizer_array(required_tokenizer_key(metadata, gguf_tokens_key),
                                             ck::ValueType::string, gguf_tokens_key));
    if (t.tokens.empty()) throw ck::key_error("has no tokens", gguf_tokens_key);
    const std::size_t n = t.tokens.size();
    t.types = token_types_of(required_tokenizer_key(metadata, gguf_types_key), n);
    if (t.model == "llama")
        t.scores = token_scores_of(required_tokenizer_key(metadata, gguf_scores_key), n);
    if (const ck::Value* merges = metadata.find(gguf_merges_key); merges && t.model == "gpt2")
        t.merges = array_strings(tokenizer_array(*merges, ck::ValueType::string, gguf_merges_key));
    read_ordered_tokenizer_keys(metadata, t);
    t.context_length = gguf_context_length(metadata);
    return t;
}

bool is_converter_pad(const GgufTokenizer& t, std::size_t id) {
    return t.types[id] == 5 && (t.scores.empty() || t.scores[id] == -10000.0f) &&
           t.tokens[id] == "[PAD" + std::to_string(id) + "]";
}

std::string spaces_as_metaspace(std::string text) {
    for (std::size_t at; (at = text.find(' ')) != std::string::npos;)
        text.replace(at, 1, "\xe2\x96\x81");
    return text;
}

}  // namespace ckplugin::hf
