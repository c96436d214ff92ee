#include "bump_v4_reader.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "bump_format.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"
#include "sha256_stream.hpp"

#include <fstream>

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr std::uint64_t table_offset = v4::header_bytes;
constexpr std::uint64_t max_layers = 1u << 20;  // far above any model; bounds the table

std::string entry_subject(const std::string& name) {
    return "entry '" + name + "'";
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& file) {
    if (a != 0 && b > UINT64_MAX / a) throw Error("entry size overflows", file);
    return a * b;
}

// A member of a JSON object when it is there with the expected type, else nullptr.
const std::string* string_member(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() ? it->get_ptr<const std::string*>() : nullptr;
}

const std::uint64_t* unsigned_member(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() ? it->get_ptr<const nlohmann::json::number_unsigned_t*>() : nullptr;
}

}  // namespace

ModelHeader BumpV4Reader::open(const fs::path& path) {
    path_ = path;
    const std::string file = path.string();
    tensors_.open(path);
    const std::uint64_t size = tensors_.file().size();
    if (size < table_offset + 4)
        throw Error("file ends inside the header (" + std::to_string(size) +
                        " bytes, a bump v4 file has at least 132)",
                    file, size);
    header_ = v4::decode_header(
        std::span<const std::byte, v4::header_bytes>(tensors_.file().data(), v4::header_bytes));
    if (header_.version != v4::version)
        throw Error("version " + std::to_string(header_.version) + ", expected 4", file, 0x08,
                    "field 'version'");
    support::ByteCursor in(tensors_.file().data(), size, file);
    in.seek(table_offset, "the dtype table");
    const std::uint64_t count = in.read<std::uint32_t>("the dtype table count");
    const std::uint64_t layers = header_.num_layers;
    if (layers > max_layers || (count != 8 * layers + 2 && count != 8 * layers + 3))
        throw Error("dtype table has " + std::to_string(count) +
                        " entries, expected 8 L + 2 (tied) or 8 L + 3 (with lm_head) for "
                        "num_layers " +
                        std::to_string(layers),
                    file, table_offset);
    payload_start_ = table_offset + 4 + count;
    dtype_table_.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
        auto code = in.read<std::uint8_t>("the dtype table");
        if (code != static_cast<std::uint8_t>(Dtype::fp32) &&
            code != static_cast<std::uint8_t>(Dtype::q4_k) &&
            code != static_cast<std::uint8_t>(Dtype::q6_k))
            throw Error("dtype code " + std::to_string(code) + " (" +
                            std::string(dtype_name(code)) +
                            ") is not one bump v4 stores (FP32, Q4_K, Q6_K)",
                        file, table_offset + 4 + i);
        dtype_table_.push_back(code);
    }
    lay_out(file);

    manifest_path_ = path.parent_path() / "weights_manifest.json";
    std::error_code ec;
    has_manifest_ = fs::exists(manifest_path_, ec);

    ModelHeader out;
    out.source = file;
    out.format = "bump";
    for (const Laid& e : entries_) {
        TensorInfo t;
        t.name = e.name;
        t.type = e.ggml_type;
        t.ne = e.ne;
        t.nbytes = e.size;
        t.source_offset = e.offset;
        out.tensors.push_back(std::move(t));
        tensors_.add(e.offset, e.size);
    }
    const v4::Header& h = header_;
    std::map<std::uint8_t, std::size_t> per_code;
    for (std::uint8_t code : dtype_table_) ++per_code[code];
    out.format_facts = {{"magic", std::string(v4::magic)},
                        {"version", std::to_string(h.version)},
                        {"model_type", std::to_string(h.model_type)},
                        {"num_layers", std::to_string(h.num_layers)},
                        {"vocab_size", std::to_string(h.vocab_size)},
                        {"embed_dim", std::to_string(h.embed_dim)},
                        {"intermediate_size", std::to_string(h.intermediate)},
                        {"context_len", std::to_string(h.context_len)},
                        {"num_heads", std::to_string(h.num_heads)},
                        {"num_kv_heads", std::to_string(h.num_kv_heads)},
                        {"head_dim", std::to_string(h.head_dim)},
                        {"aligned_embed_dim", std::to_string(h.aligned_embed_dim)},
                        {"aligned_head_dim", std::to_string(h.aligned_head_dim)},
                        {"aligned_intermediate", std::to_string(h.aligned_intermediate)},
                        {"aligned_context", std::to_string(h.aligned_context)},
                        {"checksum", hex(h.checksum)},
                        {"dtype table offset", std::to_string(table_offset + 4)},
                        {"dtype table entries", std::to_string(dtype_table_.size())}};
    for (auto [code, n] : per_code)
        out.format_facts.emplace_back("dtype table " + std::string(dtype_name(code)),
                                      std::to_string(n));
    out.format_facts.emplace_back("payload start", std::to_string(payload_start_));
    out.format_facts.emplace_back("file size", std::to_string(size));
    out.format_facts.emplace_back("lm_head", entries_.back().name == "lm_head_weight"
                                                 ? "lm_head_weight (untied)"
                                                 : "tied to token_emb");
    out.format_facts.emplace_back("manifest",
                                  has_manifest_ ? manifest_path_.string() : std::string("absent"));
    return out;
}

// Each entry's size follows from the header and its dtype: K-quant entries hold the model's
// rows as they are (Q/K/V padded per head with zero rows), FP32 ones the aligned sizes.
void BumpV4Reader::lay_out(const std::string& file) {
    const v4::Header& h = header_;
    if (h.num_heads == 0 || h.head_dim == 0 || h.embed_dim == 0 || h.num_kv_heads == 0 ||
        h.aligned_embed_dim < h.embed_dim || h.aligned_head_dim < h.head_dim ||
        h.aligned_intermediate < h.intermediate || h.aligned_head_dim > UINT32_MAX ||
        h.aligned_embed_dim > UINT32_MAX || h.aligned_intermediate > UINT32_MAX)
        throw Error(
            "header sizes out of range (heads, head_dim, embed_dim at least 1; aligned "
            "sizes at least the sizes)",
            file, 0x10);
    const std::uint64_t E = h.embed_dim, aE = h.aligned_embed_dim, F = h.intermediate,
                        aF = h.aligned_intermediate, V = h.vocab_size, H = h.num_heads,
                        Hkv = h.num_kv_heads, ahd = h.aligned_head_dim;
    entries_.clear();
    std::uint64_t offset = payload_start_;
    std::size_t index = 0;
    // rows x cols of the model (K-quant) or of the aligned sizes (FP32).
    auto add = [&](std::string name, std::uint64_t rows, std::uint64_t cols, std::uint64_t a_rows,
                   std::uint64_t a_cols) {
        Laid e;
        e.name = std::move(name);
        e.dtype = dtype_table_.at(index++);
        e.ggml_type = *ggml_type_of(e.dtype);
        const bool fp32 = e.dtype == static_cast<std::uint8_t>(Dtype::fp32);
        const std::uint64_t r = fp32 ? a_rows : rows, c = fp32 ? a_cols : cols;
        auto row = row_bytes(e.ggml_type, c);
        if (!row)
            throw Error(std::string(dtype_name(e.dtype)) + " rows of " + std::to_string(c) +
                            " elements are not whole blocks",
                        file, {}, entry_subject(e.name));
        e.ne = r == 1 ? std::vector<std::int64_t>{std::int64_t(c)}
                      : std::vector<std::int64_t>{std::int64_t(c), std::int64_t(r)};
        e.size = checked_mul(*row, r, file);
        e.offset = offset;
        offset += e.size;
        entries_.push_back(std::move(e));
    };
    add("token_emb", V, E, V, aE);
    for (std::uint32_t l = 0; l < h.num_layers; ++l) {
        const std::string p = "layer." + std::to_string(l) + ".";
        add(p + "ln1_gamma", 1, E, 1, aE);
        add(p + "wq", H * ahd, E, H * ahd, aE);
        add(p + "wk", Hkv * ahd, E, Hkv * ahd, aE);
        add(p + "wv", Hkv * ahd, E, Hkv * ahd, aE);
        add(p + "wo", E, E, H * aE, ahd);  // FP32: per head, [aE rows][ahd columns]
        add(p + "ln2_gamma", 1, E, 1, aE);
        add(p + "w1", 2 * F, E, 2 * aF, aE);
        add(p + "w2", E, F, aE, aF);
    }
    add("final_ln_weight", 1, E, 1, aE);
    if (index < dtype_table_.size()) add("lm_head_weight", V, E, V, aE);
    const std::uint64_t size = tensors_.file().size();
    if (size < offset)
        throw Error("file is " + std::to_string(size) +
                        " bytes, but the header and dtype table "
                        "describe " +
                        std::to_string(offset) + " (truncated?)",
                    file, size);
    if (size > offset)
        context_.warn(file + ": " + std::to_string(size - offset) + " bytes after the last entry");
}

// The manifest must name the entries in order with the dtype of the table, and their
// offsets and sizes must tile the payload exactly.
void BumpV4Reader::check_manifest() const {
    const std::string file = manifest_path_.string();
    std::ifstream in(manifest_path_, std::ios::binary);
    if (!in) throw Error("cannot open the manifest", file);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) throw Error("not a JSON object", file);
    // Lookups by find() only: a const operator[] on a missing key is undefined behaviour, and
    // value()/get() throw nlohmann's own exceptions on a wrong type (found by fuzz_bump).
    const std::string* format = string_member(doc, "format");
    if (!format || *format != v4::manifest_format)
        throw Error("format is not " + std::string(v4::manifest_format), file, {}, "key 'format'");
    const auto found = doc.find("entries");
    if (found == doc.end() || !found->is_array())
        throw Error("entries is not an array", file, {}, "key 'entries'");
    const nlohmann::json& entries = *found;
    if (entries.size() != entries_.size())
        throw Error("manifest has " + std::to_string(entries.size()) +
                        " entries, the dtype table " + std::to_string(entries_.size()),
                    file);
    std::uint64_t expected_offset = payload_start_;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& m = entries[i];
        const Laid& e = entries_[i];
        const std::string subject = entry_subject(e.name);
        const std::string* name = m.is_object() ? string_member(m, "name") : nullptr;
        const std::string* dtype = m.is_object() ? string_member(m, "dtype") : nullptr;
        const std::uint64_t* offset_ptr =
            m.is_object() ? unsigned_member(m, "file_offset") : nullptr;
        const std::uint64_t* size_ptr = m.is_object() ? unsigned_member(m, "size") : nullptr;
        if (!name || !dtype || !offset_ptr || !size_ptr)
            throw Error("expected name, dtype, file_offset and size", file, {}, subject);
        if (*name != e.name)
            throw Error("entry " + std::to_string(i) + " is named " + nlohmann::json(*name).dump() +
                            ", expected \"" + e.name + "\"",
                        file, {}, subject);
        if (*dtype != v4::manifest_dtype(e.dtype))
            throw Error("dtype " + nlohmann::json(*dtype).dump() + ", but the dtype table says " +
                            v4::manifest_dtype(e.dtype),
                        file, {}, subject);
        const std::uint64_t offset = *offset_ptr;
        const std::uint64_t size = *size_ptr;
        if (offset != expected_offset)
            throw Error("file_offset " + std::to_string(offset) + ", expected " +
                            std::to_string(expected_offset) +
                            " (entries must follow each other from the end of the dtype table)",
                        file, {}, subject);
        if (size != e.size)
            throw Error("size " + std::to_string(size) + ", but the header and dtype table give " +
                            std::to_string(e.size),
                        file, {}, subject);
        expected_offset += size;
    }
    if (expected_offset != tensors_.file().size())
        throw Error("the entries end at " + std::to_string(expected_offset) + ", the file at " +
                        std::to_string(tensors_.file().size()),
                    file);
}

void BumpV4Reader::verify() {
    const std::string file = path_.string();
    const v4::Header& h = header_;
    const std::uint64_t end = entries_.back().offset + entries_.back().size;
    if (tensors_.file().size() != end)
        throw Error(std::to_string(tensors_.file().size() - end) +
                        " bytes after the last entry (the file should be " + std::to_string(end) +
                        " bytes)",
                    file, end);
    if (h.model_type != 1)
        throw Error("model_type " + std::to_string(h.model_type) + ", expected 1", file, 0x0C);
    if (std::uint64_t(h.num_heads) * h.head_dim != h.embed_dim)
        throw Error(
            "num_heads * head_dim = " + std::to_string(std::uint64_t(h.num_heads) * h.head_dim) +
                ", expected embed_dim " + std::to_string(h.embed_dim),
            file, 0x24);
    for (std::size_t i = v4::checksum_offset + 32; i < v4::header_bytes; ++i)
        if (tensors_.file().data()[i] != std::byte{0})
            throw Error("reserved header bytes are not zero", file, i);
    if (has_manifest_)
        check_manifest();
    else
        context_.warn(file + ": no weights_manifest.json beside it (the v4 loader needs one)");
    Digest actual = sha256_of_file(path_, v4::header_bytes);
    if (actual != h.checksum)
        throw Error("checksum mismatch: the header says " + hex(h.checksum) +
                        ", bytes 128 to the end hash to " + hex(actual),
                    file, v4::checksum_offset);
}

}  // namespace ckplugin::bump
