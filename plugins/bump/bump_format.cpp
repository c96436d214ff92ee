#include "bump_format.hpp"

#include <boost/endian/conversion.hpp>

#include <cstring>

#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr std::array<std::string_view, 10> dtype_names = {"FP32", "BF16", "FP16", "INT8", "INT4",
                                                          "Q4_0", "Q4_K", "Q6_K", "Q8_0", "Q8_K"};

template <class T>
void store(std::array<std::byte, header_bytes>& out, std::size_t offset, T v) {
    boost::endian::endian_store<T, sizeof(T), boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(out.data() + offset), v);
}

}  // namespace

std::string_view dtype_name(std::uint8_t code) noexcept {
    return code < dtype_names.size() ? dtype_names[code] : std::string_view("unknown");
}

std::optional<std::uint32_t> ggml_type_of(std::uint8_t code) noexcept {
    auto id = [](GgmlType t) { return static_cast<std::uint32_t>(t); };
    switch (static_cast<Dtype>(code)) {
        case Dtype::fp32:
            return id(GgmlType::f32);
        case Dtype::bf16:
            return id(GgmlType::bf16);
        case Dtype::fp16:
            return id(GgmlType::f16);
        case Dtype::q4_0:
            return id(GgmlType::q4_0);
        case Dtype::q4_k:
            return id(GgmlType::q4_k);
        case Dtype::q6_k:
            return id(GgmlType::q6_k);
        case Dtype::q8_0:
            return id(GgmlType::q8_0);
        case Dtype::q8_k:
            return id(GgmlType::q8_k);
        default:
            return std::nullopt;  // INT8, INT4: C-Kernel-Engine's own layouts
    }
}

std::optional<std::uint8_t> weight_dtype_of(std::uint32_t ggml_type) noexcept {
    switch (static_cast<GgmlType>(ggml_type)) {
        case GgmlType::f32:
            return static_cast<std::uint8_t>(Dtype::fp32);
        case GgmlType::q4_k:
            return static_cast<std::uint8_t>(Dtype::q4_k);
        case GgmlType::q6_k:
            return static_cast<std::uint8_t>(Dtype::q6_k);
        default:
            return std::nullopt;
    }
}

std::array<std::byte, header_bytes> encode_header(const Header& h) {
    std::array<std::byte, header_bytes> out{};
    std::memcpy(out.data(), magic.data(), magic.size());
    store<std::uint32_t>(out, 0x08, h.version);
    store<std::uint32_t>(out, 0x0C, h.model_type);
    store<std::uint32_t>(out, 0x10, h.num_layers);
    store<std::uint32_t>(out, 0x14, h.vocab_size);
    store<std::uint32_t>(out, 0x18, h.embed_dim);
    store<std::uint32_t>(out, 0x1C, h.context_len);
    store<std::uint32_t>(out, 0x20, h.num_heads);
    store<std::uint32_t>(out, 0x24, h.head_dim);
    store<std::uint64_t>(out, 0x28, h.aligned_embed_dim);
    store<std::uint64_t>(out, 0x30, h.aligned_head_dim);
    store<std::uint64_t>(out, 0x38, h.aligned_context);
    std::memcpy(out.data() + checksum_offset, h.checksum.data(), h.checksum.size());
    std::memcpy(out.data() + reserved_offset, h.reserved.data(), h.reserved.size());
    return out;
}

Header decode_header(std::span<const std::byte, header_bytes> bytes) {
    // The fields follow each other without padding, in the order of encode_header's offsets.
    support::ByteCursor in(bytes, {});
    auto copy = [&](auto& field) {
        std::memcpy(field.data(), in.bytes(field.size(), "the header").data(), field.size());
    };
    in.skip(magic.size(), "the header");
    Header h;
    h.version = in.read<std::uint32_t>("the header");            // 0x08
    h.model_type = in.read<std::uint32_t>("the header");         // 0x0C
    h.num_layers = in.read<std::uint32_t>("the header");         // 0x10
    h.vocab_size = in.read<std::uint32_t>("the header");         // 0x14
    h.embed_dim = in.read<std::uint32_t>("the header");          // 0x18
    h.context_len = in.read<std::uint32_t>("the header");        // 0x1C
    h.num_heads = in.read<std::uint32_t>("the header");          // 0x20
    h.head_dim = in.read<std::uint32_t>("the header");           // 0x24
    h.aligned_embed_dim = in.read<std::uint64_t>("the header");  // 0x28
    h.aligned_head_dim = in.read<std::uint64_t>("the header");   // 0x30
    h.aligned_context = in.read<std::uint64_t>("the header");    // 0x38
    copy(h.checksum);                                            // checksum_offset
    copy(h.reserved);                                            // reserved_offset
    return h;
}

bool has_magic(const unsigned char* head, std::size_t size) noexcept {
    return size >= magic.size() && std::memcmp(head, magic.data(), magic.size()) == 0;
}

}  // namespace ckplugin::bump
