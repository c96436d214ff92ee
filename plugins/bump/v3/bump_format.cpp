#include "bump_format.hpp"

#include <boost/endian/conversion.hpp>

#include <cstring>

#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

// C-Kernel-Engine's dtype codes (the array index): the name bump.md gives each, the ggml type
// with the same bytes (none for INT8/INT4, the runtime's own layouts), and whether the runtime
// accepts the code for a weight.
struct DtypeRow {
    std::string_view name;
    std::optional<GgmlType> ggml;
    bool weight;
};
constexpr std::array<DtypeRow, 10> dtypes = {{{"FP32", GgmlType::f32, true},
                                              {"BF16", GgmlType::bf16, false},
                                              {"FP16", GgmlType::f16, false},
                                              {"INT8", std::nullopt, false},
                                              {"INT4", std::nullopt, false},
                                              {"Q4_0", GgmlType::q4_0, false},
                                              {"Q4_K", GgmlType::q4_k, true},
                                              {"Q6_K", GgmlType::q6_k, true},
                                              {"Q8_0", GgmlType::q8_0, false},
                                              {"Q8_K", GgmlType::q8_k, false}}};

template <class T>
void store(std::array<std::byte, header_bytes>& out, std::size_t offset, T v) {
    boost::endian::endian_store<T, sizeof(T), boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(out.data() + offset), v);
}

}  // namespace

std::string_view dtype_name(std::uint8_t code) noexcept {
    return code < dtypes.size() ? dtypes[code].name : std::string_view("unknown");
}

std::optional<std::uint32_t> ggml_type_of(std::uint8_t code) noexcept {
    if (code >= dtypes.size() || !dtypes[code].ggml) return std::nullopt;
    return static_cast<std::uint32_t>(*dtypes[code].ggml);
}

std::optional<std::uint8_t> weight_dtype_of(std::uint32_t ggml_type) noexcept {
    for (std::size_t code = 0; code < dtypes.size(); ++code)
        if (dtypes[code].weight && dtypes[code].ggml &&
            static_cast<std::uint32_t>(*dtypes[code].ggml) == ggml_type)
            return static_cast<std::uint8_t>(code);
    return std::nullopt;
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

bool has_magic(const unsigned char* head, std::size_t size, const char*) noexcept {
    // BUMPWGT3 or BUMPWGT4: the same reader takes both.
    return size >= magic.size() && (std::memcmp(head, magic.data(), magic.size()) == 0 ||
                                    std::memcmp(head, "BUMPWGT4", magic.size()) == 0);
}

}  // namespace ckplugin::bump
