// Streaming: every tensor through the stages into the writer, computing ahead on the pool.
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_stages.hpp"

#include <malloc.h>
#include <sys/resource.h>
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

namespace {

// The largest row block: big enough that a block's per-call costs vanish against its bytes,
// small enough that `--threads` of them (input and output) stay a few tens of MiB.
constexpr std::uint64_t max_block_bytes = 4u << 20;

// The process's resident-set high-water mark so far (the kernel's own figure, as `time -v`'s
// "Maximum resident set size"): the memory a conversion really took, plugins included.
std::uint64_t peak_resident_bytes() {
    rusage usage{};
    if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // reported in KiB
}

}  // namespace

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
    const std::size_t depth = stages_.size() - 2;
    item.views.reserve(item.members.size());
    for (std::size_t index : item.members) {
        if (stop_.load(std::memory_order_relaxed)) return;
        item.views.push_back(item.rows ? fetch_rows(depth, index, *item.rows, seconds)
                                       : fetch(depth, index, memo, seconds));
    }
    std::lock_guard lock(seconds_mutex_);
    for (std::size_t k = 0; k + 1 < seconds.size(); ++k) inclusive_seconds_[k] += seconds[k];
}

std::vector<ck::RowRange> Pipeline::row_blocks(std::size_t index, std::uint64_t block_bytes) const {
    const Stage& w = *stages_.back();
    const ck::TensorInfo& t = headers_.back().tensors.at(index);
    const std::uint64_t rows = t.rows();
    if (!w.writer->writes_rows() || rows < 2 || t.nbytes <= block_bytes) return {};
    // A row's bytes at its widest stage: the output's, or f32 inside a stage that widens.
    const std::uint64_t row_bytes =
        std::max<std::uint64_t>(t.row_bytes(), static_cast<std::uint64_t>(t.ne[0]) * 4);
    const std::uint64_t granule = row_granule(stages_.size() - 2, index);
    if (granule == 0) return {};
    const std::uint64_t per_block =
        std::max<std::uint64_t>(granule, block_bytes / row_bytes / granule * granule);
    if (per_block >= rows) return {};
    std::vector<ck::RowRange> blocks;
    for (std::uint64_t first = 0; first < rows; first += per_block)
        blocks.push_back({first, std::min(per_block, rows - first)});
    return blocks;
}

// The writer's work as items: a tensor, its row blocks, or the whole group the last transform
// computes it with, in the order of each item's first tensor; and the writer's calls in order.
void Pipeline::make_items(const std::vector<std::size_t>& order, std::uint64_t block_bytes,
                          std::vector<Item>& items, std::vector<Step>& steps) const {
    const ck::ModelHeader& final_header = headers_.back();
    const Stage& last = *stages_[stages_.size() - 2];
    // An item's cost: its tensors' bytes at every stage (views of the input are resident once
    // read; each transform's outputs are buffers until the writer is done with them); a row
    // block's, its share of its tensor's.
    std::vector<std::map<std::string_view, std::uint64_t>> bytes_by_name(headers_.size());
    for (std::size_t k = 0; k < headers_.size(); ++k)
        for (const ck::TensorInfo& t : headers_[k].tensors) bytes_by_name[k][t.name] = t.nbytes;
    auto cost_of = [&](std::size_t index) {
        std::uint64_t cost = 0;
        for (const auto& by_name : bytes_by_name)
            if (auto it = by_name.find(final_header.tensors[index].name); it != by_name.end())
                cost += it->second;
        return cost;
    };
    std::vector<std::size_t> item_of(final_header.tensors.size(), SIZE_MAX);
    for (std::size_t index : order) {
        if (item_of.at(index) == SIZE_MAX) {
            const bool grouped = !last.group_of.empty() && last.group_of.at(index) >= 0;
            const std::vector<ck::RowRange> blocks =
                grouped ? std::vector<ck::RowRange>{} : row_blocks(index, block_bytes);
            if (!blocks.empty()) {
                const std::uint64_t rows = blocks.back().first + blocks.back().count;
                const std::uint64_t tensor_cost = cost_of(index);
                for (const ck::RowRange& block : blocks) {
                    steps.push_back({items.size(), index, 0});
                    Item& item = items.emplace_back();
                    item.members = {index};
                    item.rows = block;
                    item.cost = (tensor_cost * block.count + rows - 1) / rows;
                }
                continue;
            }
            Item item;
            item.members = grouped ? last.groups[static_cast<std::size_t>(last.group_of[index])]
                                   : std::vector<std::size_t>{index};
            for (std::size_t m : item.members) {
                item.cost += cost_of(m);
                item_of.at(m) = items.size();
            }
            items.push_back(std::move(item));
        }
        const Item& item = items[item_of[index]];
        const auto slot = static_cast<std::size_t>(
            std::find(item.members.begin(), item.members.end(), index) - item.members.begin());
        steps.push_back({item_of[index], index, slot});
    }
}

namespace {

// The items computed ahead of the writer and not yet written: at most `window` of them and
// `budget` bytes, except that the item the writer needs now always starts.
struct InFlight {
    std::size_t window;
    std::uint64_t budget;
    std::uint64_t block_bytes = 0;  // the row blocks' size (row_blocks)
    std::size_t row_blocks = 0;     // written so far
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

// The report's `compute_ahead`: how the run went ahead of the writer, and at what memory.
json ahead_summary(const InFlight& flight, const std::string& why_not) {
    json summary = {{"concurrent", why_not.empty()},   {"window", flight.window},
                    {"max_memory", flight.budget},     {"block_bytes", flight.block_bytes},
                    {"row_blocks", flight.row_blocks}, {"peak_tensors", flight.peak_items},
                    {"peak_bytes", flight.peak_bytes}, {"peak_rss", peak_resident_bytes()}};
    if (!why_not.empty()) summary["why_not"] = why_not;
    return summary;
}

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
    const std::string reason = sequential_reason();
    const bool ahead = reason.empty();
    InFlight flight{ahead ? ck::thread_count() : 1,
                    settings.max_memory ? settings.max_memory : default_max_memory()};
    // Tensors larger than a block travel in row blocks where every stage allows it: the
    // window's items then hold blocks, not whole tensors (docs/design.md, "Row blocks").
    flight.block_bytes =
        std::min<std::uint64_t>(max_block_bytes, flight.budget / (2 * flight.window));
    std::vector<Item> items;
    std::vector<Step> steps;
    make_items(writer_order(), flight.block_bytes, items, steps);
    // Planning parsed what the readers needed (a 150k-token tokenizer.json is tens of MiB of
    // parse tree) and freed it; glibc keeps freed heap pages in the process unless asked, and
    // they would count in the conversion's resident memory to its end.
    ::malloc_trim(0);
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
        for (const Step& step : steps) {
            Item& item = items[step.item];
            if (!item.started) start(item);  // needed now, whatever the budget says
            admit();
            progress.update(done, final_header.tensors.at(step.index).name);
            if (item.task) item.task->wait();
            const ck::TensorView view = std::exchange(item.views.at(step.slot), {});
            if (item.rows)
                call_writer([&] { w.writer->write_rows(step.index, *item.rows, view); });
            else
                call_writer([&] { w.writer->write(step.index, view); });
            flight.row_blocks += item.rows.has_value();
            done += view.size();
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
    return ahead_summary(flight, reason);
}

}  // namespace ckhost
