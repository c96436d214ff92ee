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
        // The reader could not open the input (no header yet): another reader, not another
        // stage, is the answer.
        if (headers_.empty())
            if (auto [hint, other] = reader_hint(input, output, input_name); !hint.empty())
                throw ConversionError(ck::Error(named.message() + hint, named.file(),
                                                named.offset(), named.subject(), named.kind()),
                                      {}, other);
        throw ConversionError(named, {}, suggest_pipeline(input, output, input_name, e.message()));
    }
    warn_if_part_of_a_checkpoint(input);
}

namespace {

// The stages a refusal names as its remedy: pipeline text in backticks (`quantize[mix=q4_k_m]`,
// `bump[version=4]`), in the order named. Backticked text that is not one stage is not a remedy.
std::vector<StageSpec> remedies_named_in(const std::string& refusal) {
    std::vector<StageSpec> remedies;
    for (std::size_t open = refusal.find('`'); open != std::string::npos;) {
        const std::size_t close = refusal.find('`', open + 1);
        if (close == std::string::npos) break;
        try {
            auto specs = parse_pipeline(refusal.substr(open + 1, close - open - 1));
            if (specs.size() == 1) remedies.push_back(std::move(specs.front()));
        } catch (const ck::Error&) {
            // prose in backticks
        }
        open = refusal.find('`', close + 1);
    }
    return remedies;
}

// `stage` with `extra`'s options set as well: the user's text with them appended, or, when it
// sets one of them already, written out again from the merged options (values escaped).
std::string stage_with_options(const StageSpec& stage, const StageSpec& extra) {
    std::string added;
    bool overlap = false;
    for (const auto& option : extra.options) {
        added += (added.empty() ? "" : ",") + option.first +
                 (option.second.empty() ? "" : "=" + option.second);
        overlap |= stage.options.contains(option.first);
    }
    if (added.empty()) return stage.text;
    if (!overlap)
        return stage.text.ends_with(']')
                   ? stage.text.substr(0, stage.text.size() - 1) + "," + added + "]"
                   : stage.text + "[" + added + "]";
    std::map<std::string, std::string> merged = stage.options;
    for (const auto& option : extra.options) merged[option.first] = option.second;
    std::string text = stage.name + "[";
    for (const auto& option : merged) {
        text += (text.back() == '[' ? "" : ",") + option.first;
        if (option.second.empty()) continue;
        text += "=";
        for (const char c : option.second) {
            if (std::string_view(",[]{}\\").find(c) != std::string_view::npos) text += '\\';
            text += c;
        }
    }
    return text + "]";
}

// The pipelines to plan after `refusal`, in order: each remedy the refusal names, a stage put
// right before the writer or, naming the writer's own plugin, options given to the writer; when
// it names none but asks for dequant (the built-in refusals' older spelling: "dequant it
// first"), a dequant stage after the reader. Every one keeps the user's reader and stages. A
// refusal that names no remedy (bump[strict=1]'s) gets none: no inserted stage undoes a choice.
std::vector<std::string> repair_candidates(const std::vector<StageSpec>& stages,
                                           const std::string& refusal) {
    const StageSpec& writer = stages.back();
    std::string before_writer;
    for (std::size_t k = 0; k + 1 < stages.size(); ++k) before_writer += stages[k].text + ":";
    const auto has_stage = [&](const std::string& text) {
        return std::any_of(stages.begin(), stages.end(),
                           [&](const StageSpec& s) { return s.text == text || s.name == text; });
    };
    std::vector<std::string> candidates;
    const std::vector<StageSpec> remedies = remedies_named_in(refusal);
    for (const StageSpec& remedy : remedies) {
        std::string text;
        if (remedy.name == writer.name)
            text = before_writer + stage_with_options(writer, remedy);
        else if (!has_stage(remedy.text))
            text = before_writer + remedy.text + ":" + writer.text;
        if (!text.empty() &&
            std::find(candidates.begin(), candidates.end(), text) == candidates.end())
            candidates.push_back(text);
    }
    if (remedies.empty() && refusal.find("dequant") != std::string::npos && !has_stage("dequant")) {
        std::string text = stages.front().text + ":dequant";
        for (std::size_t k = 1; k < stages.size(); ++k) text += ":" + stages[k].text;
        candidates.push_back(text);
    }
    return candidates;
}

}  // namespace

std::string Pipeline::suggest_pipeline(const fs::path& input, const fs::path& output,
                                       const std::string& input_name,
                                       const std::string& refusal) const {
    std::vector<StageSpec> specs;
    for (const auto& stage : stages_) specs.push_back(stage->spec);
    for (const std::string& text : repair_candidates(specs, refusal)) {
        if (text == text_) continue;
        try {
            Pipeline candidate(registry_, text);
            candidate.plan_stages(input, output, input_name);
            return text;  // the first that plans: one suggestion, checked
        } catch (const ck::Error&) {
            // This repair does not plan (its plugin is absent, or a stage refuses): the next.
        }
    }
    return "";
}

std::vector<std::uint64_t> Pipeline::output_bytes() const {
    std::vector<std::uint64_t> sizes;
    for (const fs::path& p : outputs_) {
        const auto it = context_.output_sizes().find(p);
        if (it == context_.output_sizes().end()) return {};
        sizes.push_back(it->second);
    }
    return sizes;
}

void Pipeline::plan_stages(const fs::path& input, const fs::path& output,
                           const std::string& input_name) {
    headers_.clear();
    Stage& first = *stages_.front();
    headers_.push_back(call_plugin(first.spec.name, [&] { return first.reader->open(input); }));
    if (!input_name.empty()) headers_.back().source = input_name;
    // A reader that converts tensors on read (GGUF-lite's Q4 to F32) hands out other types than
    // the file's general.file_type names: the same rule as after a transform.
    if (const auto update = ck::llama::name_file_type_as_read(headers_.back()); update.changed)
        context_.note("reader '" + first.spec.text + "': " + update.note);
    for (std::size_t k = 1; k + 1 < stages_.size(); ++k) {
        Stage& s = *stages_[k];
        use_converted_adapters(s, input);
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

std::uint64_t Pipeline::row_granule(std::size_t depth, std::size_t index) const {
    const Stage& s = *stages_[depth];
    if (depth == 0) return call_plugin(s.spec.name, [&] { return s.reader->row_granule(index); });
    if (!s.group_of.empty() && s.group_of.at(index) >= 0) return 0;
    const ck::UpstreamGranule upstream = [this, depth](std::size_t i) {
        return row_granule(depth - 1, i);
    };
    return call_plugin(s.spec.name, [&] { return s.transform->row_granule(index, upstream); });
}

ck::TensorView Pipeline::fetch_rows(std::size_t depth, std::size_t index, ck::RowRange rows,
                                    std::vector<double>& seconds) {
    Stage& s = *stages_[depth];
    const auto started = std::chrono::steady_clock::now();
    const ck::UpstreamRows upstream = [this, depth, &seconds](std::size_t i, ck::RowRange r) {
        return fetch_rows(depth - 1, i, r, seconds);
    };
    ck::TensorView view =
        depth == 0 ? call_plugin(s.spec.name, [&] { return s.reader->tensor_rows(index, rows); })
                   : call_plugin(s.spec.name,
                                 [&] { return s.transform->apply_rows(index, rows, upstream); });
    seconds.at(depth) +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return view;
}

}  // namespace ckhost
