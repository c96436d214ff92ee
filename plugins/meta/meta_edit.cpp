#include "meta_edit.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "ck/conventions/repacked.hpp"
#include "ck/error.hpp"
#include "ck/glob.hpp"
#include "ck/suggest.hpp"
#include "ck/support/tensor_io.hpp"
#include "ck/utf8.hpp"
#include "meta_rules.hpp"
#include "meta_values.hpp"

namespace fs = std::filesystem;

namespace ckplugin::meta {
using namespace ck;
namespace {

using support::tensor_subject;

// gguf_new_metadata.py's --special-token names: each is tokenizer.ggml.<name>_token_id, the
// keys llama.cpp reads special token ids from (seperator is spelled as llama.cpp spells it).
constexpr std::string_view special_token_names[] = {
    "bos",     "eos",     "eot",     "eom",     "unknown", "seperator",
    "padding", "mask",    "fim_pre", "fim_suf", "fim_mid", "fim_pad",
    "fim_rep", "fim_sep", "prefix",  "suffix",  "middle"};

std::string joined(const auto& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += separator;
        out += item;
    }
    return out;
}

// `value` split at its first (or last) `separator` into two non-empty parts.
std::pair<std::string, std::string> split_option(std::string_view option, const std::string& value,
                                                 char separator, bool at_last,
                                                 std::string_view syntax) {
    const std::size_t at = at_last ? value.rfind(separator) : value.find(separator);
    if (at == std::string::npos || at == 0)
        refuse(option, {},
               "expected " + std::string(option) + "=" + std::string(syntax) + ", got '" + value +
                   "'");
    return {value.substr(0, at), value.substr(at + 1)};
}

std::string architecture(const Metadata& metadata) {
    const Value* v = metadata.find(architecture_key);
    return v && v->type() == ValueType::string ? v->str() : std::string();
}

// set_file's file as one string: its bytes exactly, which must be UTF-8 and fit a GGUF string.
Value read_text_file(std::string_view key, const fs::path& path) {
    constexpr std::string_view option = "set_file";
    const std::string file = path.string();
    std::error_code ec;
    if (!fs::exists(path, ec)) refuse(option, key_subject(key), "no such file", file);
    if (!fs::is_regular_file(path, ec))
        refuse(option, key_subject(key), "not a regular file", file);
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec || size > max_string_bytes)
        refuse(option, key_subject(key),
               ec ? "cannot read its size: " + ec.message()
                  : "a file of more than 1 GiB cannot be one GGUF string",
               file);
    std::string text(size, '\0');
    std::ifstream in(path, std::ios::binary);
    if (!in.read(text.data(), static_cast<std::streamsize>(size)))
        refuse(option, key_subject(key), "cannot read the file", file);
    if (auto at = invalid_utf8_at(text))
        throw Error(std::string(option) + ": the file is not valid UTF-8 (GGUF strings are)", file,
                    *at, key_subject(key), ErrorKind::usage);
    return Value::of_string(std::move(text));
}

// A special token id set by number must name a token (gguf_new_metadata.py's
// --special-token-by-id refuses one past the list; llama.cpp would ignore it with a warning).
void check_token_id(std::string_view key, const Value& value, const Metadata& metadata,
                    const std::string& file) {
    const Value* tokens = metadata.find(tokens_key);
    if (value.type() != ValueType::u32 || !tokens || tokens->type() != ValueType::array ||
        ::fnmatch(token_id_keys, std::string(key).c_str(), 0) != 0)
        return;
    if (value.raw() >= tokens->array().size())
        refuse("set", key_subject(key),
               "token id " + std::to_string(value.raw()) + " is past the model's " +
                   std::to_string(tokens->array().size()) + " tokens",
               file);
}

// libstdc++'s regex compiler (GCC 12's) recurses once per group and alternative, so a long
// enough pattern exhausts the stack (30000 nested groups crashed ckhost), and it reads a
// back-reference or repeat count into a long without an overflow check (undefined behaviour
// from 19 digits on). Patterns of tensor names are short: refuse the extremes before compiling.
void check_pattern_limits(const std::string& pattern) {
    constexpr std::size_t max_pattern_bytes = 1024;
    constexpr std::size_t max_digits = 9;
    if (pattern.size() > max_pattern_bytes)
        refuse("rename_tensors", {},
               "the pattern is " + std::to_string(pattern.size()) + " bytes; at most " +
                   std::to_string(max_pattern_bytes) + " are allowed");
    std::size_t digits = 0;
    for (char c : pattern) {
        digits = c >= '0' && c <= '9' ? digits + 1 : 0;
        if (digits > max_digits)
            refuse("rename_tensors", {},
                   "'" + pattern + "' holds a number of more than " + std::to_string(max_digits) +
                       " digits");
    }
}

}  // namespace

Meta::Meta(const Options& options, Context& context) : context_(context) {
    if (options.all().empty())
        throw usage_error(
            "meta needs at least one edit: set, set_file, del, rename, rename_tensors or "
            "special_token");
    del_ = options.get("del");
    if (options.has("del") && del_.empty()) refuse("del", {}, "expected del=KEY or del=GLOB");
    if (!del_.empty()) Glob{del_};  // a malformed glob is a usage error before any file is read
    // A glob's literal start is enough to refuse `del=split.*` before the model is read; the
    // keys a wider glob matches are checked one by one in plan().
    if (!del_.empty()) check_editable("del", del_, true);
    if (options.has("rename")) {
        rename_ = split_option("rename", options.get("rename"), '=', false, "OLD=NEW");
        check_key_name("rename", rename_->second);
        check_editable("rename", rename_->first, true);
        check_editable("rename", rename_->second, false);
        if (rename_->first == rename_->second)
            refuse("rename", key_subject(rename_->first), "the new name is the old one");
    }
    std::vector<std::string> valued;  // keys this stage gives a value, to refuse one given twice
    if (options.has("set")) {
        auto [key, typed] = split_option("set", options.get("set"), '=', false, "KEY=TYPE:VALUE");
        check_key_name("set", key);
        check_editable("set", key, false);
        if (names_its_type(typed))
            set_ = KeyValue{"set", key, parse_typed_value(typed, key)};
        else
            set_untyped_.emplace(key, typed);
        valued.push_back(key);
    }
    if (options.has("set_file")) {
        auto [key, path] =
            split_option("set_file", options.get("set_file"), '=', false, "KEY=PATH");
        check_key_name("set_file", key);
        check_editable("set_file", key, false);
        set_file_.emplace(key, path);
        valued.push_back(key);
    }
    if (options.has("special_token")) {
        auto [name, text] =
            split_option("special_token", options.get("special_token"), ':', false, "NAME:TEXT");
        if (std::ranges::find(special_token_names, name) == std::end(special_token_names))
            refuse("special_token", {},
                   "unknown special token '" + name +
                       "' (names: " + joined(special_token_names, " ") + ")");
        special_token_ = SpecialToken{"tokenizer.ggml." + name + "_token_id", text};
        valued.push_back(special_token_->key);
    }
    std::ranges::sort(valued);
    if (auto twice = std::ranges::adjacent_find(valued); twice != valued.end())
        refuse("set", key_subject(*twice),
               "given a value by two options of one stage; chain a second meta stage to set it "
               "again");
    if (options.has("rename_tensors")) {
        // At the last '=': a replacement is a tensor name (no '='), a pattern may hold one
        // ("(?=...)").
        auto [pattern, replacement] = split_option("rename_tensors", options.get("rename_tensors"),
                                                   '=', true, "PATTERN=REPLACEMENT");
        check_pattern_limits(pattern);
        try {
            rename_tensors_ =
                TensorRename{pattern, std::regex(pattern, std::regex::ECMAScript), replacement};
        } catch (const std::regex_error& e) {
            refuse("rename_tensors", {},
                   "'" + pattern + "' is not an ECMAScript regular expression (" + e.what() + ")");
        }
    }
}

ModelHeader Meta::plan(const ModelHeader& in) {
    ModelHeader out = in;
    std::vector<std::string> done;  // what this stage changed, for the note
    if (!del_.empty()) delete_keys(out.metadata, in.source, done);
    if (rename_) rename_key(out.metadata, in.source, done);

    std::vector<KeyValue> values;
    if (set_) values.push_back(*set_);
    if (set_untyped_)
        values.push_back(
            {"set", set_untyped_->first, untyped_value(out.metadata, architecture(out.metadata))});
    if (set_file_)
        values.push_back(
            {"set_file", set_file_->first, read_text_file(set_file_->first, set_file_->second)});
    if (special_token_)
        values.push_back({"special_token", special_token_->key, token_id(out.metadata, in.source)});
    for (const KeyValue& kv : values) {
        out.metadata.set(kv.key, kv.value);
        done.push_back("set " + kv.key + " (" + std::string(value_type_name(kv.value.type())) +
                       ")");
    }
    // Types are checked once every key is in place: general.architecture may be among them.
    const std::string arch = architecture(out.metadata);
    for (const KeyValue& kv : values) {
        check_value_type(kv.option, kv.key, kv.value, arch);
        check_token_id(kv.key, kv.value, out.metadata, in.source);
    }
    if (rename_)
        check_value_type("rename", rename_->second, *out.metadata.find(rename_->second), arch);

    if (rename_tensors_) rename_tensors(out, done);
    if (!done.empty()) context_.note("meta: " + joined(done, "; "));
    return out;
}

// A key llama.cpp's table knows takes that type; a key the input has keeps its type (strings
// and fixed-size scalars: an array needs arr:TYPE). Anything else must say its type.
Value Meta::untyped_value(const Metadata& metadata, const std::string& arch) const {
    const auto& [key, text] = *set_untyped_;
    std::optional<ValueType> type = known_type(key, arch);
    if (const Value* present = metadata.find(key); !type && present)
        if (present->type() != ValueType::array) type = present->type();
    // A key of unknown type with a colon in its value was meant as TYPE:VALUE: say what is
    // wrong with the type it names.
    if (!type && text.find(':') != std::string::npos) return parse_typed_value(text, key);
    if (!type)
        refuse("set", key_subject(key),
               "'" + text +
                   "' does not say its type and the key is neither one whose type llama.cpp "
                   "fixes nor in the input: expected KEY=TYPE:VALUE (e.g. " +
                   key + "=str:" + text +
                   "; types: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str, arr:TYPE)");
    return parse_value_as(*type, text, key);
}

void Meta::delete_keys(Metadata& metadata, const std::string& file,
                       std::vector<std::string>& done) const {
    // The same globs as only=/skip= ({a,b} included), and the same hint when nothing matches.
    const Glob glob(del_);
    std::vector<std::string> keys, all;
    for (const auto& [key, value] : metadata) {
        all.push_back(key);
        if (glob.matches(key)) keys.push_back(key);
    }
    if (keys.empty())
        refuse("del", key_subject(del_),
               "no key of the model matches" +
                   (all.empty() ? std::string()
                                : "; closest: " + joined(closest_matches(glob, all), ", ")),
               file);
    for (const std::string& key : keys) check_editable("del", key, true);
    for (const std::string& key : keys) metadata.erase(key);
    done.push_back(keys.size() == 1 && keys.front() == del_
                       ? "deleted " + del_
                       : "deleted " + std::to_string(keys.size()) + " keys matching " + del_);
}

void Meta::rename_key(Metadata& metadata, const std::string& file,
                      std::vector<std::string>& done) const {
    const auto& [from, to] = *rename_;
    if (!metadata.contains(from)) refuse("rename", key_subject(from), "no such key", file);
    if (metadata.contains(to))
        refuse("rename", key_subject(to), "already exists (del it first to replace it)", file);
    // Metadata keeps its order; a rename keeps the key's position, so the map is rebuilt.
    Metadata renamed;
    for (const auto& [key, value] : metadata) renamed.insert(key == from ? to : key, value);
    metadata = std::move(renamed);
    done.push_back("renamed " + from + " to " + to);
}

Value Meta::token_id(const Metadata& metadata, const std::string& file) const {
    const SpecialToken& special = *special_token_;
    const Value* tokens = metadata.find(tokens_key);
    if (!tokens || tokens->type() != ValueType::array ||
        tokens->array().element_type() != ValueType::string)
        refuse("special_token", key_subject(tokens_key),
               "the model has no string array of tokens to find '" + special.text + "' in", file);
    std::optional<std::uint32_t> first;
    std::uint64_t index = 0, found = 0;
    tokens->array().for_each_string([&](std::string_view token) {
        if (token == special.text) {
            if (!first) first = static_cast<std::uint32_t>(index);
            ++found;
        }
        ++index;
        return true;
    });
    if (!first)
        refuse("special_token", key_subject(special.key),
               "'" + special.text + "' is not one of the " + std::to_string(index) +
                   " tokens of tokenizer.ggml.tokens",
               file);
    if (found > 1)  // as gguf_new_metadata.py: the first, with a warning
        context_.warn("special_token: '" + special.text + "' is " + std::to_string(found) +
                      " tokens; " + special.key + " is the first, " + std::to_string(*first) +
                      " (set=" + special.key + "=u32:ID chooses another)");
    return Value::of_u32(*first);
}

void Meta::rename_tensors(ModelHeader& header, std::vector<std::string>& done) const {
    constexpr std::string_view option = "rename_tensors";
    const TensorRename& r = *rename_tensors_;
    bool matched = false;
    std::unordered_map<std::string, std::string> named;        // new name -> the tensor's old name
    std::vector<std::pair<std::string, std::string>> renames;  // old, new
    for (TensorInfo& t : header.tensors) {
        std::string name = t.name;
        if (std::regex_search(t.name, r.pattern)) {
            matched = true;
            name = std::regex_replace(t.name, r.pattern, r.replacement);
            if (name.empty())
                refuse(option, tensor_subject(t.name), "the new name is empty", header.source);
            if (name.size() > max_tensor_name_bytes)
                refuse(option, tensor_subject(t.name),
                       "the new name '" + name + "' is " + std::to_string(name.size()) +
                           " bytes; GGUF (ggml) allows at most 63",
                       header.source);
            if (auto at = invalid_utf8_at(name))
                refuse(option, tensor_subject(t.name),
                       "the new name is not valid UTF-8 (byte " + std::to_string(*at) + ")",
                       header.source);
        }
        if (auto [it, fresh] = named.emplace(name, t.name); !fresh)
            refuse(option, tensor_subject(name),
                   "tensors '" + it->second + "' and '" + t.name + "' would both have this name",
                   header.source);
        if (name == t.name) continue;
        renames.emplace_back(t.name, name);
        t.name = std::move(name);
    }
    if (!matched)
        refuse(option, {}, "'" + r.text + "' matches no tensor of the model (unknown tensors)",
               header.source);
    // A repacked tensor is named in its ckhost.repack.* key and in its scales tensor's name.
    std::unordered_set<std::string> old_names;
    for (const auto& [from, to] : renames) old_names.insert(from);
    for (const auto& [key, value] : header.metadata) {
        if (!key.starts_with(repack::metadata_prefix) || value.type() != ValueType::string)
            continue;
        const std::string codes = key.substr(repack::metadata_prefix.size());
        for (const std::string& tensor :
             {codes, codes + std::string(repack::scales_suffix(value.str()))})
            if (old_names.contains(tensor))
                refuse(option, tensor_subject(tensor),
                       "is part of a repacked tensor (key '" + key +
                           "'): rename tensors before the repack stage",
                       header.source);
    }
    if (renames.empty()) return;
    done.push_back("renamed " + std::to_string(renames.size()) + " tensors");
    // --dry-run shows these beside each tensor. A name that is both an old and a new one (a->b,
    // b->c) is a tensor of the output: what it was renamed from is what to say of it.
    std::map<std::string, std::string> why;
    for (const auto& [from, to] : renames) why[from] = "renamed to '" + to + "'";
    for (const auto& [from, to] : renames) why[to] = "renamed from '" + from + "'";
    for (auto& [tensor, reason] : why) context_.explain(tensor, std::move(reason));
}

}  // namespace ckplugin::meta
