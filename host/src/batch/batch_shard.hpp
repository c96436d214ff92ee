// `ckhost batch --shard`: which slice of a jobs list one task of a scheduler's job array runs
// (cli.md, examples/batch/README.md). Every task computes the same split from the same list, so
// the slices never overlap and together hold every job.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ckhost {

struct ShardSpec {
    unsigned index = 0;  // 0 .. count-1
    unsigned count = 1;
    std::string source;  // "--shard" or the variables it came from ("SLURM_ARRAY_TASK_ID")
};

// Reads an environment variable: nullptr when unset (std::getenv; tests pass their own).
using EnvLookup = std::function<const char*(const char*)>;

// Parses --shard's value: "K/N" (K from 0 to N-1), "auto" (the scheduler's array variables:
// Slurm, SGE, or with a count Kubernetes and PBS), or "auto/N" (the index from the scheduler,
// N shards). Throws a usage error saying what was wrong.
ShardSpec parse_shard(const std::string& text, const EnvLookup& env);

// One job as the split sees it: the files it writes (its planned outputs, or its OUTPUT
// argument when it cannot be planned) and its weight (its input's size in bytes).
struct ShardItem {
    std::vector<std::string> keys;
    std::uint64_t weight = 0;
};

// The shard of each item. Items sharing a key form one group, which goes whole to one shard;
// groups are taken heaviest first (ties: the smallest key) and each goes to the shard with the
// least weight so far (ties: the lowest index) — greedy longest-processing-time, within 4/3 of
// the best possible balance. Depends only on the keys and weights, not on their order.
std::vector<unsigned> assign_shards(const std::vector<ShardItem>& items, unsigned count);

}  // namespace ckhost
