// The report's charts as inline SVG: the heatmap of layers x tensor kinds, and the bars of bits
// per weight and SNR per tensor kind.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "compare/compare.hpp"
#include "compare/compare_html.hpp"

namespace ckhost::compare {
namespace {

using namespace html;

// Colours of the B files in the bar chart (Tableau's ten), in the order given.
constexpr const char* file_colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const char* file_colour(std::size_t pair) {
    return file_colours[pair % std::size(file_colours)];
}

constexpr double char_width = 6.5;  // of the 11px labels, on average

std::string rect(double x, double y, double w, double h, const std::string& fill,
                 const std::string& title) {
    std::string out = "<rect x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" width=\"" +
                      fixed(w, 1) + "\" height=\"" + fixed(h, 1) + "\" fill=\"" + fill + "\"";
    if (title.empty()) return out + "/>";
    return out + "><title>" + escape(title) + "</title></rect>";
}

std::string label(double x, double y, const std::string& text, const char* anchor = "start",
                  const std::string& extra = "") {
    return "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" text-anchor=\"" + anchor +
           "\"" + extra + ">" + escape(text) + "</text>";
}

// The cells of a heatmap: the layers' tensors by (layer, kind), the others in file order.
struct HeatmapCells {
    std::vector<std::string> kinds;  // in order of first appearance
    std::vector<std::uint64_t> layers;
    std::map<std::pair<std::uint64_t, std::string>, const TensorResult*> cells;
    std::vector<const TensorResult*> outside;

    explicit HeatmapCells(const PairResult& pair) {
        std::set<std::uint64_t> seen;
        for (const TensorResult& r : pair.tensors) {
            const auto layer = layer_of(r.name);
            if (!layer) {
                outside.push_back(&r);
                continue;
            }
            const std::string kind = kind_of(r.name);
            if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
            seen.insert(*layer);
            cells[{*layer, kind}] = &r;
        }
        layers.assign(seen.begin(), seen.end());
    }
};

}  // namespace

std::string heatmap_svg(const Report& report, std::size_t p, const SnrScale& scale) {
    const HeatmapCells m(report.pairs[p]);
    constexpr double w = 22, h = 12, left = 44, gap = 18;
    std::size_t longest_kind = 0, longest_name = 0;
    for (const std::string& k : m.kinds) longest_kind = std::max(longest_kind, k.size());
    for (const TensorResult* r : m.outside) longest_name = std::max(longest_name, r->name.size());
    const double top = 16 + static_cast<double>(longest_kind) * char_width * 0.87;
    const double grid_bottom = top + static_cast<double>(m.layers.size()) * h;
    // The column titles lean right by half their length (rotated by 60 degrees).
    const double width = std::max(left + static_cast<double>(m.kinds.size()) * w +
                                      static_cast<double>(longest_kind) * char_width * 0.5 + 8,
                                  left + w + 12 + static_cast<double>(longest_name) * char_width);
    const double height = grid_bottom + gap + static_cast<double>(m.outside.size()) * (h + 4) + 4;
    std::ostringstream out;
    out << "<div><h3>B: " << escape(report.pairs[p].file)
        << "</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(width, 0)
        << "\" height=\"" << fixed(height, 0) << "\">\n";
    out << label(4, top - 4, "layer");
    for (std::size_t k = 0; k < m.kinds.size(); ++k) {
        const double x = left + (static_cast<double>(k) + 0.5) * w, y = top - 4;
        out << label(x, y, m.kinds[k], "start",
                     " transform=\"rotate(-60 " + fixed(x, 1) + " " + fixed(y, 1) + ")\"");
    }
    for (std::size_t l = 0; l < m.layers.size(); ++l) {
        const double y = top + static_cast<double>(l) * h;
        out << label(left - 6, y + h - 2, std::to_string(m.layers[l]), "end");
        for (std::size_t k = 0; k < m.kinds.size(); ++k) {
            const auto found = m.cells.find({m.layers[l], m.kinds[k]});
            const TensorResult* r = found == m.cells.end() ? nullptr : found->second;
            out << rect(
                left + static_cast<double>(k) * w, y, w - 1, h - 1, scale.cell_colour(r),
                r ? tooltip(*r)
                  : "blk." + std::to_string(m.layers[l]) + "." + m.kinds[k] + ": in neither file");
        }
        out << "\n";
    }
    for (std::size_t i = 0; i < m.outside.size(); ++i) {
        const double y = grid_bottom + gap + static_cast<double>(i) * (h + 4);
        out << rect(left, y, w - 1, h - 1, scale.cell_colour(m.outside[i]), tooltip(*m.outside[i]))
            << label(left + w + 6, y + h - 2, m.outside[i]->name) << "\n";
    }
    out << "</svg></div>\n";
    return out.str();
}

namespace {

// One bar chart row: a tensor kind, and per B its group (nullptr: B has none of that kind).
struct KindRow {
    std::string kind;
    std::vector<const Group*> groups;
};

std::vector<KindRow> kind_rows(const Report& report) {
    std::vector<KindRow> rows;
    for (std::size_t p = 0; p < report.summaries.size(); ++p)
        for (const Group& g : report.summaries[p].by_kind) {
            auto row = std::find_if(rows.begin(), rows.end(),
                                    [&](const KindRow& r) { return r.kind == g.name; });
            if (row == rows.end()) {
                rows.push_back({g.name, std::vector<const Group*>(report.summaries.size())});
                row = rows.end() - 1;
            }
            row->groups[p] = &g;
        }
    return rows;
}

// The axis of a panel: from `low` to `high`, three ticks, under the bars.
std::string axis(double x, double y, double width, double low, double high, int decimals,
                 const std::string& title) {
    std::string out = "<line x1=\"" + fixed(x, 1) + "\" y1=\"" + fixed(y, 1) + "\" x2=\"" +
                      fixed(x + width, 1) + "\" y2=\"" + fixed(y, 1) + "\" stroke=\"#888\"/>";
    for (int k = 0; k <= 2; ++k)
        out += label(x + width * k / 2, y + 13, fixed(low + (high - low) * k / 2, decimals),
                     k == 0   ? "start"
                     : k == 1 ? "middle"
                              : "end");
    return out + label(x + width / 2, y + 27, title, "middle");
}

}  // namespace

std::string bar_chart_svg(const Report& report) {
    const std::vector<KindRow> rows = kind_rows(report);
    const SnrScale scale(report);
    const double snr_low = std::min(0.0, scale.low), snr_high = scale.high;
    double bpw_high = 1;
    std::size_t longest = 0;
    for (const KindRow& row : rows) {
        longest = std::max(longest, row.kind.size());
        for (const Group* g : row.groups)
            if (g) bpw_high = std::max(bpw_high, std::ceil(g->bits_per_weight_b()));
    }
    const double bar = 9, pairs = static_cast<double>(report.pairs.size());
    const double row_height = pairs * bar + 6, panel = 300, top = 16 + 14 * pairs;
    const double left = 10 + static_cast<double>(longest) * char_width;
    const double snr_left = left + panel + 40;
    const double bottom = top + static_cast<double>(rows.size()) * row_height;
    std::ostringstream out;
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(snr_left + panel + 60, 0)
        << "\" height=\"" << fixed(bottom + 34, 0) << "\">\n";
    for (std::size_t p = 0; p < report.pairs.size(); ++p)
        out << rect(left, 4 + 14 * static_cast<double>(p), 10, 10, file_colour(p), "")
            << label(left + 14, 13 + 14 * static_cast<double>(p), "B: " + report.pairs[p].file);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double y = top + static_cast<double>(i) * row_height;
        out << label(left - 6, y + row_height / 2 + 3, rows[i].kind, "end");
        for (std::size_t p = 0; p < rows[i].groups.size(); ++p) {
            const Group* g = rows[i].groups[p];
            if (!g) continue;
            const double by = y + 3 + static_cast<double>(p) * bar;
            const Figures f = figures_of(g->sums);
            const double snr = f.snr_db ? *f.snr_db : f.identical ? snr_high : snr_low;
            const std::string what = rows[i].kind + " in " + report.pairs[p].file + ": " +
                                     fixed(g->bits_per_weight_b(), 2) + " bits per weight, SNR " +
                                     snr_text(f) + " dB";
            out << rect(left, by, panel * g->bits_per_weight_b() / bpw_high, bar - 1,
                        file_colour(p), what)
                << rect(snr_left, by, std::max(1.0, panel * (snr - snr_low) / (snr_high - snr_low)),
                        bar - 1, file_colour(p), what);
        }
    }
    out << axis(left, bottom + 2, panel, 0, bpw_high, 0, "bits per weight (B, as stored)")
        << axis(snr_left, bottom + 2, panel, snr_low, snr_high, 0, "SNR dB (higher is closer to A)")
        << "</svg>\n";
    return out.str();
}

}  // namespace ckhost::compare
