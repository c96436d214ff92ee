#include "batch/batch_jobs.hpp"

#include <boost/program_options/parsers.hpp>

#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"

namespace fs = std::filesystem;

namespace ckhost {
namespace {

// Each job runs with its standard streams taken (stdin /dev/null, stdout the batch's report).
void refuse_standard_streams(const Conversion& job, const std::string& where) {
    if (job.input == "-")
        throw ck::usage_error(where +
                              ": a batch job cannot read standard input (./- for a file named "
                              "'-')");
    if (job.output == "-")
        throw ck::usage_error(where +
                              ": a batch job cannot write standard output (./- for a file "
                              "named '-')");
}

// A compare job as read (a line or a JSON object), checked as `ckhost compare` would check it.
BatchJob compare_job(CompareJob compare, const std::string& where) {
    if (compare.inputs.size() < 2)
        throw ck::usage_error(where + ": expected compare A B [B...], found " +
                              std::to_string(compare.inputs.size()) + " file" +
                              (compare.inputs.size() == 1 ? "" : "s"));
    if (compare.top && *compare.top < 1)
        throw ck::usage_error(where + ": --top " + std::to_string(*compare.top) +
                              ": expected a number of tensors, at least 1");
    BatchJob job;
    job.pipeline = "compare";
    job.input = compare.inputs.front();
    job.output = compare.report;
    job.where = where;
    for (const auto& input : compare.inputs) refuse_standard_streams({"", input, ""}, where);
    refuse_standard_streams({"", "", compare.report}, where);
    if (compare.imatrix == "-") refuse_standard_streams({"", compare.imatrix, ""}, where);
    job.compare = std::move(compare);
    return job;
}

long long top_value(const std::string& text, const std::string& where) {
    long long top = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), top);
    if (ec != std::errc() || end != text.data() + text.size())
        throw ck::usage_error(where + ": --top " + text + ": expected a number of tensors");
    return top;
}

// `compare A B [B...] [--report FILE] [--imatrix FILE] [--top N]`: the fields after `compare`,
// each option as `--name VALUE` or `--name=VALUE`.
BatchJob compare_line(const std::vector<std::string>& fields, const std::string& where) {
    CompareJob compare;
    for (std::size_t i = 1; i < fields.size(); ++i) {
        const std::string& field = fields[i];
        if (!field.starts_with("--")) {
            compare.inputs.emplace_back(field);
            continue;
        }
        const auto equals = field.find('=');
        const std::string name = field.substr(2, equals == std::string::npos ? equals : equals - 2);
        if (name != "report" && name != "imatrix" && name != "top")
            throw ck::usage_error(where + ": unknown compare option " + field.substr(0, equals) +
                                  " (a compare job takes --report, --imatrix and --top)");
        if (equals == std::string::npos && i + 1 == fields.size())
            throw ck::usage_error(where + ": --" + name + " needs a value");
        const std::string value =
            equals == std::string::npos ? fields[++i] : field.substr(equals + 1);
        if (name == "report") compare.report = value;
        if (name == "imatrix") compare.imatrix = value;
        if (name == "top") compare.top = top_value(value, where);
    }
    return compare_job(std::move(compare), where);
}

std::vector<BatchJob> parse_text(std::string_view text, const std::string& source) {
    std::vector<BatchJob> jobs;
    std::istringstream lines{std::string(text)};
    std::string line;
    for (std::size_t number = 1; std::getline(lines, line); ++number) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        const std::string where = source + ":" + std::to_string(number);
        std::vector<std::string> fields;
        try {
            fields = boost::program_options::split_unix(line, " \t\r");
        } catch (const std::exception& e) {
            throw ck::usage_error(where + ": " + e.what());
        }
        if (!fields.empty() && fields[0] == "compare") {
            jobs.push_back(compare_line(fields, where));
            continue;
        }
        if (fields.size() != 3)
            throw ck::usage_error(where + ": expected PIPELINE INPUT OUTPUT, found " +
                                  std::to_string(fields.size()) + " field" +
                                  (fields.size() == 1 ? "" : "s"));
        jobs.push_back({{fields[0], fields[1], fields[2]}, where, {}});
        refuse_standard_streams(jobs.back(), where);
    }
    return jobs;
}

// {"compare": [A, B, ...], "report", "imatrix", "top"}: a compare job in a JSON list.
BatchJob compare_object(const nlohmann::json& item, const std::string& where) {
    CompareJob compare;
    for (const auto& [key, value] : item.items()) {
        if (key == "compare") {
            if (!value.is_array())
                throw ck::usage_error(where + ": 'compare' must be an array of files [A, B, ...]");
            for (const auto& file : value) {
                if (!file.is_string())
                    throw ck::usage_error(where + ": 'compare' must hold file names (strings)");
                compare.inputs.emplace_back(file.get<std::string>());
            }
        } else if (key == "report" || key == "imatrix") {
            if (!value.is_string())
                throw ck::usage_error(where + ": '" + key + "' must be a string");
            (key == "report" ? compare.report : compare.imatrix) = value.get<std::string>();
        } else if (key == "top") {
            if (!value.is_number_integer())
                throw ck::usage_error(where + ": 'top' must be an integer");
            compare.top = value.get<long long>();
        } else {
            throw ck::usage_error(where + ": unknown key '" + key +
                                  "' (a compare job has compare, report, imatrix and top)");
        }
    }
    return compare_job(std::move(compare), where);
}

std::vector<BatchJob> parse_json(std::string_view text, const std::string& source) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        // Every JSON exception, not only parse_error: a number too large for a double ("1e999")
        // is out_of_range, and it is the same usage error (exit 2) to the user.
        throw ck::usage_error(source + ": not valid JSON: " + e.what());
    }
    if (!doc.is_array()) throw ck::usage_error(source + ": expected a JSON array of jobs");
    std::vector<BatchJob> jobs;
    for (std::size_t i = 0; i < doc.size(); ++i) {
        const std::string where = source + ": job " + std::to_string(i + 1);
        const auto& item = doc[i];
        if (!item.is_object())
            throw ck::usage_error(where + ": expected an object {pipeline, input, output}");
        if (item.contains("compare")) {
            jobs.push_back(compare_object(item, where));
            continue;
        }
        for (const auto& [key, value] : item.items()) {
            if (key != "pipeline" && key != "input" && key != "output")
                throw ck::usage_error(where + ": unknown key '" + key +
                                      "' (a job has pipeline, input and output)");
            if (!value.is_string())
                throw ck::usage_error(where + ": '" + key + "' must be a string");
        }
        for (const char* key : {"pipeline", "input", "output"})
            if (!item.contains(key)) throw ck::usage_error(where + ": missing '" + key + "'");
        jobs.push_back({{item["pipeline"].get<std::string>(), item["input"].get<std::string>(),
                         item["output"].get<std::string>()},
                        where,
                        {}});
        refuse_standard_streams(jobs.back(), where);
    }
    return jobs;
}

// A field in double quotes for boost's split_unix (its escaped_list_separator): inside quotes a
// backslash escapes only itself, either quote character (both toggle quoting, even one of the
// other kind) and 'n' (a newline); everything else, spaces and '#' included, is taken as is.
std::string quoted_field(const std::string& field) {
    std::string out = "\"";
    for (char c : field) {
        if (c == '\\' || c == '"' || c == '\'') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string job_line(const Conversion& job) {
    return quoted_field(job.pipeline) + " " + quoted_field(job.input.string()) + " " +
           quoted_field(job.output.string()) + "\n";
}

std::string job_line(const BatchJob& job) {
    if (!job.compare) return job_line(static_cast<const Conversion&>(job));
    std::string line = "compare";
    for (const auto& input : job.compare->inputs) line += " " + quoted_field(input.string());
    if (!job.compare->report.empty())
        line += " --report " + quoted_field(job.compare->report.string());
    if (!job.compare->imatrix.empty())
        line += " --imatrix " + quoted_field(job.compare->imatrix.string());
    if (job.compare->top) line += " --top " + std::to_string(*job.compare->top);
    return line + "\n";
}

std::vector<BatchJob> parse_jobs(std::string_view text, const std::string& source) {
    const auto first = text.find_first_not_of(" \t\r\n");
    std::vector<BatchJob> jobs = (first != std::string_view::npos && text[first] == '[')
                                     ? parse_json(text, source)
                                     : parse_text(text, source);
    const fs::path base = source == "-" ? fs::path() : fs::path(source).parent_path();
    for (BatchJob& job : jobs) job.base = base;
    return jobs;
}

fs::path BatchJob::resolved(const fs::path& path) const {
    return path.is_relative() && !base.empty() ? base / path : path;
}

Conversion BatchJob::files() const {
    return {pipeline, resolved(input), resolved(output)};
}

CompareJob BatchJob::compare_files() const {
    CompareJob files = *compare;
    for (auto& file : files.inputs) file = resolved(file);
    if (!files.report.empty()) files.report = resolved(files.report);
    if (!files.imatrix.empty()) files.imatrix = resolved(files.imatrix);
    return files;
}

BatchJob job_seen_from(const BatchJob& job, const fs::path& folder) {
    const fs::path from = fs::absolute(folder.empty() ? fs::path(".") : folder).lexically_normal();
    const auto seen = [&](const fs::path& path) {
        if (path.empty() || path.is_absolute()) return path;
        const fs::path target = fs::absolute(job.resolved(path)).lexically_normal();
        fs::path relative = target.lexically_relative(from);
        if (relative.empty()) return target;
        // "out/" names a directory to be: the trailing separator is part of what was asked.
        if (path.native().ends_with('/') && !relative.native().ends_with('/')) relative += "/";
        return relative;
    };
    BatchJob moved = job;
    moved.input = seen(job.input);
    moved.output = seen(job.output);
    if (moved.compare) {
        for (auto& file : moved.compare->inputs) file = seen(file);
        moved.compare->report = seen(moved.compare->report);
        moved.compare->imatrix = seen(moved.compare->imatrix);
    }
    return moved;
}

}  // namespace ckhost
