// The parts of compare's HTML report (compare_html*.cpp): the helpers they share, the charts
// (inline SVG) and the tables.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "compare/compare_summary.hpp"

namespace ckhost::compare {

namespace html {

inline constexpr const char* identical_colour = "#2166ac";
inline constexpr const char* non_finite_colour = "#000000";
inline constexpr const char* missing_colour = "#d9d9d9";

// Text for HTML and SVG: & < > " escaped.
std::string escape(std::string_view text);
// "%.Nf".
std::string fixed(double value, int decimals);

// The SNR colours, one scale for every chart of the report (so B files compare by eye): from
// the lowest finite SNR of any compared tensor (rounded down) to the highest (rounded up).
struct SnrScale {
    explicit SnrScale(const Report& report);
    std::string colour(double snr) const;
    // A tensor's colour, by its status and SNR; nullptr (no such tensor) is "not compared".
    std::string cell_colour(const TensorResult* r) const;

    double low = 0;
    double high = 1;
};

// What a chart cell's <title> (the browser's tooltip) says of a tensor.
std::string tooltip(const TensorResult& r);

}  // namespace html

// One <svg> (with its heading) per B: layers as rows, tensor kinds as columns, each cell the
// tensor's SNR colour; the tensors outside the layers as a row of their own below.
std::string heatmap_svg(const Report& report, std::size_t pair, const html::SnrScale& scale);
// Per tensor kind, bits per weight (left) and SNR (right) as horizontal bars, one per B file.
std::string bar_chart_svg(const Report& report);
// Per B: the whole model, each type, and the tensors not compared.
std::string summary_tables(const Report& report);
// Every compared tensor, worst first, the B files' figures side by side.
std::string tensor_table(const Report& report, const html::SnrScale& scale);

}  // namespace ckhost::compare
