#include "batch/batch_jobs.hpp"

#include <boost/program_options/parsers.hpp>

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
        if (fields.size() != 3)
            throw ck::usage_error(where + ": expected PIPELINE INPUT OUTPUT, found " +
                                  std::to_string(fields.size()) + " field" +
                                  (fields.size() == 1 ? "" : "s"));
        jobs.push_back({{fields[0], fields[1], fields[2]}, where, {}});
        refuse_standard_streams(jobs.back(), where);
    }
    return jobs;
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

Conversion job_seen_from(const BatchJob& job, const fs::path& folder) {
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
    return {job.pipeline, seen(job.input), seen(job.output)};
}

}  // namespace ckhost
