#include "npy_format.hpp"

#include <stdexcept>

namespace npy {

std::string header(std::string_view descr, std::span<const std::uint64_t> shape) {
    std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) dict += ", ";
        dict += std::to_string(shape[i]);
    }
    if (shape.size() == 1) dict += ",";  // a one-element Python tuple needs its comma
    dict += "), }";

    constexpr std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
    constexpr std::size_t alignment = 64;
    std::size_t total = preamble + dict.size() + 1;  // + the newline
    total = (total + alignment - 1) / alignment * alignment;
    const std::size_t header_len = total - preamble;
    if (header_len > 0xffff) throw std::length_error("npy header longer than version 1.0 allows");
    dict.append(header_len - dict.size() - 1, ' ');
    dict += '\n';

    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header_len & 0xff);
    out += char(header_len >> 8);
    return out + dict;
}

std::string file_name(std::string_view tensor_name) {
    std::string out;
    for (char c : tensor_name) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out += safe ? c : '_';
    }
    // "." and ".." alone would name directories; a leading dot would hide the file.
    if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
    return out + ".npy";
}

}  // namespace npy
