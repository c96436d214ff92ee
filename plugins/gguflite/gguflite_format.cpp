#include "gguflite_format.hpp"

#include <array>

#include "ck/enum_names.hpp"

namespace ckplugin::gguflite {
namespace {

constexpr std::array<std::string_view, dtype_count> dtype_names = {"F32", "F16", "Q8_per_channel",
                                                                   "Q4_per_group_64"};
constexpr std::array<std::string_view, dtype_count> scheme_names = {"f32", "f16", "q8", "q4"};

}  // namespace

std::string_view dtype_name(Dtype d) noexcept {
    return ck::enum_name(dtype_names, d);
}

std::string_view scheme_name(Dtype d) noexcept {
    return ck::enum_name(scheme_names, d);
}

std::optional<Dtype> dtype_from_scheme(std::string_view scheme) noexcept {
    return ck::enum_from_name<Dtype>(scheme_names, scheme);
}

std::optional<std::uint64_t> element_count(std::span<const std::uint32_t> dims) noexcept {
    std::uint64_t n = 1;
    for (std::uint32_t d : dims)
        if (__builtin_mul_overflow(n, std::uint64_t{d}, &n)) return std::nullopt;
    return n;
}

QuantLayout quant_layout(Dtype d, std::uint64_t rows, std::uint64_t cols) noexcept {
    QuantLayout l;
    l.rows = rows;
    l.cols = cols;
    l.scales_per_row = d == Dtype::q4 ? cols / q4_group : 1;
    l.row_value_bytes = d == Dtype::q4 ? cols / 2 : cols;
    return l;
}

std::optional<std::uint64_t> data_bytes(Dtype d, std::span<const std::uint32_t> dims) noexcept {
    auto n = element_count(dims);
    if (!n) return std::nullopt;
    std::uint64_t bytes = 0;
    switch (d) {
        case Dtype::f32:
            if (__builtin_mul_overflow(*n, std::uint64_t{4}, &bytes)) return std::nullopt;
            return bytes;
        case Dtype::f16:
            if (__builtin_mul_overflow(*n, std::uint64_t{2}, &bytes)) return std::nullopt;
            return bytes;
        case Dtype::q8:
        case Dtype::q4: {
            if (dims.size() != 2) return std::nullopt;
            if (d == Dtype::q4 && dims[1] % q4_group != 0) return std::nullopt;
            // Rows and cols are u32, so scales and values stay far below 2^64 once n fits.
            const QuantLayout l = quant_layout(d, dims[0], dims[1]);
            if (__builtin_add_overflow(l.scale_bytes(), l.value_bytes(), &bytes))
                return std::nullopt;
            return bytes;
        }
    }
    return std::nullopt;
}

}  // namespace ckplugin::gguflite
