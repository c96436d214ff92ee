#include "gguflite_test_files.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#if defined(__x86_64__) && !defined(__FLT16_MAX__)
#include <immintrin.h>
#endif

#include "ck/support/little_endian.hpp"

namespace fs = std::filesystem;

namespace gltest {
namespace {

// resize + memcpy rather than insert: GCC 12 reports false overflows for small inserts.
void append(std::vector<unsigned char>& out, const void* data, std::size_t size) {
    const std::size_t at = out.size();
    out.resize(at + size);
    if (size > 0) std::memcpy(out.data() + at, data, size);
}

// A field as the file holds it: little-endian.
template <class T>
void put(std::vector<unsigned char>& out, T v) {
    unsigned char bytes[sizeof v];
    ck::le::store(bytes, v);
    append(out, bytes, sizeof bytes);
}

// F16 rounding independent of the plugin: the compiler's _Float16 where it has one (GCC 12 on
// x86-64), else the CPU's own conversion instructions (Clang 14 on x86-64, the sanitizer tree,
// has no _Float16 without AVX512-FP16; F16C rounds to nearest even, as the conversion does), else
// (aarch64 and s390x under scripts/test-cross.sh) the definition in plain arithmetic: scaling by
// powers of two is exact, and nearbyint rounds to nearest even.
#if defined(__x86_64__) && defined(__FLT16_MAX__)
std::uint16_t f16_bits(float x) {
    return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
}
#elif defined(__x86_64__)
__attribute__((target("f16c"))) std::uint16_t f16_bits(float x) {
    const __m128i half = _mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT);
    return static_cast<std::uint16_t>(_mm_extract_epi16(half, 0));
}
#else
std::uint16_t f16_bits(float x) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return sign | 0x7e00;
    const float a = std::fabs(x);
    if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): a's exponent is e - 1
    if (a == 0 ||
        e - 1 < -14)  // subnormal: a multiple of 2^-24 (1024 of them is the smallest normal)
        return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
    auto q = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 11 - e)));  // in [1024, 2048]
    if (q == 2048) q = 1024, ++e;
    return sign | static_cast<std::uint16_t>(((e - 1 + 15) << 10) | (q - 1024));
}
#endif

float absmax(const float* w, std::uint64_t n) {
    float m = 0;
    for (std::uint64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(w[i]));
    return m;
}

int quantize(float w, float s, int lo, int hi) {
    if (s == 0) return 0;
    const float q = std::nearbyint(w / s);
    return static_cast<int>(std::clamp(q, static_cast<float>(lo), static_cast<float>(hi)));
}

}  // namespace

#if defined(__x86_64__) && defined(__FLT16_MAX__)
float f16_to_float(std::uint16_t bits) {
    return static_cast<float>(std::bit_cast<_Float16>(bits));
}
#elif defined(__x86_64__)
__attribute__((target("f16c"))) float f16_to_float(std::uint16_t bits) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}
#else
float f16_to_float(std::uint16_t bits) {
    const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    float v = exponent == 0    ? std::ldexp(static_cast<float>(mantissa), -24)
              : exponent == 31 ? (mantissa ? NAN : INFINITY)
                               : std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
    return (bits & 0x8000) ? -v : v;
}
#endif

void FileBuilder::add_f32(const std::string& name, std::vector<std::uint32_t> dims) {
    std::uint64_t n = 1;
    for (auto d : dims) n *= d;
    const std::uint64_t offset = data.size();
    for (std::uint64_t i = 0; i < n; ++i) put<float>(data, static_cast<float>(tensors.size() + i));
    tensors.push_back({name, std::move(dims), 0, offset});
}

std::vector<unsigned char> FileBuilder::bytes() const {
    std::vector<unsigned char> out;
    put<std::uint32_t>(out, magic_value);
    put<std::uint32_t>(out, version);
    put<std::uint32_t>(out, n_tensors.value_or(static_cast<std::uint32_t>(tensors.size())));
    put<std::uint32_t>(out, metadata_len.value_or(static_cast<std::uint32_t>(metadata.size())));
    append(out, metadata.data(), metadata.size());
    for (const Tensor& t : tensors) {
        put<std::uint16_t>(out, static_cast<std::uint16_t>(t.name.size()));
        append(out, t.name.data(), t.name.size());
        put<std::uint8_t>(out, static_cast<std::uint8_t>(t.dims.size()));
        for (auto d : t.dims) put<std::uint32_t>(out, d);
        put<std::uint8_t>(out, t.dtype);
        put<std::uint64_t>(out, t.offset);
    }
    append(out, data.data(), data.size());
    return out;
}

DescriptorFields FileBuilder::fields(std::size_t index) const {
    std::uint64_t at = descriptors_start();
    for (std::size_t i = 0;; ++i) {
        const Tensor& t = tensors.at(i);
        DescriptorFields f;
        f.start = at;
        f.n_dims = at + 2 + t.name.size();
        f.dims = f.n_dims + 1;
        f.dtype = f.dims + 4 * t.dims.size();
        f.offset = f.dtype + 1;
        if (i == index) return f;
        at = f.offset + 8;
    }
}

std::uint64_t FileBuilder::data_start() const {
    return tensors.empty() ? descriptors_start() : fields(tensors.size() - 1).offset + 8;
}

std::vector<unsigned char> reference_q8(const std::vector<float>& w, std::uint64_t rows,
                                        std::uint64_t cols) {
    std::vector<unsigned char> scales, values;
    for (std::uint64_t r = 0; r < rows; ++r) {
        const float* row = w.data() + r * cols;
        const std::uint16_t s16 = f16_bits(absmax(row, cols) / 127.0f);
        put<std::uint16_t>(scales, s16);
        for (std::uint64_t j = 0; j < cols; ++j)
            values.push_back(
                static_cast<unsigned char>(quantize(row[j], f16_to_float(s16), -127, 127)));
    }
    scales.insert(scales.end(), values.begin(), values.end());
    return scales;
}

std::vector<unsigned char> reference_q4(const std::vector<float>& w, std::uint64_t rows,
                                        std::uint64_t cols) {
    std::vector<unsigned char> scales, values;
    for (std::uint64_t g = 0; g < rows * cols / 64; ++g) {
        const float* group = w.data() + g * 64;
        const std::uint16_t s16 = f16_bits(absmax(group, 64) / 7.0f);
        put<std::uint16_t>(scales, s16);
        for (std::uint64_t j = 0; j < 64; j += 2) {
            const int even = quantize(group[j], f16_to_float(s16), -8, 7);
            const int odd = quantize(group[j + 1], f16_to_float(s16), -8, 7);
            values.push_back(static_cast<unsigned char>((even & 15) | ((odd & 15) << 4)));
        }
    }
    scales.insert(scales.end(), values.begin(), values.end());
    return scales;
}

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out,
                          const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--pipeline", pipeline, "-i", in.string(), "-o", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return cktest::run_ckhost(args);
}

fs::path sample() {
    return cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
}

}  // namespace gltest
