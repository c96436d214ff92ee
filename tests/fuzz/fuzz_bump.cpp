// The bump reader, v3 and v4 alike (it dispatches on the magic): open (header, dtype table,
// head geometry, slot or entry layout against the file size), every tensor fetched, verify
// (the SHA-256 and the config or manifest checks), as `ckhost verify weights.bump` runs it.
// The reader also reads files beside weights.bump: config.json (v3) and weights_manifest.json
// (v4). An input is split at the marker lines "#config.json\n" and "#weights_manifest.json\n":
// the bytes before the first marker are weights.bump, the bytes after each marker (up to the
// next) that file; a file without its marker is absent (v3 then infers the two dimensions it
// lacks from the file size, v4's verify refuses).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "bump_versions.hpp"
#include "ck/context.hpp"
#include "fuzz_support.hpp"

namespace {

struct Beside {
    std::string_view marker;
    std::filesystem::path path;
    const std::uint8_t* at = nullptr;  // where its marker starts, or nullptr
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path weights = ckfuzz::scratch_dir() / "weights.bump";
    std::array<Beside, 2> beside = {
        Beside{"#config.json\n", ckfuzz::scratch_dir() / "config.json"},
        Beside{"#weights_manifest.json\n", ckfuzz::scratch_dir() / "weights_manifest.json"}};

    const std::uint8_t* end = data + size;
    const std::uint8_t* weights_end = end;
    for (Beside& b : beside) {
        const auto* at = std::search(data, end, b.marker.begin(), b.marker.end(),
                                     [](std::uint8_t x, char y) { return x == std::uint8_t(y); });
        if (at != end) b.at = at;
        if (b.at) weights_end = std::min(weights_end, b.at);
    }
    const auto input = std::as_bytes(std::span(data, size));
    ckfuzz::write_file(weights, input.first(static_cast<std::size_t>(weights_end - data)));
    for (const Beside& b : beside) {
        std::error_code ec;
        if (!b.at) {
            std::filesystem::remove(b.path, ec);
            continue;
        }
        const std::uint8_t* from = b.at + b.marker.size();
        const std::uint8_t* to = end;
        for (const Beside& other : beside)
            if (other.at && other.at >= from) to = std::min(to, other.at);
        ckfuzz::write_file(b.path, input.subspan(static_cast<std::size_t>(from - data),
                                                 static_cast<std::size_t>(to - from)));
    }

    ck::RecordingContext context;
    ckplugin::bump::BumpReader reader(context);
    ckfuzz::read_like_verify(reader, weights);
    return 0;
}
