// The hf reader's SentencePiece parser (tokenizer.model, a protobuf): the input is the whole
// file. Every length and varint is bounded by the bytes that remain of its message; ck::Error
// is the expected outcome for a bad file.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "sentencepiece.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ckfuzz::ScratchFile file;
    const auto& path = file.write(std::as_bytes(std::span(data, size)));
    try {
        const auto pieces = ckplugin::hf::read_sentencepiece_model(path);
        std::size_t bytes = 0;
        for (const auto& piece : pieces) bytes += piece.text.size();
        (void)bytes;
    } catch (const ck::Error&) {
    }
    return 0;
}
