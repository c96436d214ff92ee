#include "pipeline/memory_budget.hpp"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>

namespace ckhost {

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
    std::size_t used = 0;
    double number = 0;
    try {
        number = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;  // no "-1", " 1"
    std::string unit = text.substr(used);
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (unit.ends_with("IB"))
        unit.resize(unit.size() - 2);
    else if (unit.size() > 1 && unit.ends_with("B"))
        unit.pop_back();
    else if (unit == "B")
        unit.clear();
    double scale = 1;
    if (unit == "K")
        scale = 1024.0;
    else if (unit == "M")
        scale = 1024.0 * 1024;
    else if (unit == "G")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == "T")
        scale = 1024.0 * 1024 * 1024 * 1024;
    else if (!unit.empty())
        return std::nullopt;
    const double bytes = std::floor(number * scale);
    if (!std::isfinite(bytes) || bytes < 1 ||
        bytes >= static_cast<double>(std::numeric_limits<std::uint64_t>::max()))
        return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
}

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
    return parse_byte_size(value);
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
