#include "gguf_split_plan.hpp"

#include <charconv>
#include <cstdio>
#include <limits>
#include <string>

#include "ck/error.hpp"
#include "ck/support/destination.hpp"
#include "gguf_format.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;

std::uint64_t parse_split_size(std::string_view text, std::string_view option) {
    const auto fail = [&](const std::string& why) {
        return usage_error(
            "option " + std::string(option) + "=" + std::string(text) + ": " + why +
            " (llama-gguf-split's sizes: 500M = 500*1000^2 bytes, 2G = 2*1000^3 bytes)");
    };
    if (text.empty()) throw fail("no size given");
    // llama-gguf-split takes the unit from the last character, upper case only, and the
    // number with sscanf("%d"), which would read "1.5G" as 1G: a fraction is refused here
    // rather than silently dropped.
    const char unit = text.back();
    std::uint64_t scale = 0;
    if (unit == 'M')
        scale = 1000ull * 1000;
    else if (unit == 'G')
        scale = 1000ull * 1000 * 1000;
    else
        throw fail(std::string("the unit must be M or G, not '") + unit + "'");
    const std::string_view digits = text.substr(0, text.size() - 1);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec == std::errc::invalid_argument || end != digits.data() + digits.size())
        throw fail("expected a whole number before the unit");
    if (ec == std::errc::result_out_of_range ||
        n > std::numeric_limits<std::uint64_t>::max() / scale)
        throw fail("too large");
    if (n == 0) throw fail("the size must be positive");
    return n * scale;
}

std::optional<SplitSettings> split_settings(const Options& options) {
    const bool by_size = options.has("split_max_size");
    const bool by_count = options.has("split_max_tensors");
    const bool no_tensor_first = options.get_bool("split_no_tensor_first", false);
    if (!by_size && !by_count && !no_tensor_first) return std::nullopt;
    if (by_size && by_count)
        throw usage_error(
            "gguf: give split_max_size or split_max_tensors, not both (llama-gguf-split takes one "
            "of --split-max-size and --split-max-tensors)");
    SplitSettings s;
    s.no_tensor_first = no_tensor_first;
    if (by_size) {
        s.max_bytes = parse_split_size(options.get("split_max_size"));
    } else {
        s.max_tensors = options.get_u64("split_max_tensors", default_split_max_tensors);
        if (s.max_tensors == 0)
            throw usage_error("option split_max_tensors=0: a shard holds at least one tensor");
    }
    return s;
}

std::vector<ShardRange> plan_shards(const std::vector<TensorInfo>& tensors,
                                    const SplitSettings& settings) {
    std::vector<ShardRange> shards(settings.no_tensor_first ? 2 : 1);
    std::uint64_t shard_bytes = 0;  // padded tensor data of the open shard
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        // llama-gguf-split pads by GGUF_DEFAULT_ALIGNMENT here, not by the file's alignment.
        const std::uint64_t padded = align_up(tensors[i].nbytes, default_alignment);
        const bool split = settings.max_bytes ? shard_bytes + padded > settings.max_bytes
                                              : i > 0 && i % settings.max_tensors == 0;
        if (split) {
            // Only a first tensor too large for split_max_size gets here with the shard empty
            // (llama-gguf-split: "one of splits have 0 tensors").
            if (shards.back().empty())
                throw usage_error("option split_max_size: tensor '" + tensors[i].name + "' takes " +
                                  std::to_string(padded) + " bytes, more than the " +
                                  std::to_string(settings.max_bytes) +
                                  " a shard may hold; give a larger size");
            shards.push_back({i, i});
            shard_bytes = padded;
        } else {
            shard_bytes += padded;
        }
        shards.back().end = i + 1;
    }
    if (shards.size() > max_shards)
        throw usage_error("the split options give " + std::to_string(shards.size()) +
                          " shards; split.count is a u16, so a set has at most " +
                          std::to_string(max_shards));
    return shards;
}

Metadata shard_metadata(const Metadata& model, std::size_t shard, std::size_t count,
                        std::size_t n_tensors) {
    Metadata out;
    if (shard == 0) out = model;
    for (std::string_view key : {split_no_key, split_tensors_count_key, split_count_key})
        out.erase(key);
    out.insert(std::string(split_no_key), Value::scalar(ValueType::u16, shard));
    out.insert(std::string(split_tensors_count_key),
               Value::of_i32(static_cast<std::int32_t>(n_tensors)));
    out.insert(std::string(split_count_key), Value::scalar(ValueType::u16, count));
    return out;
}

std::vector<std::int64_t> ggml_written_shape(std::vector<std::int64_t> ne) {
    while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
    if (ne.empty()) ne.push_back(1);
    return ne;
}

fs::path split_prefix(const fs::path& destination, const fs::path& input) {
    // DIR/ and the input's name without its extension (nor its own shard suffix, which would
    // otherwise give NAME-00001-of-00003-00001-of-...).
    if (support::is_directory_destination(destination))
        return support::single_file_destination(destination, input, "");
    fs::path prefix = destination;
    if (prefix.extension() == ".gguf") prefix.replace_extension();
    return prefix;
}

fs::path shard_path(const fs::path& prefix, std::size_t shard, std::size_t count) {
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, "-%05zu-of-%05zu.gguf", shard + 1, count);
    return fs::path(prefix.native() + suffix);
}

}  // namespace ckplugin::gguf
