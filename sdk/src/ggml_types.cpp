#include "ck/ggml_types.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

namespace ck {
namespace {

constexpr TypeInfo removed(std::uint32_t id) {
    return {id, "removed", 0, 0, true, false, false};
}
constexpr TypeInfo plain(std::uint32_t id, std::string_view name, std::uint32_t bytes, bool deq) {
    return {id, name, 1, bytes, false, false, deq};
}
constexpr TypeInfo block(std::uint32_t id, std::string_view name, std::uint32_t size,
                         std::uint32_t bytes, bool deq = true) {
    return {id, name, size, bytes, false, true, deq};
}

// Indexed by id; the table in gguf.md, with ggml's names.
constexpr std::array<TypeInfo, ggml_type_count> table = {{
    plain(0, "f32", 4, true),
    plain(1, "f16", 2, true),
    block(2, "q4_0", 32, 18),
    block(3, "q4_1", 32, 20),
    removed(4),
    removed(5),
    block(6, "q5_0", 32, 22),
    block(7, "q5_1", 32, 24),
    block(8, "q8_0", 32, 34),
    block(9, "q8_1", 32, 36, false),
    block(10, "q2_K", 256, 84),
    block(11, "q3_K", 256, 110),
    block(12, "q4_K", 256, 144),
    block(13, "q5_K", 256, 176),
    block(14, "q6_K", 256, 210),
    block(15, "q8_K", 256, 292, false),
    block(16, "iq2_xxs", 256, 66),
    block(17, "iq2_xs", 256, 74),
    block(18, "iq3_xxs", 256, 98),
    block(19, "iq1_s", 256, 50),
    block(20, "iq4_nl", 32, 18),
    block(21, "iq3_s", 256, 110),
    block(22, "iq2_s", 256, 82),
    block(23, "iq4_xs", 256, 136),
    plain(24, "i8", 1, false),
    plain(25, "i16", 2, false),
    plain(26, "i32", 4, false),
    plain(27, "i64", 8, false),
    plain(28, "f64", 8, false),
    block(29, "iq1_m", 256, 56),
    plain(30, "bf16", 2, true),
    removed(31),
    removed(32),
    removed(33),
    block(34, "tq1_0", 256, 54),
    block(35, "tq2_0", 256, 66),
    removed(36),
    removed(37),
    removed(38),
    block(39, "mxfp4", 32, 17),
    block(40, "nvfp4", 64, 36),
    block(41, "q1_0", 128, 18),
    block(42, "q2_0", 64, 18),
}};

bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    }
    return true;
}

}  // namespace

const TypeInfo* find_type(std::uint32_t id) noexcept {
    return id < table.size() ? &table[id] : nullptr;
}

const TypeInfo* find_type(std::string_view name) noexcept {
    for (const auto& t : table) {
        if (!t.removed && same_name(t.name, name)) return &t;
    }
    return nullptr;
}

std::string_view type_name(std::uint32_t id) noexcept {
    static thread_local std::array<char, 32> buffer{};
    const TypeInfo* t = find_type(id);
    if (t && !t->removed) return t->name;
    const char* what = t ? "removed" : "unknown";
    int n = std::snprintf(buffer.data(), buffer.size(), "%s(%u)", what, id);
    return {buffer.data(), static_cast<std::size_t>(n)};
}

std::span<const TypeInfo> type_table() noexcept {
    return table;
}

std::optional<std::uint64_t> row_bytes(std::uint32_t type, std::uint64_t n) noexcept {
    const TypeInfo* t = find_type(type);
    if (!t || t->removed || n % t->block_size != 0) return std::nullopt;
    std::uint64_t blocks = n / t->block_size;
    if (blocks > std::numeric_limits<std::uint64_t>::max() / t->block_bytes) return std::nullopt;
    return blocks * t->block_bytes;
}

std::optional<std::uint64_t> element_count(std::span<const std::int64_t> ne) noexcept {
    // The product of the non-zero dimensions must fit in int64 even when another dimension
    // is 0: a shape such as [2^32, 2^32, 0] is corrupt, not an empty tensor.
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t product = 1;
    bool empty = false;
    for (std::int64_t d : ne) {
        if (d < 0) return std::nullopt;
        auto u = static_cast<std::uint64_t>(d);
        if (u == 0) {
            empty = true;
            continue;
        }
        if (product > max / u) return std::nullopt;
        product *= u;
    }
    return empty ? 0 : product;
}

std::optional<std::uint64_t> tensor_bytes(std::uint32_t type,
                                          std::span<const std::int64_t> ne) noexcept {
    auto count = element_count(ne);
    if (!count) return std::nullopt;
    std::uint64_t ne0 = ne.empty() ? 1 : static_cast<std::uint64_t>(ne[0]);
    auto row = row_bytes(type, ne0);
    if (!row) return std::nullopt;
    if (ne0 == 0) return 0;
    std::uint64_t rows = *count / ne0;
    if (rows != 0 && *row > std::numeric_limits<std::uint64_t>::max() / rows) return std::nullopt;
    return *row * rows;
}

}  // namespace ck
