#include "bump_v4_reader.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "dtype_codes.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr std::uint64_t max_layers = 1u << 20;  // far above any model; bounds the table

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

// Whether `named` (the manifest's weights_path) leads to `weights`. An absolute path must be
// this file. A relative one is followed from the manifest's folder (the form that moves with
// the folder, bump[weights_path=relative]), from each folder above it, and from the current
// directory: the reference writes its --output as given, relative to where it ran, which is
// usually a folder above the output or the one verify runs in.
bool leads_to(const fs::path& named, const fs::path& manifest, const fs::path& weights) {
    auto same_file = [&weights](const fs::path& candidate) {
        std::error_code ec;
        return fs::equivalent(candidate, weights, ec);
    };
    if (named.is_absolute()) return same_file(named);
    std::error_code ec;
    fs::path folder = fs::absolute(manifest, ec).parent_path();
    for (; !ec && !folder.empty(); folder = folder.parent_path()) {
        if (same_file(folder / named)) return true;
        if (folder == folder.root_path()) break;
    }
    return same_file(named);
}

// weights_path, the manifest's word for which file it describes: C-Kernel-Engine's runtime is
// given the weights file and reads the manifest beside it, so a manifest naming another file
// (a copied folder, two bump files in one) misleads everyone who reads it
// (docs/decisions/0043-bump-v4-manifest-beside-and-true.md).
void check_weights_path(const nlohmann::json& doc, const fs::path& manifest,
                        const fs::path& weights) {
    const std::string file = manifest.string();
    const std::string* weights_path = string_member(doc, "weights_path");
    if (!weights_path) throw key_error("missing or not a string", "weights_path", file);
    if (!weights_path->empty() && leads_to(*weights_path, manifest, weights)) return;
    throw key_error(nlohmann::json(*weights_path).dump() + " does not lead to " + weights.string() +
                        " (a relative path is followed from the manifest's folder, the folders "
                        "above it and the current directory): the folder was moved or copied, "
                        "or the manifest is another file's; set it to " +
                        nlohmann::json(weights.filename().string()).dump() +
                        ", or convert with bump[version=4,weights_path=relative]",
                    "weights_path", file);
}

}  // namespace

ModelHeader BumpV4Reader::open(const fs::path& path) {
    header_ = v4::decode_header(map_file(path, v4::version));
    expect_version(header_.version, v4::version);
    read_dtype_table();
    lay_out();
    manifest_path_ = path.parent_path() / "weights_manifest.json";
    std::error_code ec;
    has_manifest_ = fs::exists(manifest_path_, ec);

    return model_header(format_facts());
}

void BumpV4Reader::read_dtype_table() {
    const std::uint64_t count = table_count();
    const std::uint64_t layers = header_.num_layers;
    if (layers > max_layers || (count != 8 * layers + 2 && count != 8 * layers + 3))
        throw Error("dtype table has " + std::to_string(count) +
                        " entries, expected 8 L + 2 (tied) or 8 L + 3 (with lm_head) for "
                        "num_layers " +
                        std::to_string(layers),
                    name(), v4::table_offset);
    read_table(
        count,
        [](std::uint8_t code, std::size_t) {
            return code == code_of(Dtype::fp32) || code == code_of(Dtype::q4_k) ||
                           code == code_of(Dtype::q6_k)
                       ? ""
                       : "is not one bump v4 stores (FP32, Q4_K, Q6_K)";
        },
        [](std::size_t) { return std::string(); });
}

Facts BumpV4Reader::format_facts() const {
    const v4::Header& h = header_;
    Facts facts = {{"magic", std::string(v4::magic)},
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
                   {"checksum", hex(h.checksum)}};
    const Facts table = table_facts();
    facts.insert(facts.end(), table.begin(), table.end());
    facts.emplace_back("lm_head", entries().back().name == "lm_head_weight"
                                      ? "lm_head_weight (untied)"
                                      : "tied to token_emb");
    facts.emplace_back("manifest", has_manifest_ ? manifest_path_.string() : std::string("absent"));
    return facts;
}

// Each entry's size follows from the header and its dtype: K-quant entries hold the model's
// rows as they are (Q/K/V padded per head with zero rows), FP32 ones the aligned sizes.
void BumpV4Reader::lay_out() {
    const std::string& file = name();
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
    std::vector<TensorInfo> entries;
    // rows x cols of the model (K-quant) or of the aligned sizes (FP32).
    auto add = [&](std::string name, std::uint64_t rows, std::uint64_t cols, std::uint64_t a_rows,
                   std::uint64_t a_cols) {
        TensorInfo e;
        e.name = std::move(name);
        const std::uint8_t dtype = dtype_table().at(entries.size());
        e.type = *ggml_type_of(dtype);
        const bool fp32 = dtype == code_of(Dtype::fp32);
        const std::uint64_t r = fp32 ? a_rows : rows, c = fp32 ? a_cols : cols;
        auto row = row_bytes(e.type, c);
        if (!row)
            throw tensor_error(std::string(dtype_name(dtype)) + " rows of " + std::to_string(c) +
                                   " elements are not whole blocks",
                               e.name, file);
        e.ne = r == 1 ? std::vector<std::int64_t>{std::int64_t(c)}
                      : std::vector<std::int64_t>{std::int64_t(c), std::int64_t(r)};
        e.nbytes = checked_mul(*row, r, file);
        entries.push_back(std::move(e));
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
    if (entries.size() < dtype_table().size()) add("lm_head_weight", V, E, V, aE);
    place_entries(std::move(entries), "the header and dtype table", "entry");
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
        throw key_error("format is not " + std::string(v4::manifest_format), "format", file);
    check_weights_path(doc, manifest_path_, path());
    const auto found = doc.find("entries");
    if (found == doc.end() || !found->is_array())
        throw key_error("entries is not an array", "entries", file);
    const nlohmann::json& listed = *found;
    if (listed.size() != entries().size())
        throw Error("manifest has " + std::to_string(listed.size()) + " entries, the dtype table " +
                        std::to_string(entries().size()),
                    file);
    std::uint64_t expected_offset = payload_start();
    for (std::size_t i = 0; i < listed.size(); ++i) {
        const auto& m = listed[i];
        const TensorInfo& e = entries()[i];
        const std::uint8_t e_dtype = dtype_table()[i];
        const std::string* listed_name = m.is_object() ? string_member(m, "name") : nullptr;
        const std::string* dtype = m.is_object() ? string_member(m, "dtype") : nullptr;
        const std::uint64_t* offset_ptr =
            m.is_object() ? unsigned_member(m, "file_offset") : nullptr;
        const std::uint64_t* size_ptr = m.is_object() ? unsigned_member(m, "size") : nullptr;
        if (!listed_name || !dtype || !offset_ptr || !size_ptr)
            throw tensor_error("expected name, dtype, file_offset and size", e.name, file);
        if (*listed_name != e.name)
            throw tensor_error("entry " + std::to_string(i) + " is named " +
                                   nlohmann::json(*listed_name).dump() + ", expected \"" + e.name +
                                   "\"",
                               e.name, file);
        if (*dtype != v4::manifest_dtype(e_dtype))
            throw tensor_error("dtype " + nlohmann::json(*dtype).dump() +
                                   ", but the dtype table says " + v4::manifest_dtype(e_dtype),
                               e.name, file);
        const std::uint64_t offset = *offset_ptr;
        const std::uint64_t size = *size_ptr;
        if (offset != expected_offset)
            throw tensor_error(
                "file_offset " + std::to_string(offset) + ", expected " +
                    std::to_string(expected_offset) +
                    " (entries must follow each other from the end of the dtype table)",
                e.name, file);
        if (size != e.nbytes)
            throw tensor_error("size " + std::to_string(size) +
                                   ", but the header and dtype table give " +
                                   std::to_string(e.nbytes),
                               e.name, file);
        expected_offset += size;
    }
    if (expected_offset != file_size())
        throw Error("the entries end at " + std::to_string(expected_offset) + ", the file at " +
                        std::to_string(file_size()),
                    file);
}

void BumpV4Reader::verify() {
    const v4::Header& h = header_;
    expect_no_trailing_bytes("entry");
    expect_llama_heads(h.model_type, h.num_heads, h.head_dim, h.embed_dim);
    expect_reserved_zero(v4::checksum_offset + h.checksum.size());
    // C-Kernel-Engine's v4 runtime looks for the manifest in the weights file's folder: a file
    // without one there cannot be loaded.
    if (!has_manifest_)
        throw Error("not found: the v4 runtime reads the manifest beside the weights file (" +
                        name() + "), so it cannot load this one",
                    manifest_path_.string());
    check_manifest();
    expect_checksum(h.checksum, v4::checksum_offset);
}

}  // namespace ckplugin::bump
