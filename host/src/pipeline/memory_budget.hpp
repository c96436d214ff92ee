// --max-memory: how many bytes of tensors the runner may hold computed ahead of the writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ckhost {

// "512M", "2G", "1.5G", "4096" (bytes); K, M, G, T are powers of 1024, an optional trailing
// "B" or "iB" is accepted. nullopt for anything else, zero included.
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

// The default budget: a quarter of the memory this process may use (the machine's RAM, or its
// cgroup's memory.max when that is lower, as under Slurm or a container).
std::uint64_t default_max_memory();

}  // namespace ckhost
