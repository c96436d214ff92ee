// How a repacked weight appears in a ModelHeader, shared by the repack transform and the
// safetensors reader and writer (README.md, "Representation"):
//
//   X          i8 (the u8 codes, byte for byte)  Int8: ne [K, M]     NF4: ne [K/2, M]
//   X.minmax   f16                               Int8: ne [2, L/128] (min, max per block)
//   X.absmax   f16                               NF4:  ne [L/64]
//   metadata   "ckhost.repack.X" = "int8-minmax-128" | "nf4-absmax-64"
//
// ggml has no u8 type; i8 has the right size, and the metadata key says what the bytes mean.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/ggml_types.hpp"
#include "ck/model.hpp"

namespace ck::repack {

inline constexpr std::string_view metadata_prefix = conventions::repack_prefix;
inline constexpr std::string_view int8_format = "int8-minmax-128";
inline constexpr std::string_view nf4_format = "nf4-absmax-64";

inline constexpr auto codes_type = static_cast<std::uint32_t>(GgmlType::i8);
inline constexpr auto scales_type = static_cast<std::uint32_t>(GgmlType::f16);

// The suffix of the scales tensor of a format, or empty for an unknown format.
inline std::string_view scales_suffix(std::string_view format) {
    if (format == int8_format) return ".minmax";
    if (format == nf4_format) return ".absmax";
    return {};
}

inline std::string metadata_key(std::string_view tensor) {
    return std::string(metadata_prefix) + std::string(tensor);
}

// The shapes a format gives the codes and scales of a tensor of `elements` (L) values in rows
// of `row_length` (K); nullopt when the format's rules do not allow it.
struct PairShapes {
    std::vector<std::int64_t> codes, scales;
};

inline std::optional<PairShapes> pair_shapes(std::string_view format, std::uint64_t row_length,
                                             std::uint64_t elements) {
    if (row_length == 0 || elements % row_length != 0) return std::nullopt;
    const auto rows = static_cast<std::int64_t>(elements / row_length);
    if (format == int8_format && elements % 128 == 0)
        return PairShapes{{static_cast<std::int64_t>(row_length), rows},
                          {2, static_cast<std::int64_t>(elements / 128)}};
    if (format == nf4_format && elements % 64 == 0 && row_length % 2 == 0)
        return PairShapes{{static_cast<std::int64_t>(row_length / 2), rows},
                          {static_cast<std::int64_t>(elements / 64)}};
    return std::nullopt;
}

// Checks that `codes` and `scales` form a valid pair of `format`; the problem otherwise.
inline std::optional<std::string> check_pair(std::string_view format, const TensorInfo& codes,
                                             const TensorInfo* scales) {
    const std::string suffix(scales_suffix(format));
    if (suffix.empty()) return "unknown repacked format '" + std::string(format) + "'";
    if (codes.type != codes_type || codes.ne.size() != 2)
        return "repacked codes must be a 2-D u8 (i8) tensor, not " +
               std::string(type_name(codes.type)) + " " + codes.shape_string();
    const auto width = static_cast<std::uint64_t>(codes.ne[0]);
    const std::uint64_t elements = codes.elements() * (format == nf4_format ? 2 : 1);
    const auto shapes = pair_shapes(format, format == nf4_format ? 2 * width : width, elements);
    if (!shapes)
        return std::string(format) + " needs a multiple of " +
               (format == nf4_format ? "64" : "128") + " elements, " + codes.shape_string() +
               " does not give one";
    if (!scales) return "its scales tensor '" + codes.name + suffix + "' is missing";
    if (scales->type != scales_type || scales->ne != shapes->scales) {
        TensorInfo expected;
        expected.ne = shapes->scales;
        return "its scales tensor '" + scales->name + "' is " +
               std::string(type_name(scales->type)) + " " + scales->shape_string() +
               ", expected f16 " + expected.shape_string();
    }
    return std::nullopt;
}

}  // namespace ck::repack
