// The figures of `ckhost compare` (docs/cli.md, docs/decisions/0060-compare.md): sums in double
// over every pair of values of a tensor, or of a group of tensors, from which the RMSE, the
// relative error, the cosine similarity and the SNR follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ckhost::compare {

// What a tensor (or a group) adds up to. Groups add their tensors' sums, so a summary's figures
// weigh each tensor by its energy, as one long tensor would.
struct ErrorSums {
    std::uint64_t elements = 0;
    double sum_a2 = 0;  // sum a^2: the reference's energy
    double sum_b2 = 0;
    double sum_ab = 0;
    double sum_d2 = 0;   // sum (a - b)^2
    double max_abs = 0;  // max |a - b|
    // With --imatrix, over the tensors that have an entry: sum_j w_j a_j^2 and
    // sum_j w_j (a_j - b_j)^2, w_j the weight of the value's column (the quantizers' weighting).
    std::uint64_t weighted_elements = 0;
    double weighted_a2 = 0;
    double weighted_d2 = 0;

    void add(const ErrorSums& other);
};

// Values that are not numbers, counted per side: they make every sum meaningless, so such a
// tensor is reported with its counts and no figures, and left out of the summaries.
struct NonFinite {
    std::uint64_t nan_a = 0;
    std::uint64_t inf_a = 0;
    std::uint64_t nan_b = 0;
    std::uint64_t inf_b = 0;

    bool any() const { return nan_a + inf_a + nan_b + inf_b != 0; }
    void add(const NonFinite& other);
};

// Adds the n pairs a[i], b[i] to `sums`; with `weights` (one per pair, or nullptr) the weighted
// sums too. The additions run in eight lanes combined in a fixed order, so the result depends on
// the values and n alone (never on the thread that ran it) and the loop vectorizes.
void accumulate(const float* a, const float* b, std::size_t n, const float* weights,
                ErrorSums& sums);
// The NaN and infinite values among a[0..n) and b[0..n).
NonFinite count_non_finite(const float* a, const float* b, std::size_t n);

// The figures of a set of sums. Each is nullopt where it is not a number: the SNR and the relative
// error of identical values (no error: SNR +infinity), the relative error and SNR when A has no
// energy, the cosine when either side is all zeros.
struct Figures {
    bool identical = false;  // sum (a - b)^2 = 0: B holds exactly A's values
    std::optional<double> rmse;
    std::optional<double> max_abs;
    std::optional<double> relative;  // RMSE / RMS of A = sqrt(sum_d2 / sum_a2)
    std::optional<double> cosine;
    std::optional<double> snr_db;  // 10 log10(sum_a2 / sum_d2)
    // With --imatrix: sum w d^2 / sum w a^2, and 10 log10 of its inverse.
    std::optional<double> weighted_error;
    std::optional<double> weighted_snr_db;
};
Figures figures_of(const ErrorSums& sums);

// An SNR in dB for sorting: +infinity for identical values, -infinity when there is none.
double snr_for_sorting(const Figures& f);

}  // namespace ckhost::compare
