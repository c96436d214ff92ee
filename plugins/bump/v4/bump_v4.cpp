#include "bump_v4.hpp"

#include <nlohmann/json.hpp>

#include "dtype_codes.hpp"

namespace ckplugin::bump::v4 {

std::array<std::byte, header_bytes> encode_header(const Header& h) {
    return encode_fixed_header(
        magic,
        {h.version, h.model_type, h.num_layers, h.vocab_size, h.embed_dim, h.intermediate,
         h.context_len, h.num_heads, h.num_kv_heads, h.head_dim},
        {h.aligned_embed_dim, h.aligned_head_dim, h.aligned_intermediate, h.aligned_context},
        h.checksum);
}

Header decode_header(std::span<const std::byte, header_bytes> bytes) {
    Header h;
    decode_fixed_header(
        bytes,
        {&h.version, &h.model_type, &h.num_layers, &h.vocab_size, &h.embed_dim, &h.intermediate,
         &h.context_len, &h.num_heads, &h.num_kv_heads, &h.head_dim},
        {&h.aligned_embed_dim, &h.aligned_head_dim, &h.aligned_intermediate, &h.aligned_context},
        h.checksum);
    return h;
}

std::string manifest_dtype(std::uint8_t code) {
    if (code == code_of(Dtype::q4_k)) return "q4_k";
    if (code == code_of(Dtype::q6_k)) return "q6_k";
    return "fp32";
}

std::string render_manifest(const Plan& plan, const std::string& weights_path) {
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const Entry& e : plan.entries)
        entries.push_back({{"name", e.name},
                           {"dtype", manifest_dtype(e.dtype)},
                           {"file_offset", e.file_offset},
                           {"size", e.size}});
    nlohmann::ordered_json doc = {{"format", std::string(manifest_format)},
                                  {"weights_path", weights_path},
                                  {"entries", std::move(entries)}};
    // ensure_ascii, as Python's json module writes by default.
    return doc.dump(2, ' ', true);
}

std::string render_map(const Plan& plan) {
    nlohmann::ordered_json weights = nlohmann::ordered_json::array();
    for (const Entry& e : plan.entries) weights.push_back({{"name", e.name}, {"dtype", e.dtype}});
    nlohmann::ordered_json doc = {{"model_type", plan.arch},
                                  {"num_layers", plan.header.num_layers},
                                  {"tie_word_embeddings", plan.tied},
                                  {"weights", std::move(weights)}};
    return doc.dump(2, ' ', true);
}

}  // namespace ckplugin::bump::v4
