// The --report of `ckhost compare`: one HTML file that needs nothing else (its CSS and SVG are
// inline; no script, font or image from anywhere), so it can be mailed, archived or opened
// offline. Per B file a heatmap of layers x tensor kinds coloured by SNR; a bar chart of bits
// per weight beside the SNR per tensor kind, the B files' bars grouped; the summaries; and the
// table of every tensor, worst first, the B files side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "compare/compare.hpp"
#include "compare/compare_html.hpp"

namespace ckhost::compare {
namespace html {

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

SnrScale::SnrScale(const Report& report) {
    bool any = false;
    for (const PairResult& pair : report.pairs)
        for (const TensorResult& r : pair.tensors) {
            if (r.status != Status::compared) continue;
            const std::optional<double> snr = figures_of(r.sums).snr_db;
            if (!snr) continue;
            low = any ? std::min(low, *snr) : *snr;
            high = any ? std::max(high, *snr) : *snr;
            any = true;
        }
    low = std::floor(low);
    high = std::max(std::ceil(high), low + 1);
}

// Low SNR red, through orange and yellow, to green: the worst tensors stand out.
std::string SnrScale::colour(double snr) const {
    static const int stops[][3] = {{127, 0, 0},     {215, 48, 31},  {252, 141, 89},
                                   {254, 224, 139}, {145, 207, 96}, {26, 152, 80}};
    constexpr int last = 5;
    const double t = std::clamp((snr - low) / (high - low), 0.0, 1.0) * last;
    const int i = std::min(static_cast<int>(t), last - 1);
    const double f = t - i;
    char text[8];
    int rgb[3];
    for (int c = 0; c < 3; ++c)
        rgb[c] = static_cast<int>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
    std::snprintf(text, sizeof text, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    return text;
}

// A tensor's cell colour: by SNR; identical values blue, non-finite values black, a tensor
// that was not compared (missing, another shape) grey.
std::string SnrScale::cell_colour(const TensorResult* r) const {
    if (!r || r->status == Status::only_in_a || r->status == Status::only_in_b ||
        r->status == Status::shape_mismatch || r->status == Status::not_comparable)
        return missing_colour;
    if (r->status == Status::non_finite) return non_finite_colour;
    const Figures f = figures_of(r->sums);
    if (f.identical) return identical_colour;
    return f.snr_db ? colour(*f.snr_db) : colour(low);
}

std::string tooltip(const TensorResult& r) {
    std::string text = r.name + ": " + status_name(r.status);
    if (r.a && r.b) text += ", " + r.a->type_name + " -> " + r.b->type_name;
    if (r.status == Status::compared) text += ", SNR " + snr_text(figures_of(r.sums)) + " dB";
    if (!r.note.empty()) text += " (" + r.note + ")";
    return text;
}

}  // namespace html

namespace {

using namespace html;

constexpr const char* style = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 12px 0 6px; word-break: break-all; }
.files { color: #555; } .row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; position: sticky; top: 0; } td.name, th.name { text-align: left; }
td.snr { color: #000; } .problems li { font-family: monospace; }
.legend { display: flex; align-items: center; gap: 8px; margin: 8px 0; }
.swatch { display: inline-block; width: 14px; height: 14px; border: 1px solid #999; vertical-align: middle; }
svg text { font: 11px system-ui, sans-serif; fill: #222; }
)css";

// The legend of the colours: the SNR gradient from the lowest to the highest, and the three
// colours that are not an SNR.
std::string legend(const SnrScale& scale) {
    std::ostringstream out;
    out << "<div class=\"legend\"><span>SNR " << fixed(scale.low, 0) << " dB</span>"
        << "<svg width=\"240\" height=\"14\"><defs><linearGradient id=\"snr\">";
    for (int k = 0; k <= 10; ++k)
        out << "<stop offset=\"" << k * 10 << "%\" stop-color=\""
            << scale.colour(scale.low + (scale.high - scale.low) * k / 10.0) << "\"/>";
    out << "</linearGradient></defs><rect width=\"240\" height=\"14\" fill=\"url(#snr)\"/></svg>"
        << "<span>" << fixed(scale.high, 0) << " dB</span>"
        << "<span class=\"swatch\" style=\"background:" << identical_colour
        << "\"></span> identical <span class=\"swatch\" style=\"background:" << non_finite_colour
        << "\"></span> NaN or infinite <span class=\"swatch\" style=\"background:" << missing_colour
        << "\"></span> not compared</div>\n";
    return out.str();
}

void write_head(const Report& report, const SnrScale& scale, std::ostream& out) {
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        << "<title>ckhost compare: " << escape(report.file_a) << "</title>\n<style>" << style
        << "</style></head><body>\n<h1>ckhost compare</h1>\n<div class=\"files\">A: "
        << escape(report.file_a) << " (" << escape(report.format_a) << ")";
    for (const PairResult& pair : report.pairs)
        out << "<br>B: " << escape(pair.file) << " (" << escape(pair.format) << ")";
    if (!report.imatrix.empty())
        out << "<br>importance matrix: " << escape(report.imatrix)
            << " (w-SNR: the error weighted as the quantizers weigh it)";
    out << "</div>\n" << legend(scale);
}

}  // namespace

std::string report_html(const Report& report) {
    const SnrScale scale(report);
    std::ostringstream out;
    write_head(report, scale, out);
    out << "<h2>SNR by layer and tensor kind</h2>\n<div class=\"row\">\n";
    for (std::size_t p = 0; p < report.pairs.size(); ++p) out << heatmap_svg(report, p, scale);
    out << "</div>\n<h2>Bits per weight and SNR by tensor kind</h2>\n"
        << bar_chart_svg(report) << "<h2>Summary</h2>\n"
        << summary_tables(report) << "<h2>Tensors, worst first</h2>\n"
        << tensor_table(report, scale) << "</body></html>\n";
    return out.str();
}

}  // namespace ckhost::compare
