#include "source_values.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/little_endian.hpp"

namespace ckplugin::gguflite {
using namespace ck;
namespace {

template <class Int>
float from_int(const std::byte* p, std::uint64_t& inexact) {
    const auto v = ck::le::load<Int>(p);
    const auto f = static_cast<float>(v);
    // 2^63 is the first float an int64 cannot hold; below it the conversion back is defined.
    const bool fits = f < 0x1p63f && f >= -0x1p63f;
    inexact += !fits || static_cast<std::int64_t>(f) != static_cast<std::int64_t>(v);
    return f;
}

float from_f64(const std::byte* p, std::uint64_t& inexact) {
    const auto v = ck::le::load<double>(p);
    const auto f = static_cast<float>(v);
    inexact += static_cast<double>(f) != v && v == v;
    return f;
}

// The converter for one element of a non-float source type (chosen once per tensor).
SourceValues::ElementFn element_converter(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::i8:
            return from_int<std::int8_t>;
        case GgmlType::i16:
            return from_int<std::int16_t>;
        case GgmlType::i32:
            return from_int<std::int32_t>;
        case GgmlType::i64:
            return from_int<std::int64_t>;
        default:
            return from_f64;
    }
}

}  // namespace

SourceValues::SourceValues(const TensorPlan& plan, std::span<const std::byte> bytes,
                           const kernels::DequantTable& table)
    : bytes_(bytes) {
    const TypeInfo& info = *find_type(plan.source_type);
    block_size_ = info.block_size;
    block_bytes_ = info.block_bytes;
    if (plan.source == Source::convert_int) {
        convert_ = element_converter(plan.source_type);
    } else {
        dequant_ = table.fn[plan.source_type];
        if (!dequant_)
            throw tensor_error("no dequantization kernel for type " + std::string(info.name),
                               plan.name);
    }
}

std::span<const std::byte> SourceValues::bytes_of(std::uint64_t first, std::uint64_t n) const {
    const std::uint64_t begin = first / block_size_ * block_bytes_;
    const std::uint64_t end = (first + n + block_size_ - 1) / block_size_ * block_bytes_;
    return bytes_.subspan(begin, end - begin);
}

void SourceValues::read(std::uint64_t first, std::uint64_t n, float* out) {
    const std::byte* src = bytes_of(first, n).data();
    if (dequant_) {
        dequant_(src, out, n);
        return;
    }
    // Counted locally, then added: read() runs on several threads at once for one tensor.
    std::uint64_t inexact = 0;
    for (std::uint64_t i = 0; i < n; ++i, src += block_bytes_) out[i] = convert_(src, inexact);
    inexact_ += inexact;
}

}  // namespace ckplugin::gguflite
