#include "gguf_split_set.hpp"

#include <iterator>
#include <unordered_map>
#include <utility>

#include "ck/error.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;
namespace {

// "-00002-of-00003.gguf": what follows the prefix in the name of shard `no` (0-based).
std::string shard_suffix(std::uint32_t no, std::uint32_t count) {
    return shard_path("", no, count).string();
}

std::string shard_name(std::uint32_t no, std::uint32_t count) {
    return "shard " + std::to_string(no + 1) + " of " + std::to_string(count);
}

std::uint64_t integer_key(const Metadata& metadata, std::string_view key, const std::string& file) {
    const Value* v = metadata.find(key);
    if (!v)
        throw key_error("the file has split.count but no " + std::string(key) +
                            ": an incomplete split-set header",
                        key, file);
    const auto n = v->as_uint();
    if (!n || *n > 0xffff)
        throw key_error("must be an integer from 0 to 65535, got " + v->to_display(), key, file);
    return *n;
}

}  // namespace

std::optional<SplitKeys> split_keys(const Metadata& metadata, const std::string& file) {
    if (!metadata.contains(split_count_key)) return std::nullopt;
    SplitKeys keys;
    keys.count = static_cast<std::uint32_t>(integer_key(metadata, split_count_key, file));
    if (keys.count == 0) return std::nullopt;
    keys.no = static_cast<std::uint32_t>(integer_key(metadata, split_no_key, file));
    if (keys.no >= keys.count)
        throw key_error("split.no is " + std::to_string(keys.no) + " but split.count is " +
                            std::to_string(keys.count) + " (split.no counts from 0)",
                        split_no_key, file);
    // llama-gguf-split always writes the total; a set without it is read without that check.
    keys.tensors = -1;
    if (const Value* total = metadata.find(split_tensors_count_key)) {
        const auto n = total->as_int();
        if (!n || *n < 0)
            throw key_error("must be a non-negative integer, got " + total->to_display(),
                            split_tensors_count_key, file);
        keys.tensors = *n;
    }
    return keys;
}

std::optional<std::string> shard_prefix(const fs::path& path, std::uint32_t no,
                                        std::uint32_t count) {
    const std::string name = path.filename().string();
    const std::string suffix = shard_suffix(no, count);
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) return std::nullopt;
    return (path.parent_path() / name.substr(0, name.size() - suffix.size())).string();
}

std::vector<ParsedGguf> open_split_set(ParsedGguf given, const fs::path& path,
                                       const SplitKeys& keys, Context& context) {
    const std::optional<std::string> prefix = shard_prefix(path, keys.no, keys.count);
    if (!prefix)
        throw key_error("this file is " + shard_name(keys.no, keys.count) +
                            " of a split set, but its name does not end in '" +
                            shard_suffix(keys.no, keys.count) +
                            "' as llama-gguf-split names shards, so the other shards cannot be "
                            "found and converting this one alone would drop their tensors: give "
                            "the set its original file names",
                        split_no_key, path.string());

    std::vector<ParsedGguf> set;
    set.reserve(keys.count);
    std::unordered_map<std::string, std::uint32_t> shard_of_tensor;
    std::uint64_t total = 0;
    for (std::uint32_t no = 0; no < keys.count; ++no) {
        const fs::path file = no == keys.no ? path : shard_path(*prefix, no, keys.count);
        const std::string shown = file.string();
        ParsedGguf shard;
        if (no == keys.no) {
            shard = std::move(given);
        } else {
            std::error_code ec;
            if (!fs::exists(file, ec))
                throw Error(shard_name(no, keys.count) + " of the split set is missing (the set " +
                                "was opened from " + path.string() +
                                "); without it the model would be incomplete",
                            shown);
            shard = parse_gguf_file(file, context);
        }
        const std::optional<SplitKeys> own = split_keys(shard.header.metadata, shown);
        if (!own)
            throw key_error(
                "named as " + shard_name(no, keys.count) + " of the split set opened from " +
                    path.string() +
                    ", but it is not a shard: it has no split.count (or split.count = 0)",
                split_count_key, shown);
        if (own->count != keys.count)
            throw key_error("split.count is " + std::to_string(own->count) +
                                ", but the set opened from " + path.string() + " has " +
                                std::to_string(keys.count) +
                                " files: this shard belongs to another set",
                            split_count_key, shown);
        if (own->no != no)
            throw key_error("split.no is " + std::to_string(own->no) +
                                ", but the file is named as " + shard_name(no, keys.count) +
                                " (split.no " + std::to_string(no) +
                                "): a shard of another set, or a copy under the wrong name",
                            split_no_key, shown);
        if (own->tensors != keys.tensors)
            throw key_error("split.tensors.count is " + std::to_string(own->tensors) + ", but " +
                                path.string() + " says " + std::to_string(keys.tensors) +
                                ": this shard belongs to another set",
                            split_tensors_count_key, shown);
        for (const TensorInfo& t : shard.header.tensors) {
            auto [at, fresh] = shard_of_tensor.emplace(t.name, no);
            if (!fresh)
                throw tensor_error("tensor '" + t.name + "' is also in " +
                                       shard_name(at->second, keys.count) + " (" +
                                       shard_path(*prefix, at->second, keys.count).string() +
                                       "): a tensor may be in one shard only",
                                   t.name, shown);
        }
        total += shard.header.tensors.size();
        set.push_back(std::move(shard));
    }
    if (keys.tensors >= 0 && total != static_cast<std::uint64_t>(keys.tensors))
        throw key_error("the set's " + std::to_string(keys.count) + " files hold " +
                            std::to_string(total) + " tensors, but split.tensors.count says " +
                            std::to_string(keys.tensors),
                        split_tensors_count_key, set.front().header.source);
    return set;
}

namespace {

std::string trailing_bytes_of(const ModelHeader& shard) {
    for (const auto& [fact, value] : shard.format_facts)
        if (fact == "trailing bytes") return value;
    return {};
}

}  // namespace

ModelHeader present_as_one_model(std::vector<ParsedGguf>& set, std::uint32_t opened) {
    // The opened file's own facts first (inspect of shard 2 describes shard 2), then the set's.
    std::vector<std::pair<std::string, std::string>> facts = set[opened].header.format_facts;
    std::vector<std::string> trailing;
    std::uint64_t set_file_size = 0;
    for (const ParsedGguf& shard : set) {
        trailing.push_back(trailing_bytes_of(shard.header));
        set_file_size += shard.file_size;
    }
    ModelHeader header = std::move(set.front().header);
    const ValueType count_type = header.metadata.find(split_count_key)->type();
    header.metadata.erase(split_count_key);
    header.metadata.insert(std::string(split_count_key), Value::scalar(count_type, 0));
    const std::size_t first_count = header.tensors.size();
    // One value per fact (inspect --json types them): which shard this is, the set's size, then
    // each shard's file, tensors and bytes.
    facts.emplace_back("shard", std::to_string(opened + 1));
    facts.emplace_back("split files", std::to_string(set.size()));
    facts.emplace_back("set file size", std::to_string(set_file_size));
    for (std::size_t s = 0; s < set.size(); ++s) {
        ModelHeader& shard = s == 0 ? header : set[s].header;
        const std::size_t count = s == 0 ? first_count : shard.tensors.size();
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; i < count; ++i) bytes += shard.tensors[i].nbytes;
        const std::string shard_name = "shard " + std::to_string(s + 1);
        facts.emplace_back(shard_name + " file", shard.source);
        facts.emplace_back(shard_name + " tensors", std::to_string(count));
        facts.emplace_back(shard_name + " bytes", std::to_string(bytes));
        if (s != opened && !trailing[s].empty())
            facts.emplace_back("trailing bytes (" + shard_name + ")", trailing[s]);
        if (s == 0) continue;
        std::move(shard.tensors.begin(), shard.tensors.end(), std::back_inserter(header.tensors));
    }
    header.format_facts = std::move(facts);
    return header;
}

}  // namespace ckplugin::gguf
