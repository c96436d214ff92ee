#include "payload_writer.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <limits>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/error.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/llama/plain_graph.hpp"
#include "ck/support/destination.hpp"
#include "config_json.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
namespace {

// The writers' `context=N` option (1 .. 2^32-1; a usage error otherwise), if given.
std::optional<std::uint32_t> context_option(const ck::Options& options) {
    if (!options.has("context")) return std::nullopt;
    const std::uint64_t n = options.get_u64("context", 0);
    if (n == 0 || n > std::numeric_limits<std::uint32_t>::max())
        throw ck::usage_error("option context=" + options.get("context") +
                              ": expected a context length from 1 to 4294967295");
    return static_cast<std::uint32_t>(n);
}

}  // namespace

PayloadWriter::PayloadWriter(const ck::Options& options, ck::Context& context, std::string format,
                             std::string stage)
    : context_(context),
      context_length_(context_option(options)),
      format_(std::move(format)),
      stage_(std::move(stage)),
      config_override_(path_option(options, "config")) {}

std::vector<std::string> PayloadWriter::understood_keys() const {
    return {std::string(ck::conventions::aligned_head_dim_key)};
}

std::optional<fs::path> PayloadWriter::path_option(const ck::Options& options,
                                                   const std::string& key) const {
    if (!options.has(key)) return std::nullopt;
    if (options.get(key).empty())
        throw ck::usage_error("option " + key + ": expected a path, e.g. " +
                              stage_with(key + "=out/" + key + ".json"));
    return fs::path(options.get(key));
}

void PayloadWriter::plan_input(const ck::ModelHeader& header, const std::function<void()>& plan) {
    header_ = header;
    // A model beyond C-Kernel-Engine's plain llama graph (experts, fused projections, q/k
    // norms, Gemma's extra norms and soft-capping, heads wider than E/H, a sliding window,
    // scaled or per-frequency RoPE) is refused: both bump versions have slots and config.json
    // keys for the plain graph only, so the converted model would compute something else
    // (docs/decisions/0002-bump-rope-scaling.md, 0054-bump-takes-the-plain-llama-graph.md).
    ck::llama::refuse_beyond_plain_graph(header_, format_);
    try {
        plan();
    } catch (const ck::Error& e) {
        // The tensor or key named is the input's: say which file it is in.
        if (e.file().empty() && !header_.source.empty()) throw e.with_file(header_.source);
        throw;
    }
}

bool PayloadWriter::place_outputs(const fs::path& destination) {
    const bool new_directory = ck::support::is_new_directory_destination(destination, ".bump");
    bump_path_ = new_directory || ck::support::is_directory_destination(destination)
                     ? destination / "weights.bump"
                     : destination;
    config_path_ = config_override_.value_or(bump_path_.parent_path() / config_file_name);
    return new_directory;
}

void PayloadWriter::check_outputs(const fs::path& destination, bool new_directory,
                                  const std::string& beside) {
    const std::vector<fs::path> all = outputs();
    for (std::size_t i = 0; i < all.size(); ++i)
        for (std::size_t j = i + 1; j < all.size(); ++j)
            if (all[i].lexically_normal() == all[j].lexically_normal())
                throw ck::usage_error("two of " + format_ +
                                      "'s outputs would be the same file: " + all[i].string());
    if (new_directory)
        context_.note("bump: -o " + destination.string() +
                      " does not exist and has no .bump extension: it is taken as a new "
                      "directory, holding " +
                      bump_path_.string() + " and " + beside);
}

void PayloadWriter::warn_unwritten(const std::vector<std::string>& names) const {
    if (names.empty()) return;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    context_.warn("bump: " + std::to_string(names.size()) + " tensor(s) have no slot in " +
                  format_ + " and are not written: " + list);
}

void PayloadWriter::set_dtype_table(std::span<const std::uint8_t> codes) {
    // The u32 little-endian entry count, then one byte per entry.
    table_bytes_.assign(4 + codes.size(), std::byte{0});
    boost::endian::endian_store<std::uint32_t, 4, boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(table_bytes_.data()),
        static_cast<std::uint32_t>(codes.size()));
    std::transform(codes.begin(), codes.end(), table_bytes_.begin() + 4,
                   [](std::uint8_t c) { return std::byte{c}; });
}

void PayloadWriter::start_payload(ck::OutputSink& out) {
    payload_.start(out.create(bump_path_), header_bytes, table_bytes_);  // header: finish()
}

void PayloadWriter::expect_started(std::string_view call) const {
    if (!payload_.started())
        throw ck::Error("bump writer: " + std::string(call) + "() before begin()");
}

void PayloadWriter::refuse_order(const std::string& tensor, const std::string& unit,
                                 const std::string& expected) const {
    throw ck::tensor_error(
        "tensors must arrive in the writer's order (expected " + unit + " " + expected + ")",
        tensor);
}

void PayloadWriter::finish_payload(
    std::size_t written, std::size_t planned, const std::string& next, const std::string& unit,
    std::uint64_t planned_bytes,
    const std::function<std::array<std::byte, header_bytes>(const Digest&)>& header) {
    payload_.wait();
    if (written != planned)
        throw ck::Error("only " + std::to_string(written) + " of " + std::to_string(planned) + " " +
                        unit + "s were written (next: " + next + ")");
    if (payload_.file().size() != planned_bytes)
        throw ck::Error("wrote " + std::to_string(payload_.file().size()) + " bytes, planned " +
                            std::to_string(planned_bytes),
                        bump_path_.string());
    const auto bytes = header(payload_.digest());
    payload_.file().write_at(0, bytes);
}

}  // namespace ckplugin::bump
