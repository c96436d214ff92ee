// The safetensors reader, aimed at its JSON header: the input is the header text, optionally
// followed by a NUL byte and the data section's bytes. The harness writes the 8-byte length in
// front, so every mutation of the text stays a well-formed file whose header the reader
// parses (a mutated length would be refused at byte 0 almost every time). Then open (JSON,
// duplicates, dtypes, shapes, offsets, layout, __metadata__ and the GGUF values in it), every
// tensor fetched, verify, as `ckhost verify model.safetensors` runs it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "ck/context.hpp"
#include "ck/safetensors/reader.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ckfuzz::ScratchFile file;
    static std::vector<std::byte> bytes;
    const std::uint8_t* nul = std::find(data, data + size, std::uint8_t{0});
    const std::uint64_t header_size = static_cast<std::uint64_t>(nul - data);
    bytes.resize(8);
    std::memcpy(bytes.data(), &header_size, 8);  // little-endian, as the format says
    const auto input = std::as_bytes(std::span(data, size));
    bytes.insert(bytes.end(), input.begin(),
                 input.begin() + static_cast<std::ptrdiff_t>(header_size));
    if (header_size < size)
        bytes.insert(bytes.end(), input.begin() + static_cast<std::ptrdiff_t>(header_size) + 1,
                     input.end());
    const auto& path = file.write(bytes);
    ck::RecordingContext context;
    ck::safetensors::SafetensorsReader reader(context);
    ckfuzz::read_like_verify(reader, path);
    return 0;
}
