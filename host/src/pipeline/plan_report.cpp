// The plan as JSON (--json) and as text (--dry-run).
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_stages.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <ostream>
#include <set>
#include <string_view>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/mapped_file.hpp"
#include "ck/parallel.hpp"
#include "cli/suggest.hpp"
#include "io/checksum.hpp"
#include "pipeline/conversion_error.hpp"
#include "pipeline/memory_budget.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/recipe.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {

json Pipeline::plan_json() const {
    // Follows each tensor of the final header back through the stages by name.
    json tensors = json::array();
    const ck::ModelHeader& final_header = headers_.back();
    for (const ck::TensorInfo& t : final_header.tensors) {
        json row = {{"name", t.name}};
        json path = json::array();
        for (std::size_t k = 0; k < headers_.size(); ++k) {
            const ck::TensorInfo* at = headers_[k].find_tensor(t.name);
            if (!at) continue;
            path.push_back({{"stage", stages_[k]->spec.name},
                            {"type", std::string(ck::type_name(at->type))},
                            {"shape", at->ne},
                            {"bytes", at->nbytes}});
        }
        row["stages"] = path;
        tensors.push_back(row);
    }
    json dropped = json::array();
    for (const ck::TensorInfo& t : headers_.front().tensors)
        if (!final_header.find_tensor(t.name)) dropped.push_back(t.name);
    // A writer drops a tensor by leaving it out of its order (bump: an untied output.weight),
    // after every transform has passed it on.
    const Stage& w = *stages_.back();
    const std::vector<std::size_t> order =
        call_plugin(w.spec.name, [&] { return w.writer->order(); });
    if (!order.empty()) {
        std::vector<bool> written(final_header.tensors.size(), false);
        for (std::size_t index : order)
            if (index < written.size()) written[index] = true;
        for (std::size_t i = 0; i < written.size(); ++i)
            if (!written[i] && !dropped.contains(final_header.tensors[i].name))
                dropped.push_back(final_header.tensors[i].name);
    }
    // Why a stage gave a tensor what it has, when it says (Context::explain).
    return {{"tensors", tensors}, {"dropped", dropped}, {"reasons", context_.reasons()}};
}

void Pipeline::print_plan(std::ostream& out) const {
    json plan = plan_json();
    // The files' sizes as the writer will write them (headers, padding, zero slots included)
    // when it states them; otherwise the tensors' bytes, called what they are.
    const std::vector<std::uint64_t> sizes = output_bytes();
    out << "plan: " << stages_.size() << " stages, " << headers_.back().tensors.size()
        << " tensors, " << human_bytes(headers_.front().total_bytes()) << " in, "
        << (sizes.empty()
                ? human_bytes(headers_.back().total_bytes()) + " of tensor data out"
                : human_bytes(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0})) +
                      " out (" + std::to_string(sizes.size()) +
                      (sizes.size() == 1 ? " file)" : " files)"))
        << "\n";
    for (std::size_t i = 0; i < outputs_.size(); ++i)
        out << "output: " << outputs_[i].string()
            << (sizes.empty() ? std::string() : " (" + std::to_string(sizes[i]) + " bytes)")
            << "\n";
    const auto& whys = context_.reasons();
    for (const auto& row : plan["tensors"]) {
        out << "  " << row["name"].get<std::string>() << ":";
        std::string previous;
        for (const auto& step : row["stages"]) {
            std::string here = step["type"].get<std::string>() + " " +
                               human_bytes(step["bytes"].get<std::uint64_t>());
            if (here == previous) continue;
            out << (previous.empty() ? " " : " -> ") << step["stage"].get<std::string>() << " "
                << here;
            previous = here;
        }
        out << " -> " << stages_.back()->spec.name;
        if (auto why = whys.find(row["name"].get<std::string>()); why != whys.end())
            for (const std::string& text : why->second) out << "  [" << text << "]";
        out << "\n";
    }
    // A name the final header lacks was dropped, unless a stage says what became of it (meta's
    // "renamed to ...").
    for (const auto& row : plan["dropped"]) {
        const auto why = whys.find(row.get<std::string>());
        out << "  " << row.get<std::string>() << ": "
            << (why == whys.end() ? std::string("dropped") : join(why->second, "; ")) << "\n";
    }
}

}  // namespace ckhost
