// The report's tables: the summaries per B file, and every tensor worst first with the B files'
// figures side by side.
#include <sstream>

#include "compare/compare.hpp"
#include "compare/compare_html.hpp"

namespace ckhost::compare {
namespace {

using namespace html;

std::string td(const std::string& text, const char* css_class = nullptr) {
    return std::string("<td") + (css_class ? std::string(" class=\"") + css_class + "\"" : "") +
           ">" + escape(text) + "</td>";
}

// The figures' cells: bits per weight, SNR (coloured), relative error, cosine, [w-SNR].
std::string figure_td(double bits_per_weight, const ErrorSums& sums, bool weighted,
                      const SnrScale* scale) {
    const Figures f = figures_of(sums);
    std::string out = td(fixed(bits_per_weight, 2));
    std::string snr = "<td class=\"snr\"";
    if (scale)
        snr += " style=\"background:" +
               (f.identical ? std::string(identical_colour) + ";color:#fff"
                            : scale->colour(f.snr_db ? *f.snr_db : scale->low)) +
               "\"";
    out += snr + ">" + escape(snr_text(f)) + "</td>";
    out += td(number_text(f.relative, "%.3e")) + td(number_text(f.cosine, "%.6f")) +
           td(number_text(f.rmse, "%.3e")) + td(number_text(f.max_abs, "%.3e"));
    if (weighted) out += td(snr_text(f, true));
    return out;
}

std::string figure_th(bool weighted) {
    std::string out =
        "<th>bpw</th><th>SNR dB</th><th>rel err</th><th>cosine</th><th>RMSE</th><th>max abs</th>";
    return weighted ? out + "<th>w-SNR dB</th>" : out;
}

std::string problem_list(const PairResult& pair) {
    std::string items;
    for (const TensorResult& r : pair.tensors) {
        if (r.status == Status::compared && r.note.empty()) continue;
        std::string what = status_name(r.status);
        if (r.status == Status::non_finite)
            what += ": A has " + std::to_string(r.non_finite.nan_a) + " NaN and " +
                    std::to_string(r.non_finite.inf_a) + " infinite values, B " +
                    std::to_string(r.non_finite.nan_b) + " and " +
                    std::to_string(r.non_finite.inf_b);
        if (!r.note.empty()) what += ": " + r.note;
        items += "<li>" + escape(r.name + ": " + what) + "</li>";
    }
    return items.empty() ? "" : "<ul class=\"problems\">" + items + "</ul>\n";
}

}  // namespace

std::string summary_tables(const Report& report) {
    const bool weighted = !report.imatrix.empty();
    const SnrScale scale(report);
    std::ostringstream out;
    for (std::size_t p = 0; p < report.pairs.size(); ++p) {
        const Summary& s = report.summaries[p];
        out << "<h3>B: " << escape(report.pairs[p].file) << "</h3>\n<p>"
            << s.counts.at(Status::compared) << " tensors compared (" << s.identical
            << " identical)";
        for (Status status : {Status::non_finite, Status::only_in_a, Status::only_in_b,
                              Status::shape_mismatch, Status::not_comparable})
            if (s.counts.at(status))
                out << ", " << s.counts.at(status) << " " << status_name(status);
        out << "</p>\n<table><tr><th class=\"name\">type</th><th>tensors</th>"
            << figure_th(weighted) << "</tr>\n";
        for (const Group& g : s.by_type)
            out << "<tr>" << td(g.name, "name") << td(std::to_string(g.tensors))
                << figure_td(g.bits_per_weight_b(), g.sums, weighted, &scale) << "</tr>\n";
        out << "<tr><td class=\"name\"><b>model</b></td>" << td(std::to_string(s.model.tensors))
            << figure_td(s.model.bits_per_weight_b(), s.model.sums, weighted, &scale)
            << "</tr></table>\n"
            << problem_list(report.pairs[p]);
    }
    return out.str();
}

std::string tensor_table(const Report& report, const SnrScale& scale) {
    const bool weighted = !report.imatrix.empty();
    std::ostringstream out;
    out << "<table><tr><th class=\"name\">tensor</th><th class=\"name\">A</th>";
    for (std::size_t p = 0; p < report.pairs.size(); ++p)
        out << "<th class=\"name\">B" << (report.pairs.size() > 1 ? std::to_string(p + 1) : "")
            << "</th>" << figure_th(weighted);
    out << "</tr>\n";
    for (const std::size_t i : worst_first(report, std::nullopt)) {
        const TensorResult& first = report.pairs[0].tensors[i];
        out << "<tr>" << td(first.name, "name") << td(first.a->type_name, "name");
        for (const PairResult& pair : report.pairs) {
            const TensorResult& r = pair.tensors[i];
            out << td(r.b ? r.b->type_name : "-", "name");
            if (r.status == Status::compared)
                out << figure_td(r.b->bits_per_weight(), r.sums, weighted, &scale);
            else
                out << "<td colspan=\"" << (weighted ? 7 : 6) << "\">" << status_name(r.status)
                    << "</td>";
        }
        out << "</tr>\n";
    }
    out << "</table>\n";
    return out.str();
}

}  // namespace ckhost::compare
