#include "bump_v4.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "bump_format.hpp"
#include "bump_model.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/llama_keys.hpp"

namespace ckplugin::bump::v4 {
namespace {

using boost::endian::order;
using llama::tensor_subject;

constexpr std::uint64_t k_quant_block = 256;
// The reference aligns every size to 64-byte cache lines of F32: 16 elements.
constexpr std::uint64_t element_alignment = 16;

std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

bool is_k_quant(std::uint32_t type) {
    return type == id(GgmlType::q4_k) || type == id(GgmlType::q6_k);
}

// The types the reference dequantizes to F32 (BF16 as ggml's 30: deliberate difference 2).
bool is_dequantized_weight(std::uint32_t type) {
    return type == id(GgmlType::f32) || type == id(GgmlType::f16) || type == id(GgmlType::bf16) ||
           type == id(GgmlType::q8_0) || type == id(GgmlType::q5_0) || type == id(GgmlType::q5_1);
}

bool is_norm_type(std::uint32_t type) {
    return type == id(GgmlType::f32) || type == id(GgmlType::f16) || type == id(GgmlType::bf16);
}

// TensorIndex plus the v4 dtype rule.
class Tensors : public TensorIndex {
  public:
    explicit Tensors(const ModelHeader& header) : TensorIndex(header, "bump v4") {}

    // The CKDataType a weight is stored as: Q4_K/Q6_K as they are, the rest as FP32.
    std::uint8_t weight_dtype(std::size_t i) const {
        const TensorInfo& t = at(i);
        if (is_k_quant(t.type)) return *weight_dtype_of(t.type);
        if (is_dequantized_weight(t.type)) return static_cast<std::uint8_t>(Dtype::fp32);
        throw tensor_error(
            "dtype " + std::string(type_name(t.type)) +
                " cannot be stored in bump v4 (expected q4_K or q6_K, copied, or f32, "
                "f16, bf16, q8_0, q5_0, q5_1, dequantized to f32)",
            t.name);
    }
};

std::uint32_t checked_u32(std::int64_t v, const std::string& what, const std::string& subject) {
    if (v <= 0 || v > std::numeric_limits<std::uint32_t>::max())
        throw Error(what + " " + std::to_string(v) + " is out of range (expected 1 to 4294967295)",
                    {}, {}, subject);
    return static_cast<std::uint32_t>(v);
}

// Builds the entries in payload order and their byte sizes.
class Planner {
  public:
    Planner(Tensors& tensors, Plan& plan) : t_(tensors), p_(plan), h_(plan.header) {}

    // A K-quant weight is copied whole; everything else becomes padded F32 rows.
    Piece matrix(std::size_t i, std::uint64_t rows, std::uint64_t out_rows) {
        const TensorInfo& t = t_.at(i);
        const auto cols = static_cast<std::uint64_t>(t.ne[0]);
        Piece piece{.tensor = i, .in_rows = rows, .out_rows = out_rows, .in_cols = cols};
        if (is_k_quant(t.type)) {
            piece.out_cols = cols;
            piece.out_bytes = *row_bytes(t.type, cols) * out_rows;
        } else {
            piece.dequantize = true;
            piece.out_cols = align_up(cols, element_alignment);  // E or F, aligned
            piece.out_bytes = out_rows * piece.out_cols * 4;
        }
        return piece;
    }

    // Q/K/V: per head, hd rows then aligned-hd minus hd zero rows (K-quant rows copied too).
    Piece heads(std::size_t i, std::uint64_t groups, std::uint64_t rows_per_group) {
        Piece piece = matrix(i, rows_per_group, h_.aligned_head_dim);
        piece.groups = groups;
        piece.out_bytes *= groups;
        return piece;
    }

    void add(std::string name, std::uint8_t dtype, std::vector<Piece> pieces) {
        Entry e{std::move(name), dtype, 0, 0, std::move(pieces)};
        for (const Piece& piece : e.pieces) e.size += piece.out_bytes;
        p_.entries.push_back(std::move(e));
    }

    void norm(std::size_t i, const std::string& slot) {
        t_.expect_shape(i, {std::int64_t(h_.embed_dim)},
                        "[E] with E=" + std::to_string(h_.embed_dim));
        const TensorInfo& t = t_.at(i);
        if (!is_norm_type(t.type))
            throw tensor_error(
                "dtype " + std::string(type_name(t.type)) +
                    " cannot be stored in an FP32 norm slot (expected f32, f16 or bf16)",
                t.name);
        add(slot, static_cast<std::uint8_t>(Dtype::fp32),
            {Piece{.tensor = i,
                   .dequantize = true,
                   .in_rows = 1,
                   .out_rows = 1,
                   .in_cols = h_.embed_dim,
                   .out_cols = h_.aligned_embed_dim,
                   .out_bytes = h_.aligned_embed_dim * 4}});
    }

  private:
    Tensors& t_;
    Plan& p_;
    const Header& h_;
};

}  // namespace

std::array<std::byte, header_bytes> encode_header(const Header& h) {
    std::array<std::byte, header_bytes> out{};
    auto* p = reinterpret_cast<unsigned char*>(out.data());
    std::memcpy(p, magic.data(), magic.size());
    std::size_t at = 8;
    for (std::uint32_t v :
         {h.version, h.model_type, h.num_layers, h.vocab_size, h.embed_dim, h.intermediate,
          h.context_len, h.num_heads, h.num_kv_heads, h.head_dim}) {
        boost::endian::endian_store<std::uint32_t, 4, order::little>(p + at, v);
        at += 4;
    }
    for (std::uint64_t v :
         {h.aligned_embed_dim, h.aligned_head_dim, h.aligned_intermediate, h.aligned_context}) {
        boost::endian::endian_store<std::uint64_t, 8, order::little>(p + at, v);
        at += 8;
    }
    std::memcpy(p + checksum_offset, h.checksum.data(), h.checksum.size());
    return out;
}

Header decode_header(std::span<const std::byte, header_bytes> bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    Header h;
    std::size_t at = 8;
    for (std::uint32_t* v :
         {&h.version, &h.model_type, &h.num_layers, &h.vocab_size, &h.embed_dim, &h.intermediate,
          &h.context_len, &h.num_heads, &h.num_kv_heads, &h.head_dim}) {
        *v = boost::endian::endian_load<std::uint32_t, 4, order::little>(p + at);
        at += 4;
    }
    for (std::uint64_t* v :
         {&h.aligned_embed_dim, &h.aligned_head_dim, &h.aligned_intermediate, &h.aligned_context}) {
        *v = boost::endian::endian_load<std::uint64_t, 8, order::little>(p + at);
        at += 8;
    }
    std::memcpy(h.checksum.data(), p + checksum_offset, h.checksum.size());
    return h;
}

std::string manifest_dtype(std::uint8_t code) {
    if (code == static_cast<std::uint8_t>(Dtype::q4_k)) return "q4_k";
    if (code == static_cast<std::uint8_t>(Dtype::q6_k)) return "q6_k";
    return "fp32";
}

Plan plan(const ModelHeader& header, const PlanOptions& options) {
    const llama::ArchKeys keys(header.metadata);
    const llama::HeadGeometry heads = llama::head_geometry(header, keys);
    Tensors tensors(header);
    Plan p;
    Header& h = p.header;
    p.arch = keys.arch();
    std::transform(p.arch.begin(), p.arch.end(), p.arch.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });

    const std::size_t tok = tensors.require(std::string(llama::token_embd_name));
    const TensorInfo& embd = tensors.at(tok);
    if (embd.ne.size() != 2)
        throw tensor_error("shape " + embd.shape_string() + ", expected [E, V] (2 dimensions)",
                           embd.name);
    h.embed_dim = heads.embed;
    h.num_heads = heads.heads;
    h.num_kv_heads = heads.kv_heads;
    h.head_dim = heads.head_dim;
    h.vocab_size = checked_u32(embd.ne[1], "vocab size (ne1)", tensor_subject(embd.name));

    // Layers, intermediate size and context, with the fallbacks v3 uses.
    Geometry g;
    g.embed = h.embed_dim;
    g.heads = h.num_heads;
    g.kv_heads = h.num_kv_heads;
    g.head_dim = h.head_dim;
    g.vocab = h.vocab_size;
    if (auto n = keys.u32("block_count")) {
        h.num_layers = *n;
    } else {
        std::set<std::string> layers;
        for (const auto& t : header.tensors)
            if (t.name.starts_with("blk.") && t.name.ends_with(".attn_norm.weight"))
                layers.insert(t.name);
        h.num_layers = static_cast<std::uint32_t>(layers.size());
    }
    if (auto ffn = keys.u32("feed_forward_length")) {
        h.intermediate = *ffn;
    } else {
        const TensorInfo& gate = tensors.at(tensors.require("blk.0.ffn_gate.weight"));
        if (gate.ne.size() != 2)
            throw tensor_error("shape " + gate.shape_string() + ", expected [E, F] (2 dimensions)",
                               gate.name);
        h.intermediate =
            checked_u32(gate.ne[1], "feed_forward_length (ne1)", tensor_subject(gate.name));
    }
    if (options.context) {
        h.context_len = *options.context;
    } else {
        auto context = keys.u32("context_length");
        if (!context || *context == 0)
            throw key_error(std::string(context ? "context length 0" : "required key is missing") +
                                " (give the context length with bump[version=4,context=N])",
                            keys.key("context_length"));
        h.context_len = *context;
    }
    g.layers = h.num_layers;
    g.ffn = h.intermediate;
    g.context = h.context_len;

    h.aligned_embed_dim = align_up(h.embed_dim, element_alignment);
    h.aligned_head_dim = align_up(h.head_dim, element_alignment);
    h.aligned_intermediate = align_up(h.intermediate, element_alignment);
    h.aligned_context = align_up(h.context_len, element_alignment);

    // headpack already padded Q/K/V: the same rows v4 would write, if to the same size.
    std::uint64_t qkv_head_rows = h.head_dim;
    if (const Value* v = header.metadata.find(llama::aligned_head_dim_key)) {
        const std::string subject = key_subject(llama::aligned_head_dim_key);
        if (v->type() != ValueType::u32)
            throw Error("expected a u32, got " + v->to_display(), {}, {}, subject);
        if (v->raw() != h.aligned_head_dim)
            throw Error("headpack padded the heads to " + std::to_string(v->raw()) +
                            " elements, but bump v4 pads them itself to " +
                            std::to_string(h.aligned_head_dim) +
                            " (64-byte aligned); drop the headpack stage, or use "
                            "headpack[align=64]",
                        {}, {}, subject);
        qkv_head_rows = h.aligned_head_dim;
    }

    const auto E = std::int64_t(h.embed_dim), F = std::int64_t(h.intermediate);
    const std::string dims = "E=" + std::to_string(E) + ", H=" + std::to_string(h.num_heads) +
                             ", Hkv=" + std::to_string(h.num_kv_heads) +
                             ", hd=" + std::to_string(h.head_dim) + ", F=" + std::to_string(F);

    // v4 has no bias slot; the reference drops biases silently (deliberate difference 3).
    for (const auto& t : header.tensors)
        if (t.name.starts_with("blk.") && t.name.ends_with(".bias"))
            throw tensor_error(
                "bump v4 has no bias slot and this bias cannot be dropped without changing "
                "the model's output (the reference converter drops it silently); use bump v3 "
                "(bump[version=3]) for models with biases",
                t.name);

    Planner planner(tensors, p);
    bool quant_embed = false, quant_intermediate = false;

    tensors.expect_shape(tok, {E, embd.ne[1]}, "[E, V] with E=" + std::to_string(E));
    const std::uint8_t tok_dt = tensors.weight_dtype(tok);
    quant_embed |= is_k_quant(embd.type);
    planner.add("token_emb", tok_dt, {planner.matrix(tok, h.vocab_size, h.vocab_size)});

    const std::size_t output_norm = tensors.require("output_norm.weight");
    for (std::uint32_t layer = 0; layer < h.num_layers; ++layer) {
        const std::string blk = "blk." + std::to_string(layer) + ".";
        const std::string slot = "layer." + std::to_string(layer) + ".";
        const std::size_t attn_norm = tensors.require(blk + "attn_norm.weight");
        const std::size_t ffn_norm = tensors.require(blk + "ffn_norm.weight");
        const std::size_t q = tensors.require(blk + "attn_q.weight");
        const std::size_t k = tensors.require(blk + "attn_k.weight");
        const std::size_t v = tensors.require(blk + "attn_v.weight");
        const std::size_t o = tensors.require(blk + "attn_output.weight");
        const std::size_t gate = tensors.require(blk + "ffn_gate.weight");
        const std::size_t up = tensors.require(blk + "ffn_up.weight");
        const std::size_t down = tensors.require(blk + "ffn_down.weight");

        const auto q_rows = std::int64_t(h.num_heads * qkv_head_rows);
        const auto kv_rows = std::int64_t(h.num_kv_heads * qkv_head_rows);
        tensors.expect_shape(q, {E, q_rows}, "[E, H*hd] with " + dims);
        tensors.expect_shape(k, {E, kv_rows}, "[E, Hkv*hd] with " + dims);
        tensors.expect_shape(v, {E, kv_rows}, "[E, Hkv*hd] with " + dims);
        tensors.expect_shape(o, {E, E}, "[E, E] with " + dims);
        tensors.expect_shape(gate, {E, F}, "[E, F] with " + dims);
        tensors.expect_shape(up, {E, F}, "[E, F] with " + dims);
        tensors.expect_shape(down, {F, E}, "[F, E] with " + dims);

        const std::uint8_t gate_dt = tensors.weight_dtype(gate);
        if (tensors.weight_dtype(up) != gate_dt)
            throw tensor_error("dtype " + std::string(type_name(tensors.at(up).type)) + ", but " +
                                   tensors.at(gate).name + " is " +
                                   std::string(type_name(tensors.at(gate).type)) +
                                   " (bump v4's w1 holds the gate rows and then the up rows in one "
                                   "dtype)",
                               tensors.at(up).name);
        for (std::size_t i : {q, k, v, o, gate, up}) quant_embed |= is_k_quant(tensors.at(i).type);
        quant_intermediate |= is_k_quant(tensors.at(down).type);

        planner.norm(attn_norm, slot + "ln1_gamma");
        planner.add(slot + "wq", tensors.weight_dtype(q),
                    {planner.heads(q, h.num_heads, qkv_head_rows)});
        planner.add(slot + "wk", tensors.weight_dtype(k),
                    {planner.heads(k, h.num_kv_heads, qkv_head_rows)});
        planner.add(slot + "wv", tensors.weight_dtype(v),
                    {planner.heads(v, h.num_kv_heads, qkv_head_rows)});
        Piece wo = planner.matrix(o, h.embed_dim, h.embed_dim);
        if (wo.dequantize) {
            wo.wo_per_head = true;
            wo.groups = h.num_heads;
            wo.out_rows = h.aligned_embed_dim;
            wo.head_dim = h.head_dim;
            wo.aligned_head_dim = h.aligned_head_dim;
            wo.out_bytes = h.num_heads * h.aligned_embed_dim * h.aligned_head_dim * 4;
        }
        planner.add(slot + "wo", tensors.weight_dtype(o), {wo});
        planner.norm(ffn_norm, slot + "ln2_gamma");
        planner.add(slot + "w1", gate_dt,
                    {planner.matrix(gate, h.intermediate,
                                    is_k_quant(tensors.at(gate).type) ? h.intermediate
                                                                      : h.aligned_intermediate),
                     planner.matrix(up, h.intermediate,
                                    is_k_quant(tensors.at(up).type) ? h.intermediate
                                                                    : h.aligned_intermediate)});
        planner.add(slot + "w2", tensors.weight_dtype(down),
                    {planner.matrix(
                        down, h.embed_dim,
                        is_k_quant(tensors.at(down).type) ? h.embed_dim : h.aligned_embed_dim)});
    }
    planner.norm(output_norm, "final_ln_weight");

    // An untied LM head has its own slot in v4.
    if (auto out = tensors.find("output.weight")) {
        p.tied = false;
        tensors.expect_shape(*out, {E, std::int64_t(h.vocab_size)},
                             "[E, V] like token_embd.weight");
        quant_embed |= is_k_quant(tensors.at(*out).type);
        planner.add("lm_head_weight", tensors.weight_dtype(*out),
                    {planner.matrix(*out, h.vocab_size, h.vocab_size)});
    }

    // A K-quant row cannot be padded inside, so the sizes it spans must be whole blocks.
    auto check_blocks = [&](bool quantized, std::uint64_t n, const char* what) {
        if (!quantized || n % k_quant_block == 0) return;
        for (const Entry& e : p.entries)
            for (const Piece& piece : e.pieces)
                if (is_k_quant(tensors.at(piece.tensor).type) &&
                    std::uint64_t(tensors.at(piece.tensor).ne[0]) == n)
                    throw tensor_error(
                        "dtype " + std::string(type_name(tensors.at(piece.tensor).type)) +
                            " needs " + what + " " + std::to_string(n) +
                            " to be a multiple of 256 (K-quant rows cannot be padded); "
                            "dequantize with a `dequant[to=f32]` stage",
                        tensors.at(piece.tensor).name);
        throw Error(std::string("K-quant weights need ") + what + " " + std::to_string(n) +
                    " to be a multiple of 256");
    };
    check_blocks(quant_embed, h.embed_dim, "embedding_length E");
    check_blocks(quant_intermediate, h.intermediate, "feed_forward_length F");

    // Offsets: header, u32 count, dtype table, then the entries back to back.
    std::uint64_t offset = header_bytes + 4 + p.entries.size();
    for (Entry& e : p.entries) {
        e.file_offset = offset;
        offset += e.size;
    }
    p.file_bytes = offset;
    for (std::size_t i = 0; i < header.tensors.size(); ++i)
        if (!tensors.used(i)) p.unused.push_back(header.tensors[i].name);

    p.config = make_config(keys, g);
    p.config.model_type = p.arch;
    p.config.tie_word_embeddings = p.tied;
    return p;
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
