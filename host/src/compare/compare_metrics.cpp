#include "compare/compare_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ck/cpu.hpp"

namespace ckhost::compare {
namespace {

constexpr std::size_t lanes = 8;

// Per lane: sum a^2, b^2, ab, (a-b)^2, max |a-b|, and the weighted w a^2, w (a-b)^2.
using LaneSums = double[7][lanes];

// Pair (x, y), of weight w, into lane k.
template <bool Weighted>
inline void add_pair(LaneSums& sums, std::size_t k, double x, double y, double w) {
    const double d = x - y;
    sums[0][k] += x * x;
    sums[1][k] += y * y;
    sums[2][k] += x * y;
    sums[3][k] += d * d;
    sums[4][k] = std::max(sums[4][k], std::fabs(d));
    if constexpr (Weighted) {
        sums[5][k] += w * x * x;
        sums[6][k] += w * d * d;
    }
}

// The pairs past the last whole group of lanes (`tail` of them), each in the lane of its place
// in the group; then the lanes added into `sums` in lane order.
template <bool Weighted>
void finish_lanes(const float* a, const float* b, std::size_t tail, const float* weights,
                  LaneSums& lane_sums, std::size_t n, ErrorSums& sums) {
    for (std::size_t k = 0; k < tail; ++k)
        add_pair<Weighted>(lane_sums, k, a[k], b[k], Weighted ? weights[k] : 0.0);
    for (std::size_t k = 0; k < lanes; ++k) {
        sums.sum_a2 += lane_sums[0][k];
        sums.sum_b2 += lane_sums[1][k];
        sums.sum_ab += lane_sums[2][k];
        sums.sum_d2 += lane_sums[3][k];
        sums.max_abs = std::max(sums.max_abs, lane_sums[4][k]);
        sums.weighted_a2 += lane_sums[5][k];
        sums.weighted_d2 += lane_sums[6][k];
    }
    sums.elements += n;
    if (Weighted) sums.weighted_elements += n;
}

// One pass over the pairs in `lanes` independent accumulators: pair i goes to lane i % lanes,
// the lanes are added in a fixed order at the end. No fused multiply-add anywhere, so every
// instruction set gives the same bits, and the result depends on the values and n alone.
template <bool Weighted>
void accumulate_lanes(const float* a, const float* b, std::size_t n, const float* weights,
                      ErrorSums& sums) {
    LaneSums lane_sums = {};
    const std::size_t whole = n / lanes * lanes;
    for (std::size_t i = 0; i < whole; i += lanes)
        for (std::size_t k = 0; k < lanes; ++k)
            add_pair<Weighted>(lane_sums, k, a[i + k], b[i + k], Weighted ? weights[i + k] : 0.0);
    finish_lanes<Weighted>(a + whole, b + whole, n - whole, weights ? weights + whole : nullptr,
                           lane_sums, n, sums);
}

#if defined(__x86_64__)
// The eight lanes as two 256-bit registers each (AVX2, no FMA): lane k of a sum is element k of
// the pair `lo` (lanes 0-3) and `hi` (lanes 4-7), and gets the same additions, in the same order,
// as the baseline's lane k. Written with intrinsics: the compiler's own vectorization of the
// baseline spills its 128-bit registers.
struct WideLanes {
    __m256d lo, hi;
};

[[gnu::target("avx2")]] inline void store_lanes(const WideLanes& sum, double* lanes_out) {
    _mm256_storeu_pd(lanes_out, sum.lo);
    _mm256_storeu_pd(lanes_out + 4, sum.hi);
}

// Half a group: four pairs into lanes `lane`..`lane + 3` of each sum (`half` 0 or 1).
template <bool Weighted>
[[gnu::target("avx2")]] inline void add_half(const float* a, const float* b, const float* w,
                                             std::size_t half, WideLanes& a2, WideLanes& b2,
                                             WideLanes& ab, WideLanes& d2, __m256d& peak,
                                             WideLanes& wa2, WideLanes& wd2) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(a)), y = _mm256_cvtps_pd(_mm_loadu_ps(b));
    const __m256d d = _mm256_sub_pd(x, y);
    __m256d* lanes_of[4] = {half ? &a2.hi : &a2.lo, half ? &b2.hi : &b2.lo, half ? &ab.hi : &ab.lo,
                            half ? &d2.hi : &d2.lo};
    *lanes_of[0] = _mm256_add_pd(*lanes_of[0], _mm256_mul_pd(x, x));
    *lanes_of[1] = _mm256_add_pd(*lanes_of[1], _mm256_mul_pd(y, y));
    *lanes_of[2] = _mm256_add_pd(*lanes_of[2], _mm256_mul_pd(x, y));
    *lanes_of[3] = _mm256_add_pd(*lanes_of[3], _mm256_mul_pd(d, d));
    // The largest |d| is the same whatever lanes it went through: one register for all eight.
    peak = _mm256_max_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), d), peak);
    if constexpr (Weighted) {
        const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(w));
        __m256d& wx = half ? wa2.hi : wa2.lo;
        __m256d& wd = half ? wd2.hi : wd2.lo;
        wx = _mm256_add_pd(wx, _mm256_mul_pd(_mm256_mul_pd(v, x), x));
        wd = _mm256_add_pd(wd, _mm256_mul_pd(_mm256_mul_pd(v, d), d));
    }
}

template <bool Weighted>
[[gnu::target("avx2")]] void accumulate_wide(const float* a, const float* b, std::size_t n,
                                             const float* weights, ErrorSums& sums) {
    const __m256d zero = _mm256_setzero_pd();
    WideLanes a2{zero, zero}, b2{zero, zero}, ab{zero, zero}, d2{zero, zero};
    WideLanes wa2{zero, zero}, wd2{zero, zero};
    __m256d peak = zero;
    const std::size_t whole = n / lanes * lanes;
    for (std::size_t i = 0; i < whole; i += lanes)
        for (std::size_t half = 0; half < 2; ++half) {
            const std::size_t at = i + 4 * half;
            add_half<Weighted>(a + at, b + at, Weighted ? weights + at : nullptr, half, a2, b2, ab,
                               d2, peak, wa2, wd2);
        }
    // The lanes as the baseline holds them; the tail and the combination are its own code.
    LaneSums lane_sums;
    const WideLanes* all[7] = {&a2, &b2, &ab, &d2, &a2, &wa2, &wd2};
    for (int k = 0; k < 7; ++k) store_lanes(*all[k], lane_sums[k]);
    _mm256_storeu_pd(lane_sums[4], peak);
    _mm256_storeu_pd(lane_sums[4] + 4, peak);
    finish_lanes<Weighted>(a + whole, b + whole, n - whole, weights ? weights + whole : nullptr,
                           lane_sums, n, sums);
}
#endif

std::optional<double> finite(double value) {
    return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

// 10 log10(signal / noise), nullopt where it is not a finite number.
std::optional<double> decibels(double signal, double noise) {
    if (noise <= 0 || signal <= 0) return std::nullopt;
    return finite(10.0 * std::log10(signal / noise));
}

}  // namespace

void ErrorSums::add(const ErrorSums& other) {
    elements += other.elements;
    sum_a2 += other.sum_a2;
    sum_b2 += other.sum_b2;
    sum_ab += other.sum_ab;
    sum_d2 += other.sum_d2;
    max_abs = std::max(max_abs, other.max_abs);
    weighted_elements += other.weighted_elements;
    weighted_a2 += other.weighted_a2;
    weighted_d2 += other.weighted_d2;
}

void NonFinite::add(const NonFinite& other) {
    nan_a += other.nan_a;
    inf_a += other.inf_a;
    nan_b += other.nan_b;
    inf_b += other.inf_b;
}

void accumulate(const float* a, const float* b, std::size_t n, const float* weights,
                ErrorSums& sums) {
#if defined(__x86_64__)
    // Within --isa, as the kernels: chosen once.
    static const bool avx2 = ck::selected_isa() >= ck::Isa::avx2;
    if (avx2)
        return weights ? accumulate_wide<true>(a, b, n, weights, sums)
                       : accumulate_wide<false>(a, b, n, nullptr, sums);
#endif
    if (weights)
        accumulate_lanes<true>(a, b, n, weights, sums);
    else
        accumulate_lanes<false>(a, b, n, nullptr, sums);
}

NonFinite count_non_finite(const float* a, const float* b, std::size_t n) {
    NonFinite found;
    for (std::size_t i = 0; i < n; ++i) {
        found.nan_a += std::isnan(a[i]) ? 1 : 0;
        found.inf_a += std::isinf(a[i]) ? 1 : 0;
        found.nan_b += std::isnan(b[i]) ? 1 : 0;
        found.inf_b += std::isinf(b[i]) ? 1 : 0;
    }
    return found;
}

Figures figures_of(const ErrorSums& s) {
    Figures f;
    if (s.elements == 0) return f;
    f.identical = s.sum_d2 == 0;
    const auto n = static_cast<double>(s.elements);
    f.rmse = finite(std::sqrt(s.sum_d2 / n));
    f.max_abs = finite(s.max_abs);
    if (s.sum_a2 > 0 && !f.identical) f.relative = finite(std::sqrt(s.sum_d2 / s.sum_a2));
    if (f.identical) f.relative = 0.0;
    if (s.sum_a2 > 0 && s.sum_b2 > 0) f.cosine = finite(s.sum_ab / std::sqrt(s.sum_a2 * s.sum_b2));
    f.snr_db = decibels(s.sum_a2, s.sum_d2);
    if (s.weighted_elements > 0) {
        if (s.weighted_a2 > 0) f.weighted_error = finite(s.weighted_d2 / s.weighted_a2);
        f.weighted_snr_db = decibels(s.weighted_a2, s.weighted_d2);
    }
    return f;
}

double snr_for_sorting(const Figures& f) {
    if (f.snr_db) return *f.snr_db;
    return f.identical ? std::numeric_limits<double>::infinity()
                       : -std::numeric_limits<double>::infinity();
}

}  // namespace ckhost::compare
