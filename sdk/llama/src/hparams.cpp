#include "ck/llama/hparams.hpp"

#include <algorithm>
#include <limits>

#include "ck/error.hpp"

namespace ck::llama {
namespace {

constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();

bool is_signed_integer(ValueType t) {
    return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

bool is_integer_type(ValueType t) {
    return is_signed_integer(t) || t == ValueType::u8 || t == ValueType::u16 ||
           t == ValueType::u32 || t == ValueType::u64;
}

// Element i of an integer array as a count, or why it is not one.
std::uint32_t array_count(const ArrayValue& a, std::uint64_t i, const std::string& key,
                          const std::string& file) {
    const std::uint64_t raw = a.raw_at(i);
    const std::size_t bits = value_type_size(a.element_type()) * 8;
    if (is_signed_integer(a.element_type()) && ((raw >> (bits - 1)) & 1))
        throw key_error("element " + std::to_string(i) + " is negative; expected a count", key,
                        file);
    if (raw > u32_max)
        throw key_error("element " + std::to_string(i) + " (" + std::to_string(raw) +
                            ") is too large; expected a count up to 4294967295",
                        key, file);
    return static_cast<std::uint32_t>(raw);
}

// An integer, or an integer array with one value per layer.
std::optional<PerLayer> read_per_layer(const ArchKeys& keys, std::string_view suffix,
                                       const std::string& file) {
    const auto found = keys.find(suffix);
    if (!found) return std::nullopt;
    const Value& v = *found->value;
    if (v.type() != ValueType::array) {
        const auto n = v.as_uint();
        if (!n || *n > u32_max)
            throw key_error("expected an integer between 0 and 4294967295, got " + v.to_display(),
                            found->key, file);
        return PerLayer({static_cast<std::uint32_t>(*n)}, found->key);
    }
    const ArrayValue& a = v.array();
    if (!is_integer_type(a.element_type()) || a.size() == 0)
        throw key_error("expected an integer or a non-empty integer array (one per layer), got " +
                            v.to_display(),
                        found->key, file);
    std::vector<std::uint32_t> values;
    values.reserve(a.size());
    for (std::uint64_t i = 0; i < a.size(); ++i)
        values.push_back(array_count(a, i, found->key, file));
    return PerLayer(std::move(values), found->key);
}

std::optional<std::uint32_t> read_count(const ArchKeys& keys, std::string_view suffix,
                                        const std::string& file) {
    try {
        return keys.u32(suffix);
    } catch (const Error& e) {
        throw e.with_file(file);
    }
}

// A per-layer array must cover the layers block_count says there are.
void check_layers(const std::optional<PerLayer>& values, const Hyperparameters& hp,
                  const std::string& file) {
    if (!values || values->values().size() == 1 || !hp.block_count) return;
    if (values->values().size() != *hp.block_count)
        throw key_error("has " + std::to_string(values->values().size()) +
                            " per-layer values, expected one per layer (" + hp.key("block_count") +
                            " is " + std::to_string(*hp.block_count) + ")",
                        values->key(), file);
}

}  // namespace

bool PerLayer::uniform() const {
    return std::all_of(values_.begin(), values_.end(),
                       [&](std::uint32_t v) { return v == values_.front(); });
}

Hyperparameters read_hyperparameters(const Metadata& metadata, const std::string& file) {
    const ArchKeys keys(metadata);
    Hyperparameters hp;
    hp.arch = keys.arch();
    const Value* arch = metadata.find("general.architecture");
    hp.arch_stated = arch && arch->type() == ValueType::string && !arch->str().empty();
    hp.block_count = read_count(keys, "block_count", file);
    hp.embedding_length = read_count(keys, "embedding_length", file);
    hp.context_length = read_count(keys, "context_length", file);
    hp.feed_forward_length = read_per_layer(keys, "feed_forward_length", file);
    hp.head_count = read_per_layer(keys, "attention.head_count", file);
    hp.head_count_kv = read_per_layer(keys, "attention.head_count_kv", file);
    for (const auto* values : {&hp.feed_forward_length, &hp.head_count, &hp.head_count_kv})
        check_layers(*values, hp, file);
    hp.key_length = read_count(keys, "attention.key_length", file);
    hp.value_length = read_count(keys, "attention.value_length", file);
    hp.expert_count = read_count(keys, "expert_count", file).value_or(0);
    hp.expert_used_count = read_count(keys, "expert_used_count", file).value_or(0);
    return hp;
}

}  // namespace ck::llama
