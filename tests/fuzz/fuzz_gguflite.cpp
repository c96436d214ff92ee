// The GGUF-lite reader: open (every rule of the spec, the metadata text included), every
// tensor fetched (Q8/Q4 dequantized to F32), verify (the re-quantization round trip), as
// `ckhost verify model.glft` runs it. The input is the whole file.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gguflite_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return ckfuzz::read_whole_file<ckplugin::gguflite::GgufLiteReader>(data, size);
}
