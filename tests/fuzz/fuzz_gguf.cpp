// The GGUF reader on one file: open (every validation of the spec), every metadata value
// rendered, every tensor fetched, verify, as `ckhost verify FILE` runs it. The input is the
// whole file; big-endian files (version bytes swapped) take the reader's other byte order.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ck/context.hpp"
#include "fuzz_support.hpp"
#include "gguf_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ckfuzz::ScratchFile file;
    const auto& path = file.write(std::as_bytes(std::span(data, size)));
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ckfuzz::read_like_verify(reader, path);
    return 0;
}
