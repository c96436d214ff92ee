// How every variant runs a repack path: dequantize a slice of source blocks into a small
// buffer with that variant's own (bit-exact) dequantizer, then encode the slice with that
// variant's encoder. The source is read once, block by block; no f32 copy larger than the
// 4 KiB buffer ever exists, and exactness of the dequantized values comes for free.
//
// Included by the scalar and the SIMD translation units. Everything here has internal linkage,
// so code compiled with AVX flags never stands in for a baseline copy at link time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "ck/kernels/dequant.hpp"
#include "ck/kernels/repack.hpp"

namespace ck::kernels {
namespace {

// Encodes `blocks` whole target blocks of f32 values into codes and f16 scales.
using EncodeFn = void (*)(const float* values, std::size_t blocks, std::uint8_t* codes,
                          std::uint16_t* scales, RepackError& error);

// Elements per slice: a multiple of every source block size (32, 256) and target block (64, 128).
constexpr std::size_t slice_elements = repack_slice_elements;

template <RepackTarget Target>
void repack_through_buffer(DequantFn dequant, EncodeFn encode, std::uint32_t from,
                           const std::byte* source, std::size_t n, std::uint8_t* codes,
                           std::uint16_t* scales, RepackError& error) {
    const TypeInfo& info = *find_type(from);
    alignas(64) float buffer[slice_elements];
    for (std::size_t done = 0; done < n; done += slice_elements) {
        const std::size_t count = n - done < slice_elements ? n - done : slice_elements;
        dequant(source + done / info.block_size * info.block_bytes, buffer, count);
        encode(buffer, count / block_elements(Target), codes + code_bytes(Target, done),
               scales + scale_count(Target, done), error);
    }
}

// The fused SIMD paths (Q8_0 -> Int8, Q4_0 -> NF4) walk 32-element source blocks of
// `BlockBytes` (f16 scale first) slice by slice: `block_scales(blocks, count, BlockBytes, d)`
// widens a slice's scales at once (the variant's own code), then
// `slice(blocks, d, done, count)` decodes and encodes the slice starting at element `done`.
template <std::size_t BlockBytes, class ScalesFn, class SliceFn>
void for_each_block_slice(const std::byte* source, std::size_t n, ScalesFn block_scales,
                          SliceFn&& slice) {
    for (std::size_t done = 0; done < n; done += slice_elements) {
        const std::size_t count = n - done < slice_elements ? n - done : slice_elements;
        const std::byte* blocks = source + done / 32 * BlockBytes;
        alignas(64) float d[32];
        block_scales(blocks, count / 32, BlockBytes, d);
        slice(blocks, static_cast<const float*>(d), done, count);
    }
}

// `Kernels` names one variant: `static const DequantTable& dequant()`, and the encoders
// `encode_int8` and `encode_nf4` with the EncodeFn signature.
template <class Kernels, GgmlType From, RepackTarget Target>
void repack_path(const std::byte* source, std::size_t n, std::uint8_t* codes, std::uint16_t* scales,
                 RepackError& error) {
    const auto from = static_cast<std::uint32_t>(From);
    repack_through_buffer<Target>(
        Kernels::dequant().fn[from],
        Target == RepackTarget::int8 ? Kernels::encode_int8 : Kernels::encode_nf4, from, source, n,
        codes, scales, error);
}

// The paths of docs/formats/repack-blocks.md, all run by one variant.
template <class Kernels>
RepackTable build_repack_table(Isa isa) {
    RepackTable t;
    t.isa = isa;
    auto int8 = [&](GgmlType from, RepackFn fn) {
        t.to_int8[static_cast<std::uint32_t>(from)] = fn;
    };
    auto nf4 = [&](GgmlType from, RepackFn fn) { t.to_nf4[static_cast<std::uint32_t>(from)] = fn; };
    using enum GgmlType;
    constexpr RepackTarget to_int8 = RepackTarget::int8, to_nf4 = RepackTarget::nf4;
    int8(q8_0, repack_path<Kernels, q8_0, to_int8>);
    int8(q4_k, repack_path<Kernels, q4_k, to_int8>);
    int8(q5_k, repack_path<Kernels, q5_k, to_int8>);
    int8(q6_k, repack_path<Kernels, q6_k, to_int8>);
    int8(f32, repack_path<Kernels, f32, to_int8>);
    int8(f16, repack_path<Kernels, f16, to_int8>);
    int8(bf16, repack_path<Kernels, bf16, to_int8>);
    nf4(q4_0, repack_path<Kernels, q4_0, to_nf4>);
    nf4(f32, repack_path<Kernels, f32, to_nf4>);
    nf4(f16, repack_path<Kernels, f16, to_nf4>);
    nf4(bf16, repack_path<Kernels, bf16, to_nf4>);
    return t;
}

// Statistics of one slice (one encoder call) in 16 f32 lanes (element i of the slice in lane
// i % 16), reduced in the fixed order lane i + lane i+8, then i + i+4, i + i+2, i + i+1 (what an
// 8- or 16-wide register does) and added to the f64 totals once per slice.
inline float reduce_lanes(float* lanes) {
    for (int width = 8; width >= 1; width /= 2)
        for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    return lanes[0];
}

inline void add_slice_sums(RepackError& error, float squared_error, float squared_source,
                           float max_abs_error, std::size_t elements) {
    // A NaN (from NaN or infinite values) takes its sign and payload from whichever operand the
    // hardware propagated, which differs between variants: keep one canonical NaN.
    auto canonical = [](double sum) {
        return sum == sum ? sum : std::numeric_limits<double>::quiet_NaN();
    };
    error.squared_error = canonical(error.squared_error + static_cast<double>(squared_error));
    error.squared_source = canonical(error.squared_source + static_cast<double>(squared_source));
    if (max_abs_error > error.max_abs_error) error.max_abs_error = max_abs_error;
    error.elements += elements;
}

}  // namespace
}  // namespace ck::kernels
