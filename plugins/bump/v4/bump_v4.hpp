// bump v4 (docs/formats/bump-v4.md): C-Kernel-Engine's current weight file `BUMPWGT4` and the
// three JSON files beside it. The plan is made from descriptors only, so every refusal happens
// before a byte is written; it says, for each input tensor, how its rows become output rows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ck/model.hpp"
#include "config_json.hpp"
#include "fixed_header.hpp"

namespace ckplugin::bump::v4 {
using namespace ck;

inline constexpr std::string_view magic = v4_magic;
inline constexpr std::uint32_t version = 4;
inline constexpr std::size_t checksum_offset = checksum_offset_after(10, 4);
inline constexpr std::uint64_t table_offset = header_bytes;  // u32 N, then N dtype bytes
inline constexpr std::string_view manifest_format = "ck-bumpwgt4-manifest-v1";
static_assert(checksum_offset == 0x50);

// The fixed 128-byte header: 10 u32 fields from 0x08, 4 u64 fields from 0x30, the checksum,
// 16 zero bytes.
struct Header {
    std::uint32_t version = v4::version;
    std::uint32_t model_type = 1;
    std::uint32_t num_layers = 0;
    std::uint32_t vocab_size = 0;
    std::uint32_t embed_dim = 0;
    std::uint32_t intermediate = 0;
    std::uint32_t context_len = 0;
    std::uint32_t num_heads = 0;
    std::uint32_t num_kv_heads = 0;
    std::uint32_t head_dim = 0;
    std::uint64_t aligned_embed_dim = 0;
    std::uint64_t aligned_head_dim = 0;
    std::uint64_t aligned_intermediate = 0;
    std::uint64_t aligned_context = 0;
    Digest checksum{};
};

std::array<std::byte, header_bytes> encode_header(const Header& h);
Header decode_header(std::span<const std::byte, header_bytes> bytes);

// How one input tensor becomes bytes of its slot. Rows are taken in groups (heads for Q/K/V,
// the whole tensor otherwise): each group's `in_rows` source rows are followed by
// `out_rows - in_rows` zero rows, and each row of `in_cols` elements is followed by
// `out_cols - in_cols` zero elements. `dequantize` false: rows are copied block for block
// (in_cols == out_cols). `wo_per_head`: attn_output, written per head as
// [aligned E rows][aligned hd columns] blocks of the columns of that head.
struct Piece {
    std::size_t tensor = 0;  // header index
    bool dequantize = false;
    bool wo_per_head = false;
    std::uint64_t groups = 1;
    std::uint64_t in_rows = 0;
    std::uint64_t out_rows = 0;
    std::uint64_t in_cols = 0;
    std::uint64_t out_cols = 0;
    std::uint64_t head_dim = 0;          // wo_per_head only
    std::uint64_t aligned_head_dim = 0;  // wo_per_head only
    std::uint64_t out_bytes = 0;
};

struct Entry {
    std::string name;        // "token_emb", "layer.3.wq", "lm_head_weight"
    std::uint8_t dtype = 0;  // CKDataType code (dtype_codes.hpp)
    std::uint64_t file_offset = 0;
    std::uint64_t size = 0;
    std::vector<Piece> pieces;
};

struct Plan {
    Header header;  // checksum left zero
    std::string arch;
    bool tied = true;  // no output.weight
    std::vector<Entry> entries;
    std::vector<std::string> unused;  // input tensors v4 has no slot for
    Config config;
    std::uint64_t file_bytes = 0;
};

struct PlanOptions {
    std::optional<std::uint32_t> context;
};

// Throws ck::Error naming the tensor or key, with expected versus actual values
// (bump_v4_plan.cpp).
Plan plan(const ModelHeader& header, const PlanOptions& options);

// The files beside weights.bump, as the reference's Python json.dump(indent=2) writes them
// (no trailing newline).
std::string render_manifest(const Plan& plan, const std::string& weights_path);
std::string render_map(const Plan& plan);

// "fp32", "q4_k", "q6_k": the manifest's spelling of a dtype code.
std::string manifest_dtype(std::uint8_t code);

}  // namespace ckplugin::bump::v4
