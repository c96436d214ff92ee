#include "bump_format.hpp"

namespace ckplugin::bump {

std::array<std::byte, header_bytes> encode_header(const Header& h) {
    return encode_fixed_header(magic,
                               {h.version, h.model_type, h.num_layers, h.vocab_size, h.embed_dim,
                                h.context_len, h.num_heads, h.head_dim},
                               {h.aligned_embed_dim, h.aligned_head_dim, h.aligned_context},
                               h.checksum, h.reserved);
}

Header decode_header(std::span<const std::byte, header_bytes> bytes) {
    Header h;
    decode_fixed_header(bytes,
                        {&h.version, &h.model_type, &h.num_layers, &h.vocab_size, &h.embed_dim,
                         &h.context_len, &h.num_heads, &h.head_dim},
                        {&h.aligned_embed_dim, &h.aligned_head_dim, &h.aligned_context}, h.checksum,
                        h.reserved);
    return h;
}

}  // namespace ckplugin::bump
