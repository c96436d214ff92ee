// What both bump writers read from a llama-family model header before they plan: its tensors by
// name, its geometry (one reader for both versions: the heads, V, L, F and the context, with
// the fallbacks bump.md lists), the head size a headpack stage padded to, config.json's values,
// and the type rules both versions decide by. Descriptors only: no tensor byte is read.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ck/llama/llama_keys.hpp"
#include "ck/model.hpp"
#include "config_json.hpp"

namespace ckplugin::bump {
using namespace ck;

inline constexpr std::uint64_t k_quant_block = 256;

// Q4_K and Q6_K: the K-quants both versions copy block for block.
bool is_k_quant(std::uint32_t type) noexcept;
// F32, F16 and BF16: what a norm may be (stored as FP32, widened exactly).
bool is_float_type(std::uint32_t type) noexcept;
std::string type_string(std::uint32_t type);

struct Geometry : llama::HeadGeometry {  // E, H, Hkv, hd
    std::uint32_t layers = 0;            // L
    std::uint32_t vocab = 0;             // V
    std::uint32_t context = 0;           // C
    std::uint32_t aligned_head_dim = 0;  // hd_a (hd unless headpack ran; v3 only)
    std::uint32_t ffn = 0;               // F
};

// The sizes a bump header records, from the geometry: both versions record L, V, E, C, H and
// hd; v4 also F and Hkv. The aligned sizes are each version's own.
template <class Header>
void set_header_sizes(Header& h, const Geometry& g) {
    h.num_layers = g.layers;
    h.vocab_size = g.vocab;
    h.embed_dim = g.embed;
    h.context_len = g.context;
    h.num_heads = g.heads;
    h.head_dim = g.head_dim;
    if constexpr (requires { h.num_kv_heads; }) {
        h.num_kv_heads = g.kv_heads;
        h.intermediate = g.ffn;
    }
}

// Looks tensors up by name, remembering which ones were used, and checks their shapes; errors
// name the tensor. `version` ("bump v3") is said in the missing-tensor message.
class TensorIndex {
  public:
    TensorIndex(const ModelHeader& header, std::string version);
    std::optional<std::size_t> find(const std::string& name);
    std::size_t require(const std::string& name);
    // `formula` explains the expected shape, e.g. "[E, Hkv*hd] with E=256, Hkv=2, hd=64".
    void expect_shape(std::size_t index, const std::vector<std::int64_t>& expected,
                      const std::string& formula) const;
    const TensorInfo& at(std::size_t index) const { return header_.tensors[index]; }
    bool used(std::size_t index) const { return used_.count(index) != 0; }
    // The input tensors no lookup asked for, in header order.
    std::vector<std::string> unused() const;

  private:
    const ModelHeader& header_;
    std::string version_;
    std::unordered_map<std::string, std::size_t> index_;
    std::set<std::size_t> used_;
};

// A count from the model (ne1 of a tensor) as a u32 header field; ck::Error naming `subject`.
std::uint32_t checked_u32(std::int64_t v, const std::string& what, std::string_view tensor);

struct GeometryOptions {
    std::optional<std::uint32_t> context;  // the writer option context=N
    // The writer stage as the user spells it with context=N, for the advice: "bump[context=N]".
    std::string context_stage;
};

// The geometry both versions share: E, H, Hkv and hd (llama::head_geometry), V (token_embd's
// ne1), L (block_count, else the number of blk.N.attn_norm.weight), F (feed_forward_length,
// else blk.0.ffn_gate's ne1) and the context (context=N, else context_length); aligned_head_dim
// is hd. ck::Error naming the tensor or key, with expected versus actual values.
Geometry read_geometry(const ModelHeader& header, TensorIndex& tensors,
                       const GeometryOptions& options);

// The padded head size a headpack stage before the writer left in its planned header
// (ckhost.headpack.aligned_head_dim), if one ran; ck::Error naming the key when not a u32.
std::optional<std::uint32_t> headpack_head_dim(const ModelHeader& header);

// config.json's values from the metadata and the geometry: rms_norm_eps from
// <arch>.attention.layer_norm_rms_epsilon (deliberate difference 1), then the legacy key.
Config make_config(const llama::ArchKeys& keys, const Geometry& g);

}  // namespace ckplugin::bump
