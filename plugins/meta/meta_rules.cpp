#include "meta_rules.hpp"

#include <fnmatch.h>

#include <bit>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/error.hpp"
#include "ck/utf8.hpp"

namespace ckplugin::meta {
using namespace ck;
namespace {

// Keys whose type is fixed by who reads them. llama.cpp's loader (GGUFMeta::GKV::get_kv)
// refuses a key of any other type than the one its code asks for ("key ... has wrong type"),
// so a wrong type here makes a file llama.cpp will not load. Kept to the keys people edit by
// hand; `<arch>.` stands for the model's general.architecture, a pattern is an fnmatch glob.
struct TypedKey {
    std::string_view key;
    ValueType type;
};

constexpr TypedKey typed_keys[] = {
    {"general.alignment", ValueType::u32},  // gguf.md: the data layout depends on it
    {"general.architecture", ValueType::string},
    {"general.name", ValueType::string},
    {"general.file_type", ValueType::u32},
    {"general.quantization_version", ValueType::u32},
    {"tokenizer.ggml.model", ValueType::string},
    {"tokenizer.ggml.pre", ValueType::string},
    {token_id_keys, ValueType::u32},
    {"tokenizer.chat_template", ValueType::string},
    {"<arch>.context_length", ValueType::u32},
    {"<arch>.embedding_length", ValueType::u32},
    {"<arch>.block_count", ValueType::u32},
    {"<arch>.attention.layer_norm_rms_epsilon", ValueType::f32},
    {"<arch>.rope.freq_base", ValueType::f32},
};

constexpr std::string_view arch_placeholder = "<arch>.";

bool matches(const TypedKey& rule, std::string_view key, std::string_view arch) {
    if (rule.key.starts_with(arch_placeholder)) {
        const std::string_view suffix = rule.key.substr(arch_placeholder.size());
        return !arch.empty() && key.size() == arch.size() + 1 + suffix.size() &&
               key.starts_with(arch) && key[arch.size()] == '.' && key.ends_with(suffix);
    }
    return ::fnmatch(std::string(rule.key).c_str(), std::string(key).c_str(), 0) == 0;
}

// split.* describe a llama-gguf-split set: only the tool that splits or merges a set writes
// them, and a hand-set split.count makes every reader take the file for one shard of a set.
constexpr std::string_view split_prefix = "split.";

}  // namespace

void refuse(std::string_view option, std::string subject, const std::string& message,
            std::string file) {
    throw Error(std::string(option) + ": " + message, std::move(file), {}, std::move(subject),
                ErrorKind::usage);
}

void check_key_name(std::string_view option, std::string_view key) {
    if (key.empty()) refuse(option, {}, "empty key name");
    if (key.size() > max_key_bytes)
        refuse(option, key_subject(key.substr(0, 64)) + "...",
               "key name of " + std::to_string(key.size()) + " bytes; GGUF allows at most " +
                   std::to_string(max_key_bytes));
    if (auto at = invalid_utf8_at(key))
        refuse(option, key_subject(key),
               "key name is not valid UTF-8 (byte " + std::to_string(*at) + ")");
}

void check_editable(std::string_view option, std::string_view key, bool removing) {
    if (key.starts_with(split_prefix))
        refuse(option, key_subject(key),
               "split.* keys describe a llama-gguf-split set and only the tool that splits or "
               "merges the set writes them (a hand-edited split key makes readers take the file "
               "for a shard, or a shard for a whole model)");
    if (key.starts_with(conventions::ckhost_prefix))
        refuse(option, key_subject(key),
               "ckhost.* keys record what a stage did to the tensor bytes; editing one makes a "
               "file that looks valid and is wrong (run the stage that sets it instead)");
    if (removing && key == architecture_key)
        refuse(option, key_subject(key),
               "general.architecture is required: llama.cpp chooses the model's code by it (set "
               "it to another str instead)");
}

std::optional<ValueType> known_type(std::string_view key, std::string_view arch) {
    for (const TypedKey& rule : typed_keys)
        if (matches(rule, key, arch)) return rule.type;
    return std::nullopt;
}

void check_value_type(std::string_view option, std::string_view key, const Value& value,
                      std::string_view arch) {
    if (const auto type = known_type(key, arch); type && value.type() != *type)
        refuse(option, key_subject(key),
               "must be of type " + std::string(value_type_name(*type)) + ", not " +
                   std::string(value_type_name(value.type())) +
                   " (llama.cpp refuses to load a file where it has another type)");
    if (key == "general.alignment" && !std::has_single_bit(value.raw()))
        refuse(option, key_subject(key),
               "must be a power of two (gguf.md), not " + std::to_string(value.raw()));
}

}  // namespace ckplugin::meta
