#include "bump_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include "bump_v4.hpp"
#include "bump_v4_reader.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"
#include "sha256_stream.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;

namespace {

std::string slot_subject(const std::string& name) {
    return "slot '" + name + "'";
}

std::uint64_t payload_bytes(const std::vector<Slot>& slots) {
    std::uint64_t sum = 0;
    for (const Slot& s : slots) sum += s.bytes;
    return sum;
}

std::optional<std::uint64_t> try_payload_bytes(const Geometry& g,
                                               std::span<const std::uint32_t> types) {
    try {
        return payload_bytes(layout_slots(g, types));
    } catch (const Error&) {
        return std::nullopt;
    }
}

// The divisors of n, in increasing order, found below sqrt(n). A header may claim up to
// 2^32 - 1 heads: counting kv up to num_heads took seconds there and then wrapped kv to 0, a
// division by zero (found by fuzz_bump); a 32-bit number has at most 1344 divisors.
std::vector<std::uint32_t> divisors(std::uint32_t n) {
    std::vector<std::uint32_t> low, high;
    for (std::uint64_t d = 1; d * d <= n; ++d) {
        if (n % d != 0) continue;
        low.push_back(static_cast<std::uint32_t>(d));
        if (d * d != n) high.push_back(static_cast<std::uint32_t>(n / d));
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

// Without config.json, num_key_value_heads and intermediate_size are the two unknowns. The
// payload size is linear in F for a given Hkv, so each divisor of H gives at most one F; the
// geometry is used only when exactly one pair fits.
std::vector<std::pair<std::uint32_t, std::uint32_t>> infer_kv_heads_and_ffn(
    Geometry g, std::span<const std::uint32_t> types, std::uint64_t payload) {
    std::uint32_t unit = 1;  // F must be a whole number of w2's blocks
    auto roles = slot_roles(g.layers);
    for (std::size_t i = 0; i < roles.size(); ++i)
        if (roles[i].first == SlotRole::w2)
            if (const TypeInfo* t = find_type(types[i]); t && t->block_size > unit)
                unit = t->block_size;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> found;
    for (std::uint32_t kv : divisors(g.heads)) {
        g.kv_heads = kv;
        g.ffn = 0;
        auto base = try_payload_bytes(g, types);
        g.ffn = unit;
        auto one = try_payload_bytes(g, types);
        if (!base || !one || *one <= *base || payload <= *base) continue;
        std::uint64_t slope = *one - *base;
        if ((payload - *base) % slope != 0) continue;
        std::uint64_t ffn = (payload - *base) / slope * unit;
        if (ffn > std::numeric_limits<std::uint32_t>::max()) continue;
        g.ffn = static_cast<std::uint32_t>(ffn);
        if (try_payload_bytes(g, types) == payload) found.emplace_back(kv, g.ffn);
    }
    return found;
}

}  // namespace

BumpReader::BumpReader(Context& context) : context_(context) {}
BumpReader::~BumpReader() = default;

ModelHeader BumpReader::open(const fs::path& path) {
    {
        // The magic decides the version; the v4 reader maps the file again (cheap: no bytes
        // are read beyond the header and the dtype table).
        support::MappedTensors probe;
        probe.open(path);
        const auto& f = probe.file();
        if (f.size() >= v4::magic.size() &&
            std::memcmp(f.data(), v4::magic.data(), v4::magic.size()) == 0) {
            v4_ = std::make_unique<BumpV4Reader>(context_);
            return v4_->open(path);
        }
    }
    path_ = path;
    const std::string file = path.string();
    tensors_.open(path);
    read_header(file);
    const std::vector<std::uint32_t> types = read_dtype_table(file);
    check_head_geometry(file);
    const std::string geometry_source =
        find_kv_heads_and_ffn(path, types, tensors_.file().size() - payload_start_);
    lay_out_slots(types, geometry_source, file);

    ModelHeader out;
    out.source = file;
    out.format = "bump";
    if (config_) out.metadata = config_->entries;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        TensorInfo t;
        t.name = slots_[i].name;
        t.type = slots_[i].ggml_type;
        t.ne = slots_[i].ne;
        t.nbytes = slots_[i].bytes;
        t.source_offset = tensors_.offset(i);
        out.tensors.push_back(std::move(t));
    }
    out.format_facts = format_facts(geometry_source);
    return out;
}

void BumpReader::read_header(const std::string& file) {
    const std::uint64_t size = tensors_.file().size();
    const std::byte* data = tensors_.file().data();
    if (!has_magic(reinterpret_cast<const unsigned char*>(data), size))
        throw Error("not a bump file (magic is not BUMPWGT3)", file, 0);
    if (size < header_bytes + 4)
        throw Error("file ends inside the header (" + std::to_string(size) +
                        " bytes, a bump file has at least 132)",
                    file, size);
    header_ = decode_header(std::span<const std::byte, header_bytes>(data, header_bytes));
    if (header_.version != version)
        throw Error("version " + std::to_string(header_.version) + ", expected 3", file, 0x08,
                    "field 'version'");
}

std::vector<std::uint32_t> BumpReader::read_dtype_table(const std::string& file) {
    const Header& h = header_;
    const std::uint64_t size = tensors_.file().size();
    support::ByteCursor in(tensors_.file().data(), size, file);
    in.seek(table_count_offset, "the dtype table");
    const std::uint64_t count = in.read<std::uint32_t>("the dtype table count");
    if (count != slot_count(h.num_layers))
        throw Error("dtype table has " + std::to_string(count) + " entries, expected 14 L + 4 = " +
                        std::to_string(slot_count(h.num_layers)) + " for num_layers " +
                        std::to_string(h.num_layers),
                    file, table_count_offset);
    payload_start_ = table_count_offset + 4 + count;
    if (size < payload_start_)
        throw Error("file ends inside the dtype table (" + std::to_string(size) +
                        " bytes, the "
                        "table ends at " +
                        std::to_string(payload_start_) + ")",
                    file, size);

    auto roles = slot_roles(h.num_layers);
    auto role_slot_name = [&](std::size_t i) { return slot_name(roles[i].first, roles[i].second); };
    dtype_table_.clear();
    std::vector<std::uint32_t> types;
    for (std::uint64_t i = 0; i < count; ++i) {
        auto code = in.read<std::uint8_t>("the dtype table");
        auto type = ggml_type_of(code);
        if (!type)
            throw Error("dtype code " + std::to_string(code) + " (" +
                            std::string(dtype_name(code)) + ") has no known byte layout",
                        file, table_count_offset + 4 + i, slot_subject(role_slot_name(i)));
        dtype_table_.push_back(code);
        types.push_back(*type);
    }
    return types;
}

void BumpReader::check_head_geometry(const std::string& file) {
    const Header& h = header_;
    if (h.num_heads == 0 || h.head_dim == 0)
        throw Error("num_heads and head_dim must be at least 1, got " +
                        std::to_string(h.num_heads) + " and " + std::to_string(h.head_dim),
                    file, 0x20);
    if (h.aligned_head_dim < h.head_dim || h.aligned_head_dim > UINT32_MAX)
        throw Error("aligned_head_dim " + std::to_string(h.aligned_head_dim) +
                        " is out of range (expected head_dim " + std::to_string(h.head_dim) +
                        " or more)",
                    file, 0x30);
    geometry_ = Geometry{h.num_layers,
                         h.vocab_size,
                         h.embed_dim,
                         h.context_len,
                         h.num_heads,
                         0,
                         h.head_dim,
                         static_cast<std::uint32_t>(h.aligned_head_dim),
                         0};
}

std::string BumpReader::find_kv_heads_and_ffn(const fs::path& path,
                                              std::span<const std::uint32_t> types,
                                              std::uint64_t payload) {
    config_.reset();
    config_path_ = path.parent_path() / "config.json";
    std::error_code ec;
    if (fs::exists(config_path_, ec)) {
        config_ = read_config_json(config_path_);
        if (config_->num_key_value_heads == 0 || config_->num_key_value_heads > UINT32_MAX ||
            config_->intermediate_size > UINT32_MAX)
            throw Error("num_key_value_heads / intermediate_size out of range",
                        config_path_.string());
        geometry_.kv_heads = static_cast<std::uint32_t>(config_->num_key_value_heads);
        geometry_.ffn = static_cast<std::uint32_t>(config_->intermediate_size);
        return "config.json";
    }
    auto found = infer_kv_heads_and_ffn(geometry_, types, payload);
    if (found.size() != 1)
        throw Error("no config.json beside the file, and the file size " +
                        (found.empty() ? std::string("fits no") : "fits several") +
                        " (num_key_value_heads, intermediate_size) pairs; put the "
                        "config.json written with it beside it",
                    path.string());
    geometry_.kv_heads = found[0].first;
    geometry_.ffn = found[0].second;
    return "inferred from the file size (no config.json)";
}

void BumpReader::lay_out_slots(std::span<const std::uint32_t> types,
                               const std::string& geometry_source, const std::string& file) {
    const std::uint64_t size = tensors_.file().size();
    try {
        slots_ = layout_slots(geometry_, types);
    } catch (const Error& e) {
        throw e.with_file(file);
    }
    std::uint64_t offset = payload_start_;
    for (const Slot& s : slots_) {
        tensors_.add(offset, s.bytes);
        offset += s.bytes;
    }
    expected_size_ = offset;
    if (size < expected_size_)
        throw Error("file is " + std::to_string(size) +
                        " bytes, but the header, dtype table "
                        "and " +
                        geometry_source + " describe " + std::to_string(expected_size_) +
                        " (truncated?)",
                    file, size);
    if (size > expected_size_)
        context_.warn(file + ": " + std::to_string(size - expected_size_) +
                      " bytes after the last slot");
    if (config_) {
        try {
            check_config_against_header();
        } catch (const Error& e) {
            context_.warn(config_path_.string() + ": " + e.message());
        }
    }
}

std::vector<std::pair<std::string, std::string>> BumpReader::format_facts(
    const std::string& geometry_source) const {
    const Header& h = header_;
    std::map<std::uint8_t, std::size_t> per_code;
    for (std::uint8_t code : dtype_table_) ++per_code[code];
    // One value per fact (inspect --json types them): the dtype table's place and size, then
    // how many slots each dtype has.
    std::vector<std::pair<std::string, std::string>> facts = {
        {"magic", std::string(magic)},
        {"version", std::to_string(h.version)},
        {"model_type", std::to_string(h.model_type)},
        {"num_layers", std::to_string(h.num_layers)},
        {"vocab_size", std::to_string(h.vocab_size)},
        {"embed_dim", std::to_string(h.embed_dim)},
        {"context_len", std::to_string(h.context_len)},
        {"num_heads", std::to_string(h.num_heads)},
        {"head_dim", std::to_string(h.head_dim)},
        {"aligned_embed_dim", std::to_string(h.aligned_embed_dim)},
        {"aligned_head_dim", std::to_string(h.aligned_head_dim)},
        {"aligned_context", std::to_string(h.aligned_context)},
        {"checksum", hex(h.checksum)},
        {"dtype table offset", "132"},
        {"dtype table entries", std::to_string(dtype_table_.size())}};
    for (auto [code, n] : per_code)
        facts.emplace_back("dtype table " + std::string(dtype_name(code)), std::to_string(n));
    facts.insert(facts.end(),
                 {{"payload start", std::to_string(payload_start_)},
                  {"file size", std::to_string(tensors_.file().size())},
                  {"num_kv_heads", std::to_string(geometry_.kv_heads)},
                  {"intermediate_size", std::to_string(geometry_.ffn)},
                  {"geometry from", geometry_source},
                  {"config.json", config_ ? config_path_.string() : std::string("absent")}});
    return facts;
}

TensorView BumpReader::tensor(std::size_t index) {
    if (v4_) return v4_->tensor(index);
    return tensors_.view(index);
}

void BumpReader::check_config_against_header() const {
    const Config& c = *config_;
    const Header& h = header_;
    const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> pairs[] = {
        {"num_hidden_layers", {c.num_hidden_layers, h.num_layers}},
        {"hidden_size", {c.hidden_size, h.embed_dim}},
        {"num_attention_heads", {c.num_attention_heads, h.num_heads}},
        {"vocab_size", {c.vocab_size, h.vocab_size}},
        {"max_position_embeddings", {c.max_position_embeddings, h.context_len}},
    };
    for (const auto& [key, values] : pairs)
        if (values.first != values.second)
            throw Error(std::string("config.json says ") + key + " " +
                            std::to_string(values.first) + ", the bump header says " +
                            std::to_string(values.second),
                        config_path_.string(), {}, std::string("key '") + key + "'");
    if (c.num_attention_heads % c.num_key_value_heads != 0)
        throw Error("num_attention_heads " + std::to_string(c.num_attention_heads) +
                        " is not a multiple of num_key_value_heads " +
                        std::to_string(c.num_key_value_heads),
                    config_path_.string(), {}, "key 'num_key_value_heads'");
}

void BumpReader::verify() {
    if (v4_) return v4_->verify();
    const std::string file = path_.string();
    const Header& h = header_;
    if (tensors_.file().size() != expected_size_)
        throw Error(std::to_string(tensors_.file().size() - expected_size_) +
                        " bytes after the last slot (the file should be " +
                        std::to_string(expected_size_) + " bytes)",
                    file, expected_size_);
    if (h.model_type != model_type_llama)
        throw Error("model_type " + std::to_string(h.model_type) + ", expected 1", file, 0x0C);
    if (std::uint64_t(h.num_heads) * h.head_dim != h.embed_dim)
        throw Error(
            "num_heads * head_dim = " + std::to_string(std::uint64_t(h.num_heads) * h.head_dim) +
                ", expected embed_dim " + std::to_string(h.embed_dim),
            file, 0x24);
    if (h.aligned_embed_dim != h.embed_dim)
        throw Error("aligned_embed_dim " + std::to_string(h.aligned_embed_dim) +
                        ", expected embed_dim " + std::to_string(h.embed_dim),
                    file, 0x28);
    if (h.aligned_context != align_up(h.context_len, context_alignment))
        throw Error("aligned_context " + std::to_string(h.aligned_context) + ", expected " +
                        std::to_string(align_up(h.context_len, context_alignment)),
                    file, 0x38);
    for (std::size_t i = 0; i < h.reserved.size(); ++i)
        if (h.reserved[i] != 0)
            throw Error("reserved header bytes are not zero", file, reserved_offset + i);
    // What the runtime accepts: FP32, Q4_K, Q6_K for weights, FP32 everywhere else.
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        std::uint8_t code = dtype_table_[i];
        bool ok = is_weight_role(slots_[i].role) ? weight_dtype_of(slots_[i].ggml_type).has_value()
                                                 : code == static_cast<std::uint8_t>(Dtype::fp32);
        if (!ok)
            throw Error("dtype " + std::string(dtype_name(code)) +
                            " is not accepted by the runtime in this slot",
                        file, table_count_offset + 4 + i, slot_subject(slots_[i].name));
    }
    if (config_)
        check_config_against_header();
    else
        context_.warn(file + ": no config.json beside it (the runtime needs one)");

    // Read the file again rather than the mapping: verifying a many-GB file should not make
    // all of it resident in this process.
    Digest actual = sha256_of_file(path_, header_bytes);
    if (actual != h.checksum)
        throw Error("checksum mismatch: the header says " + hex(h.checksum) +
                        ", bytes 128 to the end hash to " + hex(actual),
                    file, checksum_offset);
}

}  // namespace ckplugin::bump
