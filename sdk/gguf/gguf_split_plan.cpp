#include "gguf_split_plan.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/byte_size.hpp"
#include "ck/error.hpp"
#include "ck/support/destination.hpp"
#include "gguf_format.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;

std::uint64_t parse_split_size(std::string_view text, std::string_view option) {
    const auto fail = [&](const std::string& why) {
        return usage_error("option " + std::string(option) + "=" + std::string(text) + ": " + why);
    };
    if (text.empty()) throw fail("no size given");
    // llama-gguf-split reads the number before its M or G with sscanf("%d"), which takes "1.5G"
    // as 1G: with a bare letter a fraction is refused rather than read otherwise than there.
    const bool bare_letter =
        !text.empty() && std::string_view("KMGTkmgt").find(text.back()) != std::string_view::npos;
    if (bare_letter && text.find('.') != std::string_view::npos)
        throw fail(
            "llama-gguf-split would read the whole number alone; give whole bytes or a "
            "smaller unit (1500M, not 1.5G)");
    if (const auto bytes = ck::parse_byte_size(text, ck::BareUnit::decimal)) return *bytes;
    throw fail("expected a size of at least 1 byte, such as " +
               ck::byte_size_forms(ck::BareUnit::decimal) +
               "; M and G as llama-gguf-split reads them: 500M = 500*1000^2 bytes");
}

namespace {

// split_counts="N1 N2 ...": decimal counts separated by spaces, the first possibly 0 (a shard
// of metadata alone, as llama-gguf-split --no-tensor-first-split leaves; llama-quantize
// --keep-split keeps it), the others at least 1 (llama-quantize cannot write an empty shard
// after the first).
std::vector<std::uint64_t> parse_split_counts(std::string_view text) {
    const auto fail = [&](const std::string& why) {
        return usage_error("option split_counts=" + std::string(text) + ": " + why);
    };
    std::vector<std::uint64_t> counts;
    for (std::size_t at = text.find_first_not_of(' '); at != std::string_view::npos;
         at = text.find_first_not_of(' ', at)) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        const std::string_view item = text.substr(at, end - at);
        std::uint64_t n = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
        if (ec != std::errc() || ptr != item.data() + item.size())
            throw fail("'" + std::string(item) +
                       "' is not a tensor count (whole numbers separated by spaces)");
        if (n == 0 && !counts.empty())
            throw fail("shard " + std::to_string(counts.size() + 1) +
                       " would hold no tensor; only the first shard may (metadata alone)");
        counts.push_back(n);
        at = end;
    }
    if (counts.empty()) throw fail("no count given (e.g. split_counts=10 10 1)");
    if (counts.size() > max_shards)
        throw fail(std::to_string(counts.size()) +
                   " shards; split.count is a u16, so a set has at most " +
                   std::to_string(max_shards));
    return counts;
}

}  // namespace

std::optional<SplitSettings> split_settings(const Options& options) {
    if (options.has("split_counts")) {
        for (const char* other : {"split_max_size", "split_max_tensors", "split_no_tensor_first"})
            if (options.has(other))
                throw usage_error(std::string("gguf: give split_counts or ") + other +
                                  ", not both (split_counts says where every shard ends)");
        return SplitSettings{.counts = parse_split_counts(options.get("split_counts")),
                             .layout = SplitKeyLayout::quantize};
    }
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

namespace {

std::vector<ShardRange> shards_of_counts(const std::vector<TensorInfo>& tensors,
                                         const std::vector<std::uint64_t>& counts) {
    std::uint64_t sum = 0;
    std::string listed;
    for (const std::uint64_t n : counts) {
        sum += n;
        listed += (listed.empty() ? "" : " + ") + std::to_string(n);
    }
    if (sum != tensors.size())
        throw usage_error("option split_counts: the shards' tensor counts sum to " +
                          std::to_string(sum) + " (" + listed + "), but the model has " +
                          std::to_string(tensors.size()) + " tensors");
    std::vector<ShardRange> shards;
    std::size_t begin = 0;
    for (const std::uint64_t n : counts) {
        shards.push_back({begin, begin + n});
        begin += n;
    }
    return shards;
}

}  // namespace

std::vector<ShardRange> plan_shards(const std::vector<TensorInfo>& tensors,
                                    const SplitSettings& settings) {
    if (!settings.counts.empty()) return shards_of_counts(tensors, settings.counts);
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
                        std::size_t n_tensors, SplitKeyLayout layout) {
    Metadata out;
    if (shard == 0) out = model;
    for (std::string_view key : {split_no_key, split_tensors_count_key, split_count_key})
        out.erase(key);
    const bool quantize = layout == SplitKeyLayout::quantize;
    // llama-quantize --keep-split sets the keys only when there is more than one file.
    if (quantize && count == 1) return out;
    const auto insert_count = [&] {
        out.insert(std::string(split_count_key), Value::scalar(ValueType::u16, count));
    };
    out.insert(std::string(split_no_key), Value::scalar(ValueType::u16, shard));
    if (quantize) insert_count();
    out.insert(std::string(split_tensors_count_key),
               Value::of_i32(static_cast<std::int32_t>(n_tensors)));
    if (!quantize) insert_count();
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

namespace {

// The shard count in NAME if it is PREFIX-NNNNN-of-MMMMM.gguf.
std::optional<std::size_t> shard_count_in(std::string_view name, std::string_view prefix) {
    constexpr std::string_view of = "-of-", extension = ".gguf";
    constexpr std::size_t digits = 5, suffix = 1 + digits + 4 + digits + 5;
    if (name.size() != prefix.size() + suffix || !name.starts_with(prefix) ||
        !name.ends_with(extension))
        return std::nullopt;
    const std::string_view rest = name.substr(prefix.size());
    const auto all_digits = [](std::string_view s) {
        return std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
    };
    if (rest[0] != '-' || rest.substr(1 + digits, of.size()) != of ||
        !all_digits(rest.substr(1, digits)) || !all_digits(rest.substr(1 + digits + 4, digits)))
        return std::nullopt;
    return std::stoul(std::string(rest.substr(1 + digits + 4, digits)));
}

}  // namespace

void refuse_other_sets(const fs::path& prefix, std::size_t count) {
    const fs::path folder = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
    std::error_code ec;
    std::vector<std::string> others;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        if (auto n = shard_count_in(it->path().filename().native(), prefix.filename().native());
            n && *n != count)
            others.push_back(it->path().string());
    if (others.empty()) return;
    std::ranges::sort(others);
    throw file_error("a shard of another split set with this prefix (" +
                         std::to_string(others.size()) + " such files here); a new set of " +
                         std::to_string(count) +
                         " beside it would leave two sets under one name, and a reader given an "
                         "old shard still reads the old model: remove them first, or write the "
                         "new set under another prefix",
                     others.front());
}

}  // namespace ckplugin::gguf
