// Streaming: every tensor through the stages into the writer, computing ahead on the pool.
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

// The writer's work as items: a tensor, or the whole group the last transform computes it
// with, in the order of each item's first tensor; `item_of` maps each tensor to its item.
std::vector<Pipeline::Item> Pipeline::make_items(const std::vector<std::size_t>& order,
                                                 std::vector<std::size_t>& item_of) const {
    const ck::ModelHeader& final_header = headers_.back();
    const Stage& last = *stages_[stages_.size() - 2];
    std::vector<Item> items;
    item_of.assign(final_header.tensors.size(), SIZE_MAX);
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
    return items;
}

namespace {

// The items computed ahead of the writer and not yet written: at most `window` of them and
// `budget` bytes, except that the item the writer needs now always starts.
struct InFlight {
    std::size_t window;
    std::uint64_t budget;
    std::size_t count = 0, peak_items = 0;
    std::uint64_t bytes = 0, peak_bytes = 0;

    bool fits(std::uint64_t cost) const { return count < window && bytes + cost <= budget; }
    void add(std::uint64_t cost) {
        ++count;
        bytes += cost;
        peak_items = std::max(peak_items, count);
        peak_bytes = std::max(peak_bytes, bytes);
    }
    void remove(std::uint64_t cost) {
        --count;
        bytes -= cost;
    }
};

}  // namespace

std::vector<std::size_t> Pipeline::writer_order() {
    Stage& w = *stages_.back();
    std::vector<std::size_t> order = call_plugin(w.spec.name, [&] { return w.writer->order(); });
    if (order.empty()) {
        order.resize(headers_.back().tensors.size());
        std::iota(order.begin(), order.end(), 0);
    }
    return order;
}

json Pipeline::stream(const ConvertSettings& settings, ck::OutputSet& out) {
    Stage& w = *stages_.back();
    const ck::ModelHeader& final_header = headers_.back();
    const std::vector<std::size_t> order = writer_order();
    std::vector<std::size_t> item_of;
    std::vector<Item> items = make_items(order, item_of);

    const std::string reason = sequential_reason();
    const bool ahead = reason.empty();
    InFlight flight{ahead ? ck::thread_count() : 1,
                    settings.max_memory ? settings.max_memory : default_max_memory()};
    std::size_t next = 0;
    auto start = [&](Item& item) {
        item.started = true;
        flight.add(item.cost);
        if (ahead)
            item.task = std::make_unique<ck::Task>([this, &item] { compute(item); });
        else
            compute(item);  // here, on this thread: the stages are not declared concurrent
    };
    // Starts the next items while they fit the window and the budget.
    auto admit = [&] {
        for (; next < items.size() && (items[next].started || flight.fits(items[next].cost));
             ++next)
            if (!items[next].started) start(items[next]);
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
                flight.remove(item.cost);
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
                    {"window", flight.window},
                    {"max_memory", flight.budget},
                    {"peak_tensors", flight.peak_items},
                    {"peak_bytes", flight.peak_bytes}};
    if (!ahead) summary["why_not"] = reason;
    return summary;
}

}  // namespace ckhost
