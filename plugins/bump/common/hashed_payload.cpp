#include "hashed_payload.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <limits>

#include "ck/error.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/support/destination.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
namespace {

// In .bss: reading it maps the kernel's shared zero page, so it costs no resident memory.
std::byte zero_bytes[1u << 20];

}  // namespace

std::optional<std::uint32_t> context_option(const ck::Options& options) {
    if (!options.has("context")) return std::nullopt;
    const std::uint64_t n = options.get_u64("context", 0);
    if (n == 0 || n > std::numeric_limits<std::uint32_t>::max())
        throw ck::usage_error("option context=" + options.get("context") +
                              ": expected a context length from 1 to 4294967295");
    return static_cast<std::uint32_t>(n);
}

fs::path bump_file_path(const fs::path& destination, bool& new_directory) {
    new_directory = ck::support::is_new_directory_destination(destination, ".bump");
    return new_directory || ck::support::is_directory_destination(destination)
               ? destination / "weights.bump"
               : destination;
}

std::vector<std::byte> dtype_table_bytes(std::span<const std::uint8_t> codes) {
    std::vector<std::byte> bytes(4 + codes.size());
    boost::endian::endian_store<std::uint32_t, 4, boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(bytes.data()), static_cast<std::uint32_t>(codes.size()));
    std::transform(codes.begin(), codes.end(), bytes.begin() + 4,
                   [](std::uint8_t c) { return std::byte{c}; });
    return bytes;
}

void warn_unwritten(ck::Context& context, const std::vector<std::string>& names,
                    std::string_view format) {
    if (names.empty()) return;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    context.warn("bump: " + std::to_string(names.size()) + " tensor(s) have no slot in " +
                 std::string(format) + " and are not written: " + list);
}

void refuse_rope_scaling(const ck::ModelHeader& header, std::string_view format) {
    const std::string runtime =
        "C-Kernel-Engine's " + std::string(format) +
        " runtime computes RoPE from config.json's rope_theta alone, so the model would run with "
        "the wrong positions; nothing was written";
    for (const std::string_view name : ck::llama::rope_factor_tensor_names)
        if (header.find_tensor(name))
            throw ck::tensor_error(
                "per-frequency RoPE factors (Llama 3.1's rope_type llama3, Phi-3's "
                "longrope) have no place in bump: " +
                    runtime,
                name, header.source);
    const ck::llama::ArchKeys keys(header.metadata);
    if (const auto scaling = ck::llama::rope_scaling(keys))
        throw ck::key_error("RoPE scaling (" + scaling->type + ", factor " +
                                ck::Value::of_f64(scaling->factor.value).to_display() +
                                ") cannot be carried into bump: " + runtime,
                            scaling->factor_key, header.source);
}

void HashedPayload::start(ck::OutputFile& file, std::size_t header_bytes,
                          std::span<const std::byte> dtype_table) {
    file_ = &file;
    hasher_ = std::make_unique<BackgroundSha256>();
    file_->write_zeros(header_bytes);
    emit(dtype_table);
    hasher_->wait();  // the caller's table may go
}

void HashedPayload::emit(std::span<const std::byte> bytes) {
    hasher_->update(bytes);
    file_->write(bytes);
}

void HashedPayload::emit_zeros(std::uint64_t count) {
    while (count > 0) {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count, sizeof zero_bytes));
        emit(std::span<const std::byte>(zero_bytes, n));
        count -= n;
    }
}

}  // namespace ckplugin::bump
