// `ckhost verify`: a file reopened with full validation, and with --data every value checked.
#include "inspect/inspect.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ck/ggml_types.hpp"
#include "ck/kernels/validate.hpp"
#include "ck/llama/file_type.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/suggest.hpp"
#include "inspect/file_type_check.hpp"
#include "inspect/inspect_text.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {

namespace {

// Every tensor's values, as llama.cpp's --check-tensors checks them: one entry per tensor with
// a bad value, naming the first one.
json check_tensor_data(OpenedFile& opened, const std::string& file) {
    // A tensor is checked in slices whose pages leave the process once read, so a model's
    // largest tensor is never resident as a whole (a slice is whole blocks).
    constexpr std::uint64_t slice_bytes = std::uint64_t{16} << 20;
    json problems = json::array();
    for (std::size_t i = 0; i < opened.header.tensors.size(); ++i) {
        const ck::TensorInfo& t = opened.header.tensors[i];
        const ck::TensorView v =
            call_plugin(opened.plugin, [&] { return opened.reader->tensor(i); });
        const ck::TypeInfo* info = ck::find_type(t.type);
        if (!info || info->block_bytes == 0) continue;
        const std::uint64_t unit = info->block_bytes;  // a float element is a block of one
        const std::uint64_t slice = std::max<std::uint64_t>(1, slice_bytes / unit) * unit;
        std::optional<ck::kernels::DataProblem> problem;
        for (std::uint64_t begin = 0; begin < v.size(); begin += slice) {
            const std::uint64_t size = std::min<std::uint64_t>(slice, v.size() - begin);
            if (auto found = ck::kernels::check_data(t.type, v.bytes().subspan(begin, size))) {
                if (!problem) {
                    problem = *found;
                    problem->index += begin / unit;
                    problem->count = 0;
                }
                problem->count += found->count;
            }
            v.release(begin, begin + size);
        }
        if (!problem) continue;
        const std::uint64_t offset =
            t.source_offset + problem->index * unit + (problem->field ? problem->field->offset : 0);
        std::string message = problem->message();
        if (problem->count > 1)
            message += " (" + std::to_string(problem->count) + " bad values in the tensor)";
        json entry = {
            {"tensor", t.name},
            {"type", std::string(ck::type_name(t.type))},
            {problem->field ? "block" : "element", problem->index},
            {"value", problem->nan ? "NaN" : "Inf"},
            {"count", problem->count},
            {"offset", offset},
            {"message", message},
            {"error", ck::Error(message, file, offset, ck::tensor_subject(t.name)).what()}};
        if (problem->field) entry["field"] = std::string(problem->field->name);
        problems.push_back(std::move(entry));
    }
    return problems;
}

}  // namespace

int run_verify(PluginRegistry& registry, const fs::path& file, bool as_json, bool data,
               std::ostream& out, std::ostream& err) {
    ck::RecordingContext context;
    OpenedFile opened = open_with_any_reader(registry, file, context);
    for (std::size_t i = 0; i < opened.header.tensors.size(); ++i) {
        ck::TensorView v = call_plugin(opened.plugin, [&] { return opened.reader->tensor(i); });
        if (v.bytes().size() != opened.header.tensors[i].nbytes)
            throw ck::tensor_error("reader returned " + std::to_string(v.bytes().size()) +
                                       " bytes, header says " +
                                       std::to_string(opened.header.tensors[i].nbytes),
                                   opened.header.tensors[i].name, file.string());
    }
    call_plugin(opened.plugin, [&] { opened.reader->verify(); });
    // A general.file_type the tensors contradict: llama.cpp names the model by it, and
    // conversions keep it true, so a false one is a defect of the file (inspect says more).
    if (const std::string wrong = FileTypeCheck(opened.header).contradiction(); !wrong.empty())
        throw ck::key_error(wrong, ck::llama::file_type_key, file.string());
    // The structure first: a file that fails it is not worth reading in full.
    const json problems = data ? check_tensor_data(opened, file.string()) : json::array();
    for (const auto& w : context.warnings()) err << "warning: " << w << "\n";
    // The reader's facts say what was checked: a GGUF split set names every file of the set.
    std::string set_fact;
    for (const auto& [k, v] : opened.header.format_facts)
        if (k == "split files") set_fact = "; split set of " + v + " files, read as one model";
    const bool sound = problems.empty();
    for (const json& p : problems)
        err << "ckhost: error: " << p["error"].get<std::string>() << "\n";
    if (as_json) {
        json doc = json_document("verify", sound);
        doc.update({{"file", file.string()},
                    {"format", opened.plugin},
                    {"data_checked", data},
                    {"problems", problems},
                    {"facts", facts_json(opened.header)},
                    {"warnings", context.warnings()}});
        print_json(out, doc);
    } else if (sound)
        out << file.string() << ": OK (" << opened.plugin << ", " << opened.header.tensors.size()
            << " tensors" << set_fact << (data ? ", every value checked" : "") << ")\n";
    return sound ? ok : failed;
}

}  // namespace ckhost
