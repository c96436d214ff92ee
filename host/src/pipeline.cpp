#include "pipeline.hpp"

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

#include "checksum.hpp"
#include "ck/conventions/ckhost_keys.hpp"
#include "ck/conventions/output_bytes.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/mapped_file.hpp"
#include "ck/parallel.hpp"
#include "conversion_error.hpp"
#include "memory_budget.hpp"
#include "plugin_call.hpp"
#include "progress.hpp"
#include "recipe.hpp"
#include "suggest.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {

struct Pipeline::Stage {
    const PluginEntry* plugin = nullptr;
    StageSpec spec;
    std::uint32_t kind = 0;
    std::unique_ptr<ck::Reader> reader;
    std::unique_ptr<ck::Transform> transform;
    std::unique_ptr<ck::Writer> writer;
    // What a transform declared it computes together (Transform::groups), and for each tensor
    // of its header the group it belongs to (-1: none).
    std::vector<ck::TensorGroup> groups;
    std::vector<std::ptrdiff_t> group_of;
};

// A unit of the writer's work: one tensor, or a group the last transform computes at once.
struct Pipeline::Item {
    std::vector<std::size_t> members;   // final-header indices, in the group's order
    std::vector<ck::TensorView> views;  // members' bytes once computed; each dropped once written
    std::uint64_t cost = 0;             // planned bytes held while the item is in flight
    std::size_t written = 0;
    bool started = false;
    std::unique_ptr<ck::Task> task;  // computing ahead on the pool
};

namespace {

const char* kind_word(std::uint32_t kind) {
    return kind == CK_STAGE_READER ? "reader" : kind == CK_STAGE_WRITER ? "writer" : "transform";
}

// Unknown names and values outside a declared list of choices are usage errors, found before
// any plugin code runs.
ck::Options checked_options(const PluginEntry& plugin, const StageSpec& spec, std::uint32_t kind) {
    const ck_plugin_descriptor& d = *plugin.descriptor;
    std::vector<std::string> known;
    for (std::size_t i = 0; i < d.option_count; ++i)
        if (d.options[i].stages & kind) known.push_back(d.options[i].name);
    for (const auto& [key, value] : spec.options) {
        const ck_option_descriptor* found = nullptr;
        for (std::size_t i = 0; i < d.option_count; ++i)
            if ((d.options[i].stages & kind) && key == d.options[i].name) found = &d.options[i];
        if (!found)
            throw ck::usage_error("stage '" + spec.text + "': unknown option '" + key +
                                  "' for the " + kind_word(kind) + " '" + spec.name + "'" +
                                  did_you_mean(key, known) +
                                  " (options: " + (known.empty() ? "none" : join(known)) + ")");
        if (found->choices) {
            std::string choices = found->choices;
            std::vector<std::string> allowed;
            std::size_t start = 0;
            while (start <= choices.size()) {
                std::size_t bar = choices.find('|', start);
                if (bar == std::string::npos) bar = choices.size();
                allowed.push_back(choices.substr(start, bar - start));
                start = bar + 1;
            }
            if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
                throw ck::usage_error("stage '" + spec.text + "': bad value '" + value +
                                      "' for option '" + key + "'" + did_you_mean(value, allowed) +
                                      " (choices: " + join(allowed, "|") + ")");
        }
    }
    return ck::Options(spec.options);
}

std::string position_word(std::size_t i, std::size_t n) {
    if (i == 0) return "first";
    if (i + 1 == n) return "last";
    return "middle";
}

}  // namespace

Pipeline::Pipeline(PluginRegistry& registry, const std::string& text)
    : registry_(registry), text_(text) {
    auto specs = parse_pipeline(text);
    if (specs.size() < 2)
        throw ck::usage_error(
            "pipeline '" + text +
            "' needs at least a reader and a writer: reader[:transform...]:writer");
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto stage = std::make_unique<Stage>();
        stage->spec = specs[i];
        stage->kind = i == 0                  ? CK_STAGE_READER
                      : i + 1 == specs.size() ? CK_STAGE_WRITER
                                              : CK_STAGE_TRANSFORM;
        stage->plugin = &registry.get(stage->spec.name);
        const ck_plugin_descriptor& d = *stage->plugin->descriptor;
        if (!(d.stages & stage->kind)) {
            auto fitting = registry.names_with(stage->kind);
            throw ck::usage_error("stage '" + stage->spec.name + "' cannot be the " +
                                  position_word(i, specs.size()) + " stage: it is a " +
                                  stage_kinds_string(d.stages) + ", not a " +
                                  kind_word(stage->kind) + " (" + kind_word(stage->kind) +
                                  "s: " + (fitting.empty() ? "none found" : join(fitting)) + ")");
        }
        ck::Options options = checked_options(*stage->plugin, stage->spec, stage->kind);
        const std::string& name = stage->spec.name;
        call_plugin(name, [&] {
            if (stage->kind == CK_STAGE_READER && d.create_reader)
                stage->reader.reset(d.create_reader(options, context_));
            else if (stage->kind == CK_STAGE_TRANSFORM && d.create_transform)
                stage->transform.reset(d.create_transform(options, context_));
            else if (stage->kind == CK_STAGE_WRITER && d.create_writer)
                stage->writer.reset(d.create_writer(options, context_));
        });
        if (!stage->reader && !stage->transform && !stage->writer)
            throw ck::Error("plugin '" + name + "' declares a " + kind_word(stage->kind) +
                                " but did not create one",
                            stage->plugin->path.string(), {}, {}, ck::ErrorKind::plugin);
        stages_.push_back(std::move(stage));
    }
}

Pipeline::~Pipeline() = default;

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
                    throw ck::Error(
                        "stage '" + s.spec.text + "' declared a tensor group with " +
                            (index >= s.group_of.size()
                                 ? "an index out of range (" + std::to_string(index) + ")"
                                 : "tensor " + std::to_string(index) + " twice") +
                            " (a plugin bug)",
                        s.plugin->path.string(), {}, {}, ck::ErrorKind::plugin);
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
        throw ck::Error(message, file, {}, "key '" + key + "'");
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
            throw ck::Error("stage '" + s.spec.text + "' returned " + std::to_string(views.size()) +
                                " tensors for a group of " + std::to_string(group.size()) +
                                " (a plugin bug)",
                            s.plugin->path.string(), {}, {}, ck::ErrorKind::plugin);
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

std::string Pipeline::sequential_reason() const {
    if (ck::thread_count() == 1) return "one thread";
    for (std::size_t k = 0; k + 1 < stages_.size(); ++k)
        if (!(stages_[k]->plugin->descriptor->flags & CK_PLUGIN_FLAG_CONCURRENT))
            return "stage '" + stages_[k]->spec.name + "' is not declared concurrent";
    return {};
}

void Pipeline::compute(Item& item) {
    GroupMemo memo;
    std::vector<double> seconds(stages_.size(), 0.0);
    item.views.reserve(item.members.size());
    for (std::size_t index : item.members) {
        if (stop_.load(std::memory_order_relaxed)) return;
        item.views.push_back(fetch(stages_.size() - 2, index, memo, seconds));
    }
    std::lock_guard lock(seconds_mutex_);
    for (std::size_t k = 0; k + 1 < seconds.size(); ++k) inclusive_seconds_[k] += seconds[k];
}

json Pipeline::stream(const ConvertSettings& settings, ck::OutputSet& out) {
    Stage& w = *stages_.back();
    const ck::ModelHeader& final_header = headers_.back();
    std::vector<std::size_t> order = call_plugin(w.spec.name, [&] { return w.writer->order(); });
    if (order.empty()) {
        order.resize(final_header.tensors.size());
        std::iota(order.begin(), order.end(), 0);
    }

    // The writer's work as items: a tensor, or the whole group the last transform computes
    // it with, in the order of each item's first tensor.
    const Stage& last = *stages_[stages_.size() - 2];
    std::vector<Item> items;
    std::vector<std::size_t> item_of(final_header.tensors.size(), SIZE_MAX);
    for (std::size_t index : order) {
        if (item_of.at(index) != SIZE_MAX) continue;
        Item item;
        if (!last.group_of.empty() && last.group_of.at(index) >= 0)
            item.members = last.groups[static_cast<std::size_t>(last.group_of[index])];
        else
            item.members = {index};
        for (std::size_t m : item.members) item_of.at(m) = items.size();
        items.push_back(std::move(item));
    }
    // An item's cost: its tensors' bytes at every stage (views of the input are resident once
    // read; each transform's outputs are buffers until the writer is done with them).
    std::vector<std::map<std::string_view, std::uint64_t>> bytes_by_name(headers_.size());
    for (std::size_t k = 0; k < headers_.size(); ++k)
        for (const ck::TensorInfo& t : headers_[k].tensors) bytes_by_name[k][t.name] = t.nbytes;
    for (Item& item : items)
        for (std::size_t m : item.members)
            for (const auto& by_name : bytes_by_name)
                if (auto it = by_name.find(final_header.tensors[m].name); it != by_name.end())
                    item.cost += it->second;

    const std::string reason = sequential_reason();
    const bool ahead = reason.empty();
    const std::size_t window = ahead ? ck::thread_count() : 1;
    const std::uint64_t budget = settings.max_memory ? settings.max_memory : default_max_memory();
    std::size_t next = 0, in_flight = 0, peak_items = 0;
    std::uint64_t in_flight_bytes = 0, peak_bytes = 0;
    auto start = [&](Item& item) {
        item.started = true;
        ++in_flight;
        in_flight_bytes += item.cost;
        peak_items = std::max(peak_items, in_flight);
        peak_bytes = std::max(peak_bytes, in_flight_bytes);
        if (ahead)
            item.task = std::make_unique<ck::Task>([this, &item] { compute(item); });
        else
            compute(item);  // here, on this thread: the stages are not declared concurrent
    };
    // Starts the next items while they fit the window and the budget.
    auto admit = [&] {
        while (next < items.size() &&
               (items[next].started ||
                (in_flight < window && in_flight_bytes + items[next].cost <= budget))) {
            if (!items[next].started) start(items[next]);
            ++next;
        }
    };

    // The writer's calls, timed (they run on this thread only).
    auto call_writer = [&](auto&& fn) {
        const auto started = std::chrono::steady_clock::now();
        call_plugin(w.spec.name, fn);
        inclusive_seconds_.back() +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    Progress progress(settings.progress, final_header.total_bytes());
    std::uint64_t done = 0;
    stop_ = false;
    try {
        call_writer([&] { w.writer->begin(out); });
        for (std::size_t index : order) {
            const ck::TensorInfo& t = final_header.tensors.at(index);
            Item& item = items[item_of[index]];
            if (!item.started) start(item);  // needed now, whatever the budget says
            admit();
            progress.update(done, t.name);
            if (item.task) item.task->wait();
            const std::size_t slot = static_cast<std::size_t>(
                std::find(item.members.begin(), item.members.end(), index) - item.members.begin());
            const ck::TensorView view = std::exchange(item.views.at(slot), {});
            call_writer([&] { w.writer->write(index, view); });
            done += t.nbytes;
            if (++item.written == item.members.size()) {
                item.task.reset();
                item.views.clear();
                --in_flight;
                in_flight_bytes -= item.cost;
            }
            ck::throw_if_interrupted();
            admit();
        }
        call_writer([&] { w.writer->finish(); });
    } catch (...) {
        // Workers see the flag between tensors; ~Task waits for each one still running, so no
        // worker outlives the stages it calls.
        stop_ = true;
        items.clear();
        throw;
    }
    progress.finish();
    json summary = {{"concurrent", ahead},
                    {"window", window},
                    {"max_memory", budget},
                    {"peak_tensors", peak_items},
                    {"peak_bytes", peak_bytes}};
    if (!ahead) summary["why_not"] = reason;
    return summary;
}

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
    return {{"tensors", tensors}, {"dropped", dropped}};
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
    // Why a stage chose what it did, when it says: "<key>.why" reports (tensor -> text).
    std::map<std::string, std::vector<std::string>> whys;
    for (const auto& [key, value] : context_.reports())
        if (key.ends_with(".why"))
            if (json why = json::parse(value, nullptr, false); why.is_object())
                for (const auto& [name, text] : why.items())
                    if (text.is_string()) whys[name].push_back(text.get<std::string>());
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

json Pipeline::recipe(const fs::path& input) const {
    json stages = json::array();
    for (const auto& s : stages_)
        stages.push_back({{"name", s->spec.name},
                          {"options", s->spec.options},
                          {"plugin_version", s->plugin->descriptor->version},
                          {"plugin_sha256", file_digest(s->plugin->path)}});
    // The host decides things too (the file-type rule, ckhost.* keys), so its own build counts:
    // the program and the SDK library the plugins share.
    const fs::path program = boost::dll::program_location();
    const fs::path sdk = boost::dll::symbol_location_ptr(&ck::thread_count);
    return {{"pipeline", text_},
            {"stages", stages},
            {"input", input_identity(input)},
            {"ckhost",
             {{"version", CKHOST_VERSION},
              {"sha256", file_digest(program)},
              {"sdk_sha256", file_digest(sdk)}}}};
}

const std::string& Pipeline::writer_name() const {
    return stages_.back()->spec.name;
}

bool Pipeline::writer_streams() const {
    return (stages_.back()->plugin->descriptor->flags & CK_PLUGIN_FLAG_STREAMS) != 0;
}

namespace {

// What identifies the input between planning and commit: the file the path names, its size
// and its modification time.
struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};
};

std::optional<FileIdentity> identity_of(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

// The reader mapped the input when the conversion was planned, and a mapping outlives the
// name: an input deleted or replaced (a newer download renamed over it) since then would still
// convert, from the old bytes, into outputs that look newer than the new input (`--update` and
// batches would then skip it for good). An input written in place without shrinking escapes the
// SIGBUS guard the same way. So before commit the path must still name the same, unchanged file.
void check_input_unchanged(const fs::path& input, const std::optional<FileIdentity>& before) {
    const auto now = identity_of(input);
    if (!before) return;
    if (!now)
        throw ck::Error("the file was removed while being read; nothing was written",
                        input.string());
    if (now->device != before->device || now->inode != before->inode || now->size != before->size ||
        now->modified.tv_sec != before->modified.tv_sec ||
        now->modified.tv_nsec != before->modified.tv_nsec)
        throw ck::input_changed_error(input.string());
}

// The sizes of `files` added up (symbolic links followed: what was written through them).
std::uint64_t bytes_of(const std::vector<fs::path>& files) {
    std::uint64_t total = 0;
    for (const auto& p : files) total += fs::file_size(p);
    return total;
}

}  // namespace

ConvertResult Pipeline::run(const ConvertSettings& settings) {
    const bool to_stdout = settings.output == "-";
    ck::OutputSet out(settings.force || settings.update);
    out.set_sync(settings.sync);
    if (to_stdout) out.stream_to(STDOUT_FILENO);
    try {
        return convert(settings, out);
    } catch (const ck::Error& e) {
        // Standard input's spool file is an implementation detail: call it what the user gave.
        const ck::Error shown = settings.input_file && e.file() == settings.input_file->string()
                                    ? e.with_file("standard input")
                                    : e;
        const auto* failed = dynamic_cast<const ConversionError*>(&e);
        const std::string suggestion = failed ? failed->suggestion() : "";
        // The warnings given so far often explain the error: they go with it.
        if (!out.stream_started()) throw ConversionError(shown, context_.warnings(), suggestion);
        // What went to standard output cannot be taken back; the exit status says it failed.
        throw ConversionError(
            ck::Error(shown.message() + "; what standard output has received is not a "
                                        "complete conversion: discard it",
                      shown.file(), shown.offset(), shown.subject(), shown.kind()),
            context_.warnings(), suggestion);
    }
}

ConvertResult Pipeline::convert(const ConvertSettings& settings, ck::OutputSet& out) {
    auto started = std::chrono::steady_clock::now();
    const bool to_stdout = settings.output == "-";
    const fs::path& input = settings.input_file ? *settings.input_file : settings.input;
    // Taken before the reader opens the file: a change between the two is then caught too.
    const auto input_identity = identity_of(input);
    plan(input, settings.output, settings.input_file ? "stdin" : "");
    if (to_stdout && outputs_ != std::vector<fs::path>{"-"}) {
        std::vector<std::string> names;
        for (const auto& p : outputs_) names.push_back(p.string());
        throw ck::usage_error("-o -: the writer '" + stages_.back()->spec.text + "' would write " +
                              std::to_string(outputs_.size()) + " files (" + join(names) +
                              "); standard output takes one");
    }
    // --update: the recipe as it is now, and whether the record beside the outputs matches it.
    json recipe;
    Freshness freshness;
    if (settings.update) {
        recipe = this->recipe(input);
        if (!settings.force) freshness = check_recipe(recipe, outputs_);
    }
    const bool up_to_date = freshness.up_to_date;
    if (!to_stdout)
        for (const auto& p : outputs_) out.check_target(p);

    json report = {{"command", "convert"},
                   {"pipeline", settings.pipeline},
                   {"input", settings.input.string()},
                   {"sync", settings.sync},
                   {"dry_run", settings.dry_run},
                   {"up_to_date", up_to_date}};
    if (settings.update && !settings.force && !up_to_date) {
        report["update_reason"] = freshness.reason;
        if (settings.say && !settings.dry_run) settings.say("converting: " + freshness.reason);
    }
    json stages = json::array();
    for (const auto& s : stages_)
        stages.push_back(
            {{"name", s->spec.name}, {"kind", kind_word(s->kind)}, {"options", s->spec.options}});
    report["stages"] = stages;
    report["threads"] = ck::thread_count();
    report["bytes_in"] = headers_.front().total_bytes();
    // The tensors' bytes the writer is given.
    report["tensor_bytes_out"] = headers_.back().total_bytes();
    // The bytes the outputs will hold when the writer states them (ck/conventions/
    // output_bytes.hpp); otherwise the tensors' bytes.
    const std::vector<std::uint64_t> sizes = output_bytes();
    report["bytes_out"] = sizes.empty()
                              ? headers_.back().total_bytes()
                              : std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0});
    json outputs = json::array();
    for (const auto& p : outputs_) outputs.push_back(p.string());
    report["outputs"] = outputs;
    report["plan"] = plan_json();

    if (!settings.dry_run && !up_to_date) {
        // Temporary files that a killed ckhost left beside these targets go first.
        json removed = json::array();
        if (!to_stdout)
            for (const ck::StaleTemporary& stale : ck::remove_stale_temporaries(outputs_)) {
                if (settings.say)
                    settings.say("removed stale temporary file " + stale.path.string() +
                                 " left by ckhost process " + std::to_string(stale.pid));
                removed.push_back({{"path", stale.path.string()}, {"pid", stale.pid}});
            }
        if (!removed.empty()) report["stale_temporaries_removed"] = removed;
        inclusive_seconds_.assign(stages_.size(), 0.0);
        report["compute_ahead"] = stream(settings, out);
        // Each stage's own time, summed over the threads that called it: its calls minus the
        // upstream calls they made. The writer's calls make none.
        report["stages"][0]["seconds"] = inclusive_seconds_[0];
        for (std::size_t k = 1; k + 1 < stages_.size(); ++k)
            report["stages"][k]["seconds"] = inclusive_seconds_[k] - inclusive_seconds_[k - 1];
        report["stages"].back()["seconds"] = inclusive_seconds_.back();
        check_input_unchanged(input, input_identity);
        // The old record goes before the outputs it describes are replaced, the new one comes
        // after: a crash between the two leaves no record, never a false one.
        if (settings.update && !to_stdout) forget_recipe(outputs_);
        out.commit();
        if (settings.update && !to_stdout) record_recipe(recipe, outputs_);
        // What the files hold, headers, padding and zero slots included: the plan's figure
        // counts only the tensors the writer was given.
        if (!to_stdout) report["bytes_out"] = bytes_of(outputs_);
        if (settings.checksums && !to_stdout) {
            json checksums = json::object();
            for (const auto& p : outputs_) checksums[p.string()] = sha256_file(p);
            report["checksums"] = checksums;
        }
    }
    report["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report["warnings"] = context_.warnings();
    report["notes"] = context_.notes();
    json extra = json::object();
    for (const auto& [key, value] : context_.reports())
        if (!key.starts_with(ck::conventions::output_bytes_report_prefix))  // in bytes_out
            extra[key] = json::parse(value, nullptr, false);
    report["reports"] = extra;
    return {report, context_.warnings(), context_.notes()};
}

}  // namespace ckhost
