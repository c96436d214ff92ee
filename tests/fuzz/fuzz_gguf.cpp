// The GGUF reader on one file: open (every validation of the spec), every metadata value
// rendered, every tensor fetched, verify, as `ckhost verify FILE` runs it. The input is the
// whole file; big-endian files (version bytes swapped) take the reader's other byte order.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gguf_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return ckfuzz::read_whole_file<ckplugin::gguf::GgufReader>(data, size);
}
