// `ckhost compare A B [B...]` (docs/cli.md): how much each tensor of B differs from A's, in
// figures (an aligned table, or --json) and in a picture (--report FILE.html).
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compare/compare_summary.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::compare {

struct CompareSettings {
    std::filesystem::path a;
    std::vector<std::filesystem::path> b;
    std::filesystem::path imatrix;  // empty: no weighted error
    std::filesystem::path report;   // empty: no HTML report
    std::size_t top = 20;           // rows of the text table
    bool json = false;
    bool quiet = false;
    bool force = false;   // replace a report that exists
    bool update = false;  // nothing to do when the report's recipe record matches
    bool sync = true;
};

int run_compare(PluginRegistry& registry, const CompareSettings& settings, std::ostream& out,
                std::ostream& err);

// The recipe record of a report (pipeline/recipe.hpp), as --update and batch jobs check it.
nlohmann::json compare_recipe(const CompareSettings& settings);

// The outputs (compare_text.cpp, compare_json.cpp, compare_html.cpp).
void print_text(const Report& report, std::size_t top, std::ostream& out);
nlohmann::json report_json(const Report& report);
std::string report_html(const Report& report);

// Figures as the table and the report show them: "-" where there is no number, "inf" for the
// SNR of identical values.
std::string number_text(const std::optional<double>& value, const char* format);
std::string snr_text(const Figures& figures, bool weighted = false);

}  // namespace ckhost::compare
