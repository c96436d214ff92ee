// The bump reader: open (header, dtype table, head geometry, slot layout against the file
// size), every slot fetched, verify (the SHA-256 and the config checks), as `ckhost verify
// weights.bump` runs it. The reader also reads config.json beside the file: an input holding
// the marker line "#config.json\n" is split there, the bytes before it written as weights.bump
// and the bytes after it as config.json; without the marker there is no config.json and the
// reader infers the two dimensions it lacks from the file size.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "bump_reader.hpp"
#include "ck/context.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path weights = ckfuzz::scratch_dir() / "weights.bump";
    static const std::filesystem::path config = ckfuzz::scratch_dir() / "config.json";
    constexpr std::string_view marker = "#config.json\n";

    const auto input = std::as_bytes(std::span(data, size));
    const auto at = std::search(data, data + size, marker.begin(), marker.end(),
                                [](std::uint8_t a, char b) { return a == std::uint8_t(b); });
    const std::size_t weights_size = static_cast<std::size_t>(at - data);
    ckfuzz::write_file(weights, input.first(weights_size));
    std::error_code ec;
    if (weights_size < size)
        ckfuzz::write_file(config, input.subspan(weights_size + marker.size()));
    else
        std::filesystem::remove(config, ec);

    ck::RecordingContext context;
    ckplugin::bump::BumpReader reader(context);
    ckfuzz::read_like_verify(reader, weights);
    return 0;
}
