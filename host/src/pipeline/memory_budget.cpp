#include "pipeline/memory_budget.hpp"

#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

#include "ck/byte_size.hpp"

namespace ckhost {

namespace {

// The memory.max of this process's cgroup (v2), when it has a number there.
std::optional<std::uint64_t> cgroup_memory_limit() {
    std::ifstream membership("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(membership, line))
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
    if (path.empty()) return std::nullopt;
    std::ifstream limit("/sys/fs/cgroup" + path + "/memory.max");
    std::string value;
    if (!(limit >> value) || value == "max") return std::nullopt;
    return ck::parse_byte_size(value, ck::BareUnit::binary);
}

}  // namespace

std::uint64_t default_max_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    std::uint64_t usable = pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) *
                                                            static_cast<std::uint64_t>(page_size)
                                                      : std::uint64_t{4} << 30;
    if (auto limit = cgroup_memory_limit(); limit && *limit < usable) usable = *limit;
    return usable / 4;
}

}  // namespace ckhost
