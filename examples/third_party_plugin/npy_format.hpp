// The NumPy .npy format, version 1.0 (numpy/lib/format.py): a magic string, a little-endian
// header length, a Python dict literal describing dtype and shape, then the raw C-order data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npy {

// The bytes before the data: magic, version, header length and the dict, padded with spaces
// and a final newline so that the data starts on a 64-byte boundary (what numpy writes).
// `descr` is a NumPy type string such as "<f4"; `shape` is in NumPy (row-major) order.
std::string header(std::string_view descr, std::span<const std::uint64_t> shape);

// A file name for a tensor: the tensor name with every character outside [A-Za-z0-9._-]
// replaced by '_', plus ".npy". Distinct tensor names can map to the same file name; the
// writer checks for that.
std::string file_name(std::string_view tensor_name);

}  // namespace npy
