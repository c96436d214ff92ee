// --max-memory: how many bytes of tensors the runner may hold computed ahead of the writer.
#pragma once

#include <cstdint>

namespace ckhost {

// The default budget: a quarter of the memory this process may use (the machine's RAM, or its
// cgroup's memory.max when that is lower, as under Slurm or a container).
std::uint64_t default_max_memory();

}  // namespace ckhost
