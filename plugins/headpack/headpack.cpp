#include "headpack.hpp"

#include <cstring>
#include <optional>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/llama/plain_graph.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::headpack {
using namespace ck;
namespace {

using llama::tensor_subject;

// blk.N.attn_{q,k,v}.{weight,bias}: which projection, and whether it is the bias.
struct HeadTensor {
    char projection;  // 'q', 'k' or 'v'
    bool bias;
};

std::optional<HeadTensor> head_tensor(std::string_view name) {
    if (!name.starts_with("blk.")) return std::nullopt;
    std::size_t dot = name.find('.', 4);
    if (dot == std::string_view::npos || dot == 4) return std::nullopt;
    for (char c : name.substr(4, dot - 4))
        if (c < '0' || c > '9') return std::nullopt;
    std::string_view rest = name.substr(dot + 1);
    for (char p : {'q', 'k', 'v'}) {
        std::string stem = std::string("attn_") + p;
        if (rest == stem + ".weight") return HeadTensor{p, false};
        if (rest == stem + ".bias") return HeadTensor{p, true};
    }
    return std::nullopt;
}

}  // namespace

Headpack::Headpack(const Options& options) : align_(options.get_u64("align", 64)) {
    if (align_ == 0 || align_ % 4 != 0 || align_ > (1u << 20))
        throw usage_error("option align=" + options.get("align") +
                          ": expected a positive multiple of 4 bytes (e.g. 64), at most 1048576");
}

ModelHeader Headpack::plan(const ModelHeader& in) {
    try {
        return plan_padding(in);
    } catch (const Error& e) {
        // The tensor or key named is the input's: say which file it is in.
        if (e.file().empty() && !in.source.empty()) throw e.with_file(in.source);
        throw;
    }
}

ModelHeader Headpack::plan_padding(const ModelHeader& in) {
    in_ = in;
    padded_.clear();
    if (const Value* v = in.metadata.find(llama::aligned_head_dim_key))
        throw key_error(
            "the heads are already padded (to " + v->to_display() + "); run headpack once",
            std::string(llama::aligned_head_dim_key));
    // Padded heads are only for C-Kernel-Engine's bump files, whose graph is the plain llama
    // one: a model beyond it is refused here, before a bump writer would refuse it.
    llama::refuse_beyond_plain_graph(in, "headpack");
    const llama::ArchKeys keys(in.metadata);
    const llama::HeadGeometry g = llama::head_geometry(in, keys);
    const std::uint64_t hd = g.head_dim;
    const std::uint64_t hd_a = (hd * 4 + align_ - 1) / align_ * align_ / 4;
    aligned_head_dim_ = static_cast<std::uint32_t>(hd_a);

    ModelHeader out = in;
    for (std::size_t i = 0; i < out.tensors.size(); ++i) {
        TensorInfo& t = out.tensors[i];
        auto which = head_tensor(t.name);
        if (!which) continue;
        const std::uint32_t heads = which->projection == 'q' ? g.heads : g.kv_heads;
        const char* heads_word = which->projection == 'q' ? "H" : "Hkv";
        const std::uint64_t rows = std::uint64_t(heads) * hd;
        Padding p;
        p.heads = heads;
        p.in_bytes = t.nbytes;
        if (which->bias) {
            // One element per output row: a head is hd elements.
            if (t.ne.size() != 1 || static_cast<std::uint64_t>(t.ne[0]) != rows)
                throw tensor_error("shape " + t.shape_string() + ", expected [" +
                                       std::to_string(rows) + "] (" + heads_word + "*hd = " +
                                       std::to_string(heads) + "*" + std::to_string(hd) + ")",
                                   t.name);
            auto head = row_bytes(t.type, hd), pad = row_bytes(t.type, hd_a - hd);
            if (!head || !pad)
                throw tensor_error("a head of " + std::to_string(hd) + " " +
                                       std::string(type_name(t.type)) +
                                       " elements is not whole blocks",
                                   t.name);
            p.head_bytes = *head;
            p.pad_bytes = *pad;
            t.ne[0] = static_cast<std::int64_t>(heads * hd_a);
        } else {
            // hd rows per head, whatever the row type: padding adds whole zero rows, which
            // decode to zeros in F32 and in every block-quantized type alike.
            if (t.ne.size() != 2 || static_cast<std::uint64_t>(t.ne[1]) != rows)
                throw tensor_error(
                    "shape " + t.shape_string() + ", expected [" + std::to_string(g.embed) + ", " +
                        std::to_string(rows) + "]: rows are not " + heads_word +
                        " x hd = " + std::to_string(heads) + " x " + std::to_string(hd),
                    t.name);
            auto row = row_bytes(t.type, static_cast<std::uint64_t>(t.ne[0]));
            if (!row)
                throw tensor_error("row of " + std::to_string(t.ne[0]) + " " +
                                       std::string(type_name(t.type)) +
                                       " elements is not whole blocks",
                                   t.name);
            p.head_bytes = *row * hd;
            p.pad_bytes = *row * (hd_a - hd);
            t.ne[1] = static_cast<std::int64_t>(heads * hd_a);
        }
        t.nbytes = heads * (p.head_bytes + p.pad_bytes);
        if (p.in_bytes != heads * p.head_bytes)
            throw tensor_error("holds " + std::to_string(p.in_bytes) + " bytes, expected " +
                                   std::to_string(heads * p.head_bytes),
                               t.name);
        padded_.emplace(i, p);
    }
    if (hd_a == hd) {  // nothing to pad: the output stays byte-identical (shapes still checked)
        padded_.clear();
        return in;
    }
    out.metadata.set(std::string(llama::aligned_head_dim_key),
                     Value::of_u32(static_cast<std::uint32_t>(hd_a)));
    return out;
}

TensorView Headpack::apply(std::size_t index, const Upstream& upstream) {
    auto it = padded_.find(index);
    if (it == padded_.end()) return upstream(index);
    const Padding& p = it->second;
    TensorView source = upstream(index);
    support::check_tensor_bytes(source, p.in_bytes, in_.tensors.at(index).name);
    std::vector<std::byte> out(p.heads * (p.head_bytes + p.pad_bytes));  // zero-filled
    for (std::uint32_t h = 0; h < p.heads; ++h)
        std::memcpy(out.data() + h * (p.head_bytes + p.pad_bytes),
                    source.bytes().data() + h * p.head_bytes, p.head_bytes);
    return TensorView::owning(std::move(out));
}

}  // namespace ckplugin::headpack
