#include "bump_v3_reader.hpp"

#include <limits>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
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

ModelHeader BumpV3Reader::open(const fs::path& path) {
    header_ = decode_header(map_file(path, version));
    expect_version(header_.version, version);
    const std::vector<std::uint32_t> types = read_dtype_table();
    check_head_geometry();
    const std::string geometry_source = find_kv_heads_and_ffn(types);
    lay_out_slots(types, geometry_source);

    ModelHeader out = model_header(format_facts(geometry_source));
    if (config_) out.metadata = config_->entries;
    return out;
}

std::vector<std::uint32_t> BumpV3Reader::read_dtype_table() {
    const Header& h = header_;
    const std::uint64_t count = table_count();
    if (count != slot_count(h.num_layers))
        throw Error("dtype table has " + std::to_string(count) + " entries, expected 14 L + 4 = " +
                        std::to_string(slot_count(h.num_layers)) + " for num_layers " +
                        std::to_string(h.num_layers),
                    name(), table_count_offset);
    read_table(
        count,
        [](std::uint8_t code, std::size_t) {
            return ggml_type_of(code) ? "" : "has no known byte layout";
        },
        [&](std::size_t i) {
            const auto role = slot_roles(h.num_layers).at(i);
            return slot_subject(slot_name(role.first, role.second));
        });
    std::vector<std::uint32_t> types;
    for (std::uint8_t code : dtype_table()) types.push_back(*ggml_type_of(code));
    return types;
}

void BumpV3Reader::check_head_geometry() {
    const std::string& file = name();
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
    // Hkv and F are not in a v3 header: find_kv_heads_and_ffn infers them.
    geometry_ = Geometry{{h.embed_dim, h.num_heads, 0, h.head_dim},
                         h.num_layers,
                         h.vocab_size,
                         h.context_len,
                         static_cast<std::uint32_t>(h.aligned_head_dim),
                         0};
}

std::string BumpV3Reader::find_kv_heads_and_ffn(std::span<const std::uint32_t> types) {
    const std::uint64_t payload = file_size() - payload_start();
    config_.reset();
    config_path_ = path().parent_path() / config_file_name;
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
                    name());
    geometry_.kv_heads = found[0].first;
    geometry_.ffn = found[0].second;
    return "inferred from the file size (no config.json)";
}

void BumpV3Reader::lay_out_slots(std::span<const std::uint32_t> types,
                                 const std::string& geometry_source) {
    try {
        slots_ = layout_slots(geometry_, types);
    } catch (const Error& e) {
        throw e.with_file(name());
    }
    std::vector<TensorInfo> entries;
    for (const Slot& s : slots_) entries.push_back({s.name, s.ggml_type, s.ne, s.bytes});
    place_entries(std::move(entries), "the header, dtype table and " + geometry_source, "slot");
    if (config_) {
        try {
            check_config_against_header();
        } catch (const Error& e) {
            context_.warn(config_path_.string() + ": " + e.message());
        }
    }
}

Facts BumpV3Reader::format_facts(const std::string& geometry_source) const {
    const Header& h = header_;
    Facts facts = {{"magic", std::string(magic)},
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
                   {"checksum", hex(h.checksum)}};
    const Facts table = table_facts();
    facts.insert(facts.end(), table.begin(), table.end());
    facts.insert(facts.end(),
                 {{"num_kv_heads", std::to_string(geometry_.kv_heads)},
                  {"intermediate_size", std::to_string(geometry_.ffn)},
                  {"geometry from", geometry_source},
                  {"config.json", config_ ? config_path_.string() : std::string("absent")}});
    return facts;
}

void BumpV3Reader::check_config_against_header() const {
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

void BumpV3Reader::verify() {
    const std::string& file = name();
    const Header& h = header_;
    expect_no_trailing_bytes("slot");
    expect_llama_heads(h.model_type, h.num_heads, h.head_dim, h.embed_dim);
    if (h.aligned_embed_dim != h.embed_dim)
        throw Error("aligned_embed_dim " + std::to_string(h.aligned_embed_dim) +
                        ", expected embed_dim " + std::to_string(h.embed_dim),
                    file, 0x28);
    if (h.aligned_context != align_up(h.context_len, context_alignment))
        throw Error("aligned_context " + std::to_string(h.aligned_context) + ", expected " +
                        std::to_string(align_up(h.context_len, context_alignment)),
                    file, 0x38);
    expect_reserved_zero(reserved_offset);
    // What the runtime accepts: FP32, Q4_K, Q6_K for weights, FP32 everywhere else.
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        std::uint8_t code = dtype_table()[i];
        bool ok = is_weight_role(slots_[i].role) ? weight_dtype_of(slots_[i].ggml_type).has_value()
                                                 : code == code_of(Dtype::fp32);
        if (!ok)
            throw Error("dtype " + std::string(dtype_name(code)) +
                            " is not accepted by the runtime in this slot",
                        file, table_count_offset + 4 + i, slot_subject(slots_[i].name));
    }
    if (config_)
        check_config_against_header();
    else
        context_.warn(file + ": no config.json beside it (the runtime needs one)");

    expect_checksum(h.checksum, checksum_offset);
}

}  // namespace ckplugin::bump
