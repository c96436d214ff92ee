// ggml_validate_row_data (ggml/src/ggml-quants.c), rewritten over bytes: the float types
// element by element, the quantized types by the scale fields of each block.
#include "ck/kernels/validate.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "block_bytes.hpp"
#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/parallel.hpp"
#include "ck/support/little_endian.hpp"

namespace ck::kernels {
namespace {

using scalar::bytes_of;
using scalar::load_u16;
using scalar::load_u32;
using scalar::u8;

// Bytes per pool item: big enough that scheduling costs nothing, small enough to spread a
// tensor of a few MB over every thread.
constexpr std::size_t piece_bytes = std::size_t{4} << 20;

constexpr ScaleField d{0, ScaleEncoding::f16, "scale d"};
constexpr std::array<ScaleField, 1> d_only = {d};
constexpr std::array<ScaleField, 2> d_m = {{d, {2, ScaleEncoding::f16, "min m"}}};
constexpr std::array<ScaleField, 2> d_s = {{d, {2, ScaleEncoding::f16, "sum s"}}};
constexpr std::array<ScaleField, 2> d_dmin = {{d, {2, ScaleEncoding::f16, "scale dmin"}}};
// Block layouts (ggml-common.h): the super-block scales of these sit after the codes.
constexpr std::array<ScaleField, 2> q2_k = {
    {{80, ScaleEncoding::f16, "scale d"}, {82, ScaleEncoding::f16, "scale dmin"}}};
constexpr std::array<ScaleField, 1> q3_k = {{{108, ScaleEncoding::f16, "scale d"}}};
constexpr std::array<ScaleField, 1> q6_k = {{{208, ScaleEncoding::f16, "scale d"}}};
constexpr std::array<ScaleField, 1> tq1_0 = {{{52, ScaleEncoding::f16, "scale d"}}};
constexpr std::array<ScaleField, 1> tq2_0 = {{{64, ScaleEncoding::f16, "scale d"}}};
constexpr std::array<ScaleField, 1> q8_k = {{{0, ScaleEncoding::f32, "scale d"}}};
constexpr std::array<ScaleField, 1> mxfp4 = {{{0, ScaleEncoding::e8m0, "scale e"}}};
constexpr std::array<ScaleField, 1> iq1_m = {{{48, ScaleEncoding::iq1m_f16, "packed scale"}}};

// What one value is: 0 finite, 1 infinite, 2 NaN.
enum Kind : unsigned { finite = 0, infinite = 1, not_a_number = 2 };

template <class Bits>
unsigned classify(Bits bits, Bits exponent_mask) {
    const Bits magnitude = bits & static_cast<Bits>(~(Bits(1) << (sizeof(Bits) * 8 - 1)));
    if ((magnitude & exponent_mask) != exponent_mask) return finite;
    return magnitude == exponent_mask ? infinite : not_a_number;
}

unsigned classify_f16(std::uint16_t h) {
    return classify<std::uint16_t>(h, 0x7c00);
}

unsigned classify_field(const u8* block, const ScaleField& f) {
    const u8* p = block + f.offset;
    switch (f.encoding) {
        case ScaleEncoding::f16:
            return classify_f16(load_u16(p));
        case ScaleEncoding::f32:
            return classify<std::uint32_t>(load_u32(p), 0x7f800000u);
        case ScaleEncoding::e8m0:
            return p[0] == 0xff ? not_a_number : finite;
        case ScaleEncoding::iq1m_f16: {
            // iq1m_scale_t: the f16's four nibbles are the top nibbles of scales[0..3] as u16.
            const std::uint16_t s0 = load_u16(p), s1 = load_u16(p + 2), s2 = load_u16(p + 4),
                                s3 = load_u16(p + 6);
            return classify_f16(static_cast<std::uint16_t>((s0 >> 12) | ((s1 >> 8) & 0x00f0) |
                                                           ((s2 >> 4) & 0x0f00) | (s3 & 0xf000)));
        }
    }
    return finite;
}

// One piece's result: how many bad values, and the first one.
struct PieceResult {
    std::uint64_t count = 0;
    std::uint64_t first = 0;
    const ScaleField* field = nullptr;
    unsigned kind = finite;
};

// Elements of a float type of `size` bytes whose exponent field is `exponent_mask`. The
// count loop has no branch, so it vectorises; the first bad element is searched only in a
// piece that has one.
template <class Bits>
PieceResult check_elements(const u8* data, std::uint64_t first_index, std::size_t n,
                           Bits exponent_mask) {
    PieceResult r;
    const auto load = [&](std::size_t i) { return ck::le::load<Bits>(data + i * sizeof(Bits)); };
    for (std::size_t i = 0; i < n; ++i) r.count += (load(i) & exponent_mask) == exponent_mask;
    if (r.count == 0) return r;
    for (std::size_t i = 0; i < n; ++i) {
        if (const unsigned kind = classify<Bits>(load(i), exponent_mask); kind != finite) {
            r.first = first_index + i;
            r.kind = kind;
            break;
        }
    }
    return r;
}

PieceResult check_blocks(const u8* data, std::uint64_t first_block, std::size_t blocks,
                         std::size_t block_bytes, std::span<const ScaleField> fields) {
    PieceResult r;
    for (std::size_t b = 0; b < blocks; ++b) {
        for (const ScaleField& f : fields) {
            const unsigned kind = classify_field(data + b * block_bytes, f);
            if (kind == finite) continue;
            if (r.count++ == 0) {
                r.first = first_block + b;
                r.field = &f;
                r.kind = kind;
            }
        }
    }
    return r;
}

}  // namespace

std::span<const ScaleField> scale_fields(std::uint32_t type) noexcept {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::q4_0:
        case GgmlType::q5_0:
        case GgmlType::q8_0:
        case GgmlType::iq4_nl:
        case GgmlType::iq4_xs:
        case GgmlType::iq2_xxs:
        case GgmlType::iq2_xs:
        case GgmlType::iq2_s:
        case GgmlType::iq3_xxs:
        case GgmlType::iq3_s:
        case GgmlType::iq1_s:
        case GgmlType::q1_0:
        case GgmlType::q2_0:
            return d_only;
        case GgmlType::q4_1:
        case GgmlType::q5_1:
            return d_m;
        case GgmlType::q8_1:
            return d_s;
        case GgmlType::q4_k:
        case GgmlType::q5_k:
            return d_dmin;
        case GgmlType::q2_k:
            return q2_k;
        case GgmlType::q3_k:
            return q3_k;
        case GgmlType::q6_k:
            return q6_k;
        case GgmlType::q8_k:
            return q8_k;
        case GgmlType::tq1_0:
            return tq1_0;
        case GgmlType::tq2_0:
            return tq2_0;
        case GgmlType::mxfp4:
            return mxfp4;
        case GgmlType::iq1_m:
            return iq1_m;
        default:
            return {};
    }
}

std::string DataProblem::message() const {
    const char* what = nan ? "NaN" : "Inf";
    if (!field) return "element " + std::to_string(index) + " is " + what;
    return "block " + std::to_string(index) + " " + std::string(field->name) + " is " +
           (field->encoding == ScaleEncoding::e8m0 ? "NaN (0xff)" : what);
}

std::optional<DataProblem> check_data(std::uint32_t type, std::span<const std::byte> bytes) {
    const TypeInfo* info = find_type(type);
    if (!info || info->removed || info->block_bytes == 0) return std::nullopt;
    const std::span<const ScaleField> fields = scale_fields(type);
    const bool element_wise =
        !info->quantized && (type == static_cast<std::uint32_t>(GgmlType::f32) ||
                             type == static_cast<std::uint32_t>(GgmlType::f16) ||
                             type == static_cast<std::uint32_t>(GgmlType::bf16) ||
                             type == static_cast<std::uint32_t>(GgmlType::f64));
    if (!element_wise && fields.empty()) return std::nullopt;

    // Pieces of whole elements or blocks, fixed by the type alone.
    const std::size_t unit = info->block_bytes;
    const std::size_t units = bytes.size() / unit;
    const std::size_t per_piece = std::max<std::size_t>(1, piece_bytes / unit);
    std::vector<PieceResult> results((units + per_piece - 1) / per_piece);
    const u8* data = bytes_of(bytes.data());
    parallel_chunks(units, per_piece, [&](std::size_t begin, std::size_t end) {
        const u8* at = data + begin * unit;
        const std::size_t n = end - begin;
        PieceResult& r = results[begin / per_piece];
        switch (static_cast<GgmlType>(type)) {
            case GgmlType::f32:
                r = check_elements<std::uint32_t>(at, begin, n, 0x7f800000u);
                break;
            case GgmlType::f16:
                r = check_elements<std::uint16_t>(at, begin, n, 0x7c00);
                break;
            case GgmlType::bf16:
                r = check_elements<std::uint16_t>(at, begin, n, 0x7f80);
                break;
            case GgmlType::f64:
                r = check_elements<std::uint64_t>(at, begin, n, 0x7ff0000000000000ull);
                break;
            default:
                r = check_blocks(at, begin, n, unit, fields);
        }
        throw_if_interrupted();
    });

    std::optional<DataProblem> problem;
    for (const PieceResult& r : results) {
        if (r.count == 0) continue;
        if (!problem) problem = DataProblem{r.first, r.field, r.kind == not_a_number, 0};
        problem->count += r.count;
    }
    return problem;
}

}  // namespace ck::kernels
