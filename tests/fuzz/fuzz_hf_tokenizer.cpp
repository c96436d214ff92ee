// The hf reader's tokenizer.json and tokenizer_config.json handling (the BPE vocabulary, the
// pre-tokenizer table, the post_processor, the special ids, the chat template): the input is
// tokenizer.json, then, after the first NUL byte when there is one, tokenizer_config.json,
// read by every tokenizer style without a tokenizer.model. ck::Error is the expected outcome
// for a bad file; any other exception escapes to the fuzzer as a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path folder = [] {
        const auto path = ckfuzz::scratch_dir() / "tokenizer";
        std::filesystem::create_directories(path);
        return path;
    }();
    const auto bytes = std::as_bytes(std::span(data, size));
    const auto nul = std::find(bytes.begin(), bytes.end(), std::byte{0});
    ckfuzz::write_file(folder / "tokenizer.json", {bytes.begin(), nul});
    std::filesystem::remove(folder / "tokenizer_config.json");
    if (nul != bytes.end())
        ckfuzz::write_file(folder / "tokenizer_config.json", {nul + 1, bytes.end()});
    const nlohmann::ordered_json config = {{"bos_token_id", 1}, {"eos_token_id", 2}};
    using Style = ckplugin::hf::TokenizerStyle;
    for (const Style style : {Style::common, Style::llama, Style::phi3, Style::gemma3}) {
        for (const std::optional<std::uint32_t> vocab_size :
             {std::optional<std::uint32_t>(), std::optional<std::uint32_t>(64)}) {
            ck::RecordingContext context;
            ck::Metadata metadata;
            try {
                ckplugin::hf::add_tokenizer(folder, vocab_size, config, style, context, metadata);
            } catch (const ck::Error&) {
            }
        }
    }
    return 0;
}
