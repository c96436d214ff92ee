#include "batch/batch_shard.hpp"

#include <boost/pending/disjoint_sets.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <queue>

#include "ck/error.hpp"

namespace ckhost {
namespace {

// A whole non-negative decimal number, nothing else ("3", not "3 ", "-1", "0x3" or "").
std::optional<long long> whole_number(std::string_view text) {
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
    return value;
}

// The largest shard count: far more tasks than any array a scheduler accepts (Slurm's
// MaxArraySize defaults to 1001), small enough that a typo such as 1/1000000000 is refused.
constexpr long long max_shards = 100000;

unsigned count_or_throw(std::string_view text, const std::string& what) {
    const auto n = whole_number(text);
    if (!n || *n < 1 || *n > max_shards)
        throw ck::usage_error(what + ": expected a shard count from 1 to " +
                              std::to_string(max_shards) + ", found '" + std::string(text) + "'");
    return static_cast<unsigned>(*n);
}

// A variable that must be a number, or nullopt when it is unset.
std::optional<long long> number_from(const EnvLookup& env, const char* name) {
    const char* value = env(name);
    if (!value) return std::nullopt;
    const auto n = whole_number(value);
    if (!n)
        throw ck::usage_error(std::string("--shard auto: ") + name + "=" + value +
                              ": expected a whole number (is this an array task?)");
    return n;
}

// The index and count the scheduler's variables give, in the order Slurm, Kubernetes, PBS,
// SGE (the first whose index variable is set); `count` is auto/N's N, when given.
ShardSpec from_environment(const EnvLookup& env, std::optional<unsigned> count) {
    auto finish = [&](long long index, std::optional<long long> n, std::string source) {
        if (count) n = *count;
        if (!n)
            throw ck::usage_error("--shard auto: " + source +
                                  " gives the index but not the number of tasks: use --shard "
                                  "auto/N");
        if (*n < 1 || *n > max_shards || index >= *n)
            throw ck::usage_error("--shard auto: " + source + " gives task " +
                                  std::to_string(index) + " of " + std::to_string(*n) +
                                  " (expected an index from 0 to the count - 1)");
        return ShardSpec{static_cast<unsigned>(index), static_cast<unsigned>(*n), source};
    };
    if (const auto id = number_from(env, "SLURM_ARRAY_TASK_ID")) {
        // Slurm numbers tasks as submitted (--array=1-16 or 0-15): the index is counted from
        // the first. A step or a list with gaps (--array=0-15:2, 1,5,7) cannot map onto
        // consecutive shards: refused rather than guessed.
        const auto min = number_from(env, "SLURM_ARRAY_TASK_MIN");
        const auto max = number_from(env, "SLURM_ARRAY_TASK_MAX");
        const auto total = number_from(env, "SLURM_ARRAY_TASK_COUNT");
        const auto step = number_from(env, "SLURM_ARRAY_TASK_STEP");
        const long long first = min.value_or(0);
        if (*id < first)
            throw ck::usage_error("--shard auto: SLURM_ARRAY_TASK_ID=" + std::to_string(*id) +
                                  " is below SLURM_ARRAY_TASK_MIN=" + std::to_string(first));
        std::optional<long long> n = total;
        if (min && max) {
            if ((step && *step != 1) || (total && *total != *max - *min + 1))
                throw ck::usage_error(
                    "--shard auto: the Slurm array is not a range of consecutive tasks "
                    "(SLURM_ARRAY_TASK_MIN/MAX/COUNT/STEP); submit --array=0-N-1, or give "
                    "--shard K/N");
            n = *max - *min + 1;
        }
        return finish(*id - first, n, "SLURM_ARRAY_TASK_ID");
    }
    if (const auto index = number_from(env, "JOB_COMPLETION_INDEX"))
        return finish(*index, number_from(env, "CKHOST_SHARD_COUNT"), "JOB_COMPLETION_INDEX");
    if (const auto index = number_from(env, "PBS_ARRAY_INDEX"))
        return finish(*index, number_from(env, "CKHOST_SHARD_COUNT"), "PBS_ARRAY_INDEX");
    if (const char* sge = env("SGE_TASK_ID"); sge && std::string_view(sge) != "undefined") {
        // SGE: -t FIRST-LAST:STEP; the task IDs are FIRST, FIRST+STEP, ... LAST.
        const long long id = *number_from(env, "SGE_TASK_ID");
        const long long first = number_from(env, "SGE_TASK_FIRST").value_or(1);
        const long long step = std::max(1LL, number_from(env, "SGE_TASK_STEPSIZE").value_or(1));
        const auto last = number_from(env, "SGE_TASK_LAST");
        if (id < first || (id - first) % step != 0)
            throw ck::usage_error("--shard auto: SGE_TASK_ID=" + std::to_string(id) +
                                  " is not one of the array's tasks (SGE_TASK_FIRST, "
                                  "SGE_TASK_STEPSIZE)");
        std::optional<long long> n;
        if (last) n = (*last - first) / step + 1;
        return finish((id - first) / step, n, "SGE_TASK_ID");
    }
    throw ck::usage_error(
        "--shard auto: not in an array task (none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, "
        "PBS_ARRAY_INDEX, SGE_TASK_ID is set); give --shard K/N");
}

}  // namespace

ShardSpec parse_shard(const std::string& text, const EnvLookup& env) {
    const auto slash = text.find('/');
    const std::string head = text.substr(0, slash);
    std::optional<unsigned> count;
    if (slash != std::string::npos)
        count = count_or_throw(std::string_view(text).substr(slash + 1), "--shard " + text);
    if (head == "auto") return from_environment(env, count);
    const auto index = whole_number(head);
    if (!count || !index)
        throw ck::usage_error("--shard " + text +
                              ": expected K/N (K from 0 to N-1), auto or auto/N");
    if (*index >= *count)
        throw ck::usage_error("--shard " + text + ": the index must be below the count (K from " +
                              "0 to " + std::to_string(*count - 1) + ")");
    return {static_cast<unsigned>(*index), *count, "--shard"};
}

std::vector<unsigned> assign_shards(const std::vector<ShardItem>& items, unsigned count) {
    // Groups: items that share a key (one output file) are joined.
    std::vector<std::size_t> rank(items.size()), parent(items.size());
    boost::disjoint_sets<std::size_t*, std::size_t*> sets(rank.data(), parent.data());
    std::map<std::string, std::size_t> owner;  // key -> the first item that has it
    for (std::size_t i = 0; i < items.size(); ++i) {
        sets.make_set(i);
        for (const auto& key : items[i].keys) {
            const auto [it, fresh] = owner.emplace(key, i);
            if (!fresh) sets.union_set(it->second, i);
        }
    }
    struct Group {
        std::uint64_t weight = 0;
        std::string key;  // the group's smallest key: a name independent of the list's order
        std::vector<std::size_t> members;
    };
    std::map<std::size_t, Group> by_root;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Group& g = by_root[sets.find_set(i)];
        g.weight += items[i].weight;
        for (const auto& key : items[i].keys)
            if (g.key.empty() || key < g.key) g.key = key;
        g.members.push_back(i);
    }
    std::vector<Group*> groups;
    for (auto& [root, g] : by_root) groups.push_back(&g);
    std::sort(groups.begin(), groups.end(), [](const Group* a, const Group* b) {
        return a->weight != b->weight ? a->weight > b->weight : a->key < b->key;
    });
    // The least loaded shard first, the lowest index among equals.
    using Load = std::pair<std::uint64_t, unsigned>;
    std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
    for (unsigned s = 0; s < count; ++s) loads.push({0, s});
    std::vector<unsigned> shard(items.size(), 0);
    for (const Group* g : groups) {
        auto [load, s] = loads.top();
        loads.pop();
        for (std::size_t i : g->members) shard[i] = s;
        // Each job costs something beyond its bytes (a process, planning): weightless jobs
        // (missing inputs) still spread over the shards instead of piling onto one.
        loads.push({load + g->weight + 1, s});
    }
    return shard;
}

}  // namespace ckhost
