// Planning: every stage's header from the reader's, the writer prepared, nothing written.
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
#include "ck/conventions/output_bytes.hpp"
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

void Pipeline::plan(const fs::path& input, const fs::path& output, const std::string& input_name) {
    try {
        plan_stages(input, output, input_name);
    } catch (const ck::Error& e) {
        if (e.kind() != ck::ErrorKind::input) throw;
        // A stage's refusal names a tensor or key of the input, often without a file (a writer
        // knows the tensor, not where it came from): say which file it is in.
        const ck::Error named = e.file().empty() ? e.with_file(input.string()) : e;
        throw ConversionError(named, {}, suggest_pipeline(input, output, input_name));
    }
}

std::string Pipeline::suggest_pipeline(const fs::path& input, const fs::path& output,
                                       const std::string& input_name) const {
    if (std::any_of(stages_.begin(), stages_.end(),
                    [](const auto& s) { return s->spec.name == "dequant"; }))
        return "";
    std::string text = stages_.front()->spec.text + ":dequant";
    for (std::size_t k = 1; k < stages_.size(); ++k) text += ":" + stages_[k]->spec.text;
    try {
        Pipeline candidate(registry_, text);
        candidate.plan_stages(input, output, input_name);
    } catch (const ck::Error&) {
        return "";  // no dequant plugin, or the pipeline fails for another reason too
    }
    return text;
}

std::vector<std::uint64_t> Pipeline::output_bytes() const {
    std::vector<std::uint64_t> sizes;
    for (const fs::path& p : outputs_) {
        const auto it = context_.reports().find(
            std::string(ck::conventions::output_bytes_report_prefix) + p.string());
        if (it == context_.reports().end()) return {};
        sizes.push_back(std::stoull(it->second));
    }
    return sizes;
}

void Pipeline::plan_stages(const fs::path& input, const fs::path& output,
                           const std::string& input_name) {
    headers_.clear();
    Stage& first = *stages_.front();
    headers_.push_back(call_plugin(first.spec.name, [&] { return first.reader->open(input); }));
    if (!input_name.empty()) headers_.back().source = input_name;
    for (std::size_t k = 1; k + 1 < stages_.size(); ++k) {
        Stage& s = *stages_[k];
        ck::ModelHeader planned =
            call_plugin(s.spec.name, [&] { return s.transform->plan(headers_.back()); });
        // general.file_type must still name the tensors' types after any stage, a third-party
        // one included, so the host keeps it true rather than each plugin.
        if (const auto update = ck::llama::keep_file_type_true(headers_.back(), planned);
            update.changed)
            context_.note("stage '" + s.spec.text + "': " + update.note);
        headers_.push_back(std::move(planned));
        s.groups = call_plugin(s.spec.name, [&] { return s.transform->groups(); });
        s.group_of.assign(headers_.back().tensors.size(), -1);
        for (std::size_t g = 0; g < s.groups.size(); ++g)
            for (std::size_t index : s.groups[g]) {
                if (index >= s.group_of.size() || s.group_of[index] != -1)
                    throw ck::plugin_bug(
                        "stage '" + s.spec.text + "' declared a tensor group with " +
                            (index >= s.group_of.size()
                                 ? "an index out of range (" + std::to_string(index) + ")"
                                 : "tensor " + std::to_string(index) + " twice") +
                            " (a plugin bug)",
                        s.plugin->path.string());
                s.group_of[index] = static_cast<std::ptrdiff_t>(g);
            }
    }
    Stage& last = *stages_.back();
    refuse_unknown_ckhost_keys(input);
    call_plugin(last.spec.name, [&] {
        last.writer->prepare(headers_.back(), output);
        outputs_ = last.writer->outputs();
    });
}

void Pipeline::refuse_unknown_ckhost_keys(const fs::path& input) const {
    Stage& writer = *stages_.back();
    const auto understood =
        call_plugin(writer.spec.name, [&] { return writer.writer->understood_keys(); });
    for (const auto& entry : headers_.back().metadata) {
        // Not a structured binding: Clang before 16 (the fuzz build's) cannot capture one in
        // the lambda below.
        const std::string& key = entry.first;
        if (!key.starts_with(ck::conventions::ckhost_prefix)) continue;
        if (std::any_of(understood.begin(), understood.end(), [&](const std::string& pattern) {
                return ck::conventions::key_matches(key, pattern);
            }))
            continue;
        // Who put it there: the first header that has it.
        std::string origin = "read from the input";
        std::string file = input.string();
        for (std::size_t k = 1; k < headers_.size(); ++k)
            if (!headers_[k - 1].metadata.contains(key) && headers_[k].metadata.contains(key)) {
                origin = "set by stage '" + stages_[k]->spec.text + "'";
                file.clear();
                break;
            }
        const ck::conventions::CkhostKey* known = ck::conventions::find_ckhost_key(key);
        std::string message = origin + (known ? " (" + std::string(known->meaning) + ")" : "") +
                              ": the writer '" + writer.spec.name +
                              "' cannot store what this key means and would write a file that "
                              "looks valid and is wrong; ";
        message += known ? "writers that accept it: " + std::string(known->writers)
                         : std::string("no writer of ckhost knows this key");
        throw ck::key_error(message, key, file);
    }
}

ck::TensorView Pipeline::fetch(std::size_t depth, std::size_t index, GroupMemo& memo,
                               std::vector<double>& seconds) {
    Stage& s = *stages_[depth];
    const auto started = std::chrono::steady_clock::now();
    ck::TensorView view;
    const ck::Upstream upstream = [this, depth, &memo, &seconds](std::size_t i) {
        return fetch(depth - 1, i, memo, seconds);
    };
    if (depth == 0) {
        view = call_plugin(s.spec.name, [&] { return s.reader->tensor(index); });
    } else if (s.group_of.at(index) < 0) {
        view = call_plugin(s.spec.name, [&] { return s.transform->apply(index, upstream); });
    } else if (auto kept = memo.find({depth, index}); kept != memo.end()) {
        view = std::move(kept->second);  // computed with an earlier member of its group
        memo.erase(kept);
        return view;
    } else {
        const ck::TensorGroup& group = s.groups[static_cast<std::size_t>(s.group_of[index])];
        std::vector<ck::TensorView> views =
            call_plugin(s.spec.name, [&] { return s.transform->apply_group(group, upstream); });
        if (views.size() != group.size())
            throw ck::plugin_bug("stage '" + s.spec.text + "' returned " +
                                     std::to_string(views.size()) + " tensors for a group of " +
                                     std::to_string(group.size()) + " (a plugin bug)",
                                 s.plugin->path.string());
        for (std::size_t m = 0; m < group.size(); ++m) {
            if (group[m] == index)
                view = std::move(views[m]);
            else
                memo[{depth, group[m]}] = std::move(views[m]);
        }
    }
    seconds.at(depth) +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return view;
}

}  // namespace ckhost
