// v4::plan, step by step: the header from the geometry both versions read, what a headpack
// stage already did, the refusals that concern the whole model, then the entries in payload
// order (each tensor checked as it is placed), the K-quant rule and the offsets.
#include <algorithm>
#include <cctype>

#include "bump_v4.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/llama_keys.hpp"
#include "dtype_codes.hpp"
#include "input_model.hpp"

namespace ckplugin::bump::v4 {
namespace {

// The reference aligns every size to 64-byte cache lines of F32: 16 elements.
constexpr std::uint64_t element_alignment = 16;

// The types the reference dequantizes to F32 (BF16 as ggml's 30: deliberate difference 2).
bool is_dequantized_weight(std::uint32_t type) {
    return is_float_type(type) || type == static_cast<std::uint32_t>(GgmlType::q8_0) ||
           type == static_cast<std::uint32_t>(GgmlType::q5_0) ||
           type == static_cast<std::uint32_t>(GgmlType::q5_1);
}

// TensorIndex plus the v4 dtype rule.
class Tensors : public TensorIndex {
  public:
    explicit Tensors(const ModelHeader& header) : TensorIndex(header, "bump v4") {}

    // The CKDataType a weight is stored as: Q4_K/Q6_K as they are, the rest as FP32.
    std::uint8_t weight_dtype(std::size_t i) const {
        const TensorInfo& t = at(i);
        if (is_k_quant(t.type)) return *weight_dtype_of(t.type);
        if (is_dequantized_weight(t.type)) return code_of(Dtype::fp32);
        throw tensor_error(
            "dtype " + type_string(t.type) +
                " cannot be stored in bump v4 (expected q4_K or q6_K, copied, or f32, "
                "f16, bf16, q8_0, q5_0, q5_1, dequantized to f32); add a `dequant[to=f32]` "
                "stage before bump",
            t.name);
    }
};

// The header's sizes: the model's, and each aligned to 16 elements.
Header header_of(const Geometry& g) {
    Header h;
    set_header_sizes(h, g);
    h.aligned_embed_dim = align_up(h.embed_dim, element_alignment);
    h.aligned_head_dim = align_up(h.head_dim, element_alignment);
    h.aligned_intermediate = align_up(h.intermediate, element_alignment);
    h.aligned_context = align_up(h.context_len, element_alignment);
    return h;
}

// The rows per head of Q/K/V as they arrive: headpack already padded them, to the same size v4
// pads to or refused.
std::uint64_t qkv_head_rows(const ModelHeader& header, const Header& h) {
    const auto padded = headpack_head_dim(header);
    if (!padded) return h.head_dim;
    if (*padded != h.aligned_head_dim)
        throw Error("headpack padded the heads to " + std::to_string(*padded) +
                        " elements, but bump v4 pads them itself to " +
                        std::to_string(h.aligned_head_dim) +
                        " (64-byte aligned); drop the headpack stage, or use headpack[align=64]",
                    {}, {}, key_subject(llama::aligned_head_dim_key));
    return h.aligned_head_dim;
}

// v4 has no bias slot; the reference drops biases silently (deliberate difference 3).
void refuse_biases(const ModelHeader& header) {
    for (const auto& t : header.tensors)
        if (t.name.starts_with("blk.") && t.name.ends_with(".bias"))
            throw tensor_error(
                "bump v4 has no bias slot and this bias cannot be dropped without changing "
                "the model's output (the reference converter drops it silently); use bump v3 "
                "(bump[version=3]) for models with biases",
                t.name);
}

// Builds the entries in payload order and their byte sizes, checking each tensor as it goes.
class Planner {
  public:
    Planner(Tensors& tensors, Plan& plan, std::uint64_t qkv_head_rows)
        : t_(tensors),
          p_(plan),
          h_(plan.header),
          qkv_head_rows_(qkv_head_rows),
          E_(h_.embed_dim),
          F_(h_.intermediate),
          dims_("E=" + std::to_string(E_) + ", H=" + std::to_string(h_.num_heads) +
                ", Hkv=" + std::to_string(h_.num_kv_heads) + ", hd=" + std::to_string(h_.head_dim) +
                ", F=" + std::to_string(F_)) {}

    void token_embedding(std::size_t tok) {
        t_.expect_shape(tok, {E_, t_.at(tok).ne[1]}, "[E, V] with E=" + std::to_string(E_));
        const std::uint8_t dtype = t_.weight_dtype(tok);
        quant_embed_ |= is_k_quant(t_.at(tok).type);
        add("token_emb", dtype, {matrix(tok, h_.vocab_size, h_.vocab_size)});
    }

    void layer(std::uint32_t layer);

    void final_norm(std::size_t output_norm) { norm(output_norm, "final_ln_weight"); }

    // An untied LM head has its own slot in v4.
    void lm_head() {
        const auto out = t_.find("output.weight");
        if (!out) return;
        p_.tied = false;
        t_.expect_shape(*out, {E_, std::int64_t(h_.vocab_size)}, "[E, V] like token_embd.weight");
        quant_embed_ |= is_k_quant(t_.at(*out).type);
        add("lm_head_weight", t_.weight_dtype(*out), {matrix(*out, h_.vocab_size, h_.vocab_size)});
    }

    // A K-quant row cannot be padded inside, so the sizes it spans must be whole blocks.
    void check_k_quant_blocks() const {
        check_blocks(quant_embed_, h_.embed_dim, "embedding_length E");
        check_blocks(quant_intermediate_, h_.intermediate, "feed_forward_length F");
    }

  private:
    void check_blocks(bool quantized, std::uint64_t n, const char* what) const;

    // A K-quant weight is copied whole; everything else becomes padded F32 rows.
    Piece matrix(std::size_t i, std::uint64_t rows, std::uint64_t out_rows) const {
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

    // `rows` rows, padded to `aligned_rows` unless they are K-quant rows (copied as they are).
    Piece rows_of(std::size_t i, std::uint64_t rows, std::uint64_t aligned_rows) const {
        return matrix(i, rows, is_k_quant(t_.at(i).type) ? rows : aligned_rows);
    }

    // Q/K/V: per head, hd rows then aligned-hd minus hd zero rows (K-quant rows copied too).
    Piece heads(std::size_t i, std::uint64_t groups) const {
        Piece piece = matrix(i, qkv_head_rows_, h_.aligned_head_dim);
        piece.groups = groups;
        piece.out_bytes *= groups;
        return piece;
    }

    // attn_output: in F32, per head as [aligned E rows][aligned hd columns].
    Piece attn_output(std::size_t o) const {
        Piece wo = matrix(o, h_.embed_dim, h_.embed_dim);
        if (!wo.dequantize) return wo;
        wo.wo_per_head = true;
        wo.groups = h_.num_heads;
        wo.out_rows = h_.aligned_embed_dim;
        wo.head_dim = h_.head_dim;
        wo.aligned_head_dim = h_.aligned_head_dim;
        wo.out_bytes = h_.num_heads * h_.aligned_embed_dim * h_.aligned_head_dim * 4;
        return wo;
    }

    void add(std::string name, std::uint8_t dtype, std::vector<Piece> pieces) {
        Entry e{std::move(name), dtype, 0, 0, std::move(pieces)};
        for (const Piece& piece : e.pieces) e.size += piece.out_bytes;
        p_.entries.push_back(std::move(e));
    }

    void norm(std::size_t i, const std::string& slot) {
        t_.expect_shape(i, {E_}, "[E] with E=" + std::to_string(h_.embed_dim));
        const TensorInfo& t = t_.at(i);
        if (!is_float_type(t.type))
            throw tensor_error(
                "dtype " + type_string(t.type) +
                    " cannot be stored in an FP32 norm slot (expected f32, f16 or bf16)",
                t.name);
        add(slot, code_of(Dtype::fp32),
            {Piece{.tensor = i,
                   .dequantize = true,
                   .in_rows = 1,
                   .out_rows = 1,
                   .in_cols = h_.embed_dim,
                   .out_cols = h_.aligned_embed_dim,
                   .out_bytes = h_.aligned_embed_dim * 4}});
    }

    Tensors& t_;
    Plan& p_;
    const Header& h_;
    const std::uint64_t qkv_head_rows_;
    const std::int64_t E_, F_;
    const std::string dims_;
    bool quant_embed_ = false;         // a K-quant weight whose rows are E long
    bool quant_intermediate_ = false;  // a K-quant ffn_down, whose rows are F long
};

// The eight entries of one layer; every tensor of the layer is looked up first, so a missing
// one is named before any shape.
void Planner::layer(std::uint32_t layer) {
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const std::string slot = "layer." + std::to_string(layer) + ".";
    const std::size_t attn_norm = t_.require(blk + "attn_norm.weight");
    const std::size_t ffn_norm = t_.require(blk + "ffn_norm.weight");
    const std::size_t q = t_.require(blk + "attn_q.weight");
    const std::size_t k = t_.require(blk + "attn_k.weight");
    const std::size_t v = t_.require(blk + "attn_v.weight");
    const std::size_t o = t_.require(blk + "attn_output.weight");
    const std::size_t gate = t_.require(blk + "ffn_gate.weight");
    const std::size_t up = t_.require(blk + "ffn_up.weight");
    const std::size_t down = t_.require(blk + "ffn_down.weight");

    const auto q_rows = std::int64_t(h_.num_heads * qkv_head_rows_);
    const auto kv_rows = std::int64_t(h_.num_kv_heads * qkv_head_rows_);
    t_.expect_shape(q, {E_, q_rows}, "[E, H*hd] with " + dims_);
    t_.expect_shape(k, {E_, kv_rows}, "[E, Hkv*hd] with " + dims_);
    t_.expect_shape(v, {E_, kv_rows}, "[E, Hkv*hd] with " + dims_);
    t_.expect_shape(o, {E_, E_}, "[E, E] with " + dims_);
    t_.expect_shape(gate, {E_, F_}, "[E, F] with " + dims_);
    t_.expect_shape(up, {E_, F_}, "[E, F] with " + dims_);
    t_.expect_shape(down, {F_, E_}, "[F, E] with " + dims_);

    const std::uint8_t gate_dt = t_.weight_dtype(gate);
    if (t_.weight_dtype(up) != gate_dt)
        throw tensor_error("dtype " + type_string(t_.at(up).type) + ", but " + t_.at(gate).name +
                               " is " + type_string(t_.at(gate).type) +
                               " (bump v4's w1 holds the gate rows and then the up rows in one "
                               "dtype)",
                           t_.at(up).name);
    for (std::size_t i : {q, k, v, o, gate, up}) quant_embed_ |= is_k_quant(t_.at(i).type);
    quant_intermediate_ |= is_k_quant(t_.at(down).type);

    norm(attn_norm, slot + "ln1_gamma");
    add(slot + "wq", t_.weight_dtype(q), {heads(q, h_.num_heads)});
    add(slot + "wk", t_.weight_dtype(k), {heads(k, h_.num_kv_heads)});
    add(slot + "wv", t_.weight_dtype(v), {heads(v, h_.num_kv_heads)});
    add(slot + "wo", t_.weight_dtype(o), {attn_output(o)});
    norm(ffn_norm, slot + "ln2_gamma");
    add(slot + "w1", gate_dt,
        {rows_of(gate, h_.intermediate, h_.aligned_intermediate),
         rows_of(up, h_.intermediate, h_.aligned_intermediate)});
    add(slot + "w2", t_.weight_dtype(down), {rows_of(down, h_.embed_dim, h_.aligned_embed_dim)});
}

void Planner::check_blocks(bool quantized, std::uint64_t n, const char* what) const {
    if (!quantized || n % k_quant_block == 0) return;
    for (const Entry& e : p_.entries)
        for (const Piece& piece : e.pieces) {
            const TensorInfo& t = t_.at(piece.tensor);
            if (is_k_quant(t.type) && std::uint64_t(t.ne[0]) == n)
                throw tensor_error("dtype " + type_string(t.type) + " needs " + what + " " +
                                       std::to_string(n) +
                                       " to be a multiple of 256 (K-quant rows cannot be "
                                       "padded); dequantize with a `dequant[to=f32]` stage",
                                   t.name);
        }
    throw Error(std::string("K-quant weights need ") + what + " " + std::to_string(n) +
                " to be a multiple of 256");
}

// Header, u32 count, dtype table, then the entries back to back.
void assign_offsets(Plan& p) {
    std::uint64_t offset = table_offset + 4 + p.entries.size();
    for (Entry& e : p.entries) {
        e.file_offset = offset;
        offset += e.size;
    }
    p.file_bytes = offset;
}

}  // namespace

Plan plan(const ModelHeader& header, const PlanOptions& options) {
    const llama::ArchKeys keys(header.metadata);
    Tensors tensors(header);
    Plan p;
    p.arch = keys.arch();
    std::transform(p.arch.begin(), p.arch.end(), p.arch.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const Geometry g =
        read_geometry(header, tensors, {options.context, "bump[version=4,context=N]"});
    p.header = header_of(g);
    Planner planner(tensors, p, qkv_head_rows(header, p.header));
    refuse_biases(header);

    planner.token_embedding(tensors.require(std::string(llama::token_embd_name)));
    const std::size_t output_norm = tensors.require("output_norm.weight");
    for (std::uint32_t layer = 0; layer < g.layers; ++layer) planner.layer(layer);
    planner.final_norm(output_norm);
    planner.lm_head();
    planner.check_k_quant_blocks();

    assign_offsets(p);
    p.unused = tensors.unused();
    p.config = make_config(keys, g);
    p.config.model_type = p.arch;
    p.config.tie_word_embeddings = p.tied;
    return p;
}

}  // namespace ckplugin::bump::v4
