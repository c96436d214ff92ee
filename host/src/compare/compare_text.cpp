// The text form of `ckhost compare`: per B file, the worst tensors as an aligned table, the
// figures per type and for the whole model, and every tensor that was not compared.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "compare/compare.hpp"

namespace ckhost::compare {

std::string number_text(const std::optional<double>& value, const char* format) {
    if (!value) return "-";
    char text[64];
    std::snprintf(text, sizeof text, format, *value);
    return text;
}

std::string snr_text(const Figures& figures, bool weighted) {
    const std::optional<double>& snr = weighted ? figures.weighted_snr_db : figures.snr_db;
    if (!snr && figures.identical && (!weighted || figures.weighted_error)) return "inf";
    return number_text(snr, "%.2f");
}

namespace {

using Row = std::vector<std::string>;

// Rows printed with each column as wide as its widest cell: text columns (the first
// `text_columns`) to the left, numbers to the right.
void print_aligned(const std::vector<Row>& rows, std::size_t text_columns, std::ostream& out) {
    std::vector<std::size_t> widths;
    for (const Row& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (widths.size() <= c) widths.push_back(0);
            widths[c] = std::max(widths[c], row[c].size());
        }
    for (const Row& row : rows) {
        std::string line = " ";
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string pad(widths[c] - row[c].size(), ' ');
            line += "  " + (c < text_columns ? row[c] + pad : pad + row[c]);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out << line << "\n";
    }
}

Row figure_cells(const Figures& f, bool weighted) {
    Row cells = {number_text(f.rmse, "%.3e"), number_text(f.max_abs, "%.3e"),
                 number_text(f.relative, "%.3e"), number_text(f.cosine, "%.6f"), snr_text(f)};
    if (weighted) cells.push_back(snr_text(f, true));
    return cells;
}

Row figure_titles(bool weighted) {
    Row titles = {"RMSE", "max abs", "rel err", "cosine", "SNR dB"};
    if (weighted) titles.push_back("w-SNR dB");
    return titles;
}

void print_tensors(const Report& report, std::size_t pair, std::size_t top, std::ostream& out) {
    const bool weighted = !report.imatrix.empty();
    const std::vector<std::size_t> order = worst_first(report, pair);
    std::vector<Row> rows;
    Row titles = {"tensor", "A", "B", "bpw"};
    for (const std::string& t : figure_titles(weighted)) titles.push_back(t);
    rows.push_back(titles);
    for (std::size_t k = 0; k < order.size() && k < top; ++k) {
        const TensorResult& r = report.pairs[pair].tensors[order[k]];
        Row row = {r.name, r.a->type_name, r.b->type_name,
                   number_text(r.b->bits_per_weight(), "%.2f")};
        const Figures f = figures_of(r.sums);
        Row cells = r.status == Status::compared ? figure_cells(f, weighted)
                                                 : Row(figure_titles(weighted).size(), "nan");
        if (weighted && r.status == Status::compared && !r.weighted) cells.back() = "-";
        row.insert(row.end(), cells.begin(), cells.end());
        rows.push_back(row);
    }
    print_aligned(rows, 3, out);
    if (order.size() > top)
        out << "  (the " << top << " worst of " << order.size()
            << " tensors; --top N shows more)\n";
}

void print_groups(const Report& report, std::size_t pair, std::ostream& out) {
    const bool weighted = !report.imatrix.empty();
    const Summary& s = report.summaries[pair];
    if (s.model.tensors == 0) return;  // every tensor held NaN: nothing to add up
    std::vector<Row> rows;
    Row titles = {"type", "tensors", "bpw"};
    for (const std::string& t : figure_titles(weighted)) titles.push_back(t);
    rows.push_back(titles);
    auto add = [&](const Group& g, const std::string& name) {
        Row row = {name, std::to_string(g.tensors), number_text(g.bits_per_weight_b(), "%.2f")};
        const Row cells = figure_cells(figures_of(g.sums), weighted);
        row.insert(row.end(), cells.begin(), cells.end());
        rows.push_back(row);
    };
    for (const Group& g : s.by_type) add(g, g.name);
    if (s.model.tensors) add(s.model, "model");
    print_aligned(rows, 1, out);
}

// Every tensor that was not compared, with why: nothing is skipped without a word.
void print_problems(const PairResult& pair, std::ostream& out) {
    for (const TensorResult& r : pair.tensors) {
        std::string line;
        switch (r.status) {
            case Status::compared:
                if (r.note.empty()) continue;
                line = "note: " + r.note;
                break;
            case Status::only_in_a:
                line = "only in A (" + r.a->type_name + ")";
                break;
            case Status::only_in_b:
                line = "only in B (" + r.b->type_name + ")";
                break;
            case Status::non_finite:
                line = "not a number: A has " + std::to_string(r.non_finite.nan_a) + " NaN, " +
                       std::to_string(r.non_finite.inf_a) + " infinite; B has " +
                       std::to_string(r.non_finite.nan_b) + " NaN, " +
                       std::to_string(r.non_finite.inf_b) + " infinite (left out of the summaries)";
                break;
            case Status::shape_mismatch:
                line = "shapes differ: " + r.note;
                break;
            case Status::not_comparable:
                line = "not compared: " + r.note;
                break;
        }
        out << "  " << r.name << ": " << line << "\n";
    }
}

}  // namespace

void print_text(const Report& report, std::size_t top, std::ostream& out) {
    out << "A: " << report.file_a << " (" << report.format_a << ")\n";
    if (!report.imatrix.empty())
        out << "importance matrix: " << report.imatrix
            << " (w-SNR: the error weighted as the quantizers weigh it)\n";
    for (std::size_t p = 0; p < report.pairs.size(); ++p) {
        const PairResult& pair = report.pairs[p];
        const Summary& s = report.summaries[p];
        out << "\nB: " << pair.file << " (" << pair.format << "): " << s.counts.at(Status::compared)
            << " tensors compared (" << s.identical << " identical)";
        for (Status status : {Status::non_finite, Status::only_in_a, Status::only_in_b,
                              Status::shape_mismatch, Status::not_comparable})
            if (s.counts.at(status))
                out << ", " << s.counts.at(status) << " " << status_name(status);
        out << "\n\n";
        if (s.counts.at(Status::compared) + s.counts.at(Status::non_finite) == 0) {
            out << "  no tensor of B has the name and shape of one of A's\n";
        } else {
            print_tensors(report, p, top, out);
            out << "\n";
            print_groups(report, p, out);
        }
        print_problems(pair, out);
    }
}

}  // namespace ckhost::compare
