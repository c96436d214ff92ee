// GGUF-lite's metadata text on its own (`key=<type>:<json>` lines, and the small JSON reader
// under them), without the file around it, so the fuzzer spends its time on the text. What
// parses must also survive the writer's side: encoding the parsed metadata and parsing that
// again gives the same values (the round trip GGUF -> GGUF-lite -> GGUF relies on it); a
// difference aborts, as a crash would.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "metadata_text.hpp"

namespace {

[[noreturn]] void round_trip_failure(const std::string& what) {
    std::fprintf(stderr, "gguflite metadata round trip: %s\n", what.c_str());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ckplugin::gguflite;
    ck::Metadata parsed;
    try {
        parsed = parse_metadata(ckfuzz::as_text(data, size), 64, "fuzz.glft");
    } catch (const ck::Error&) {
        return 0;  // refused text: the expected outcome for most inputs
    }
    std::vector<std::string> notes;
    std::string encoded;
    try {
        encoded = encode_metadata(parsed, notes);
    } catch (const ck::Error& e) {
        round_trip_failure("the writer refuses what the reader accepted: " + e.message());
    }
    ck::Metadata again;
    try {
        again = parse_metadata(encoded, 64, "fuzz.glft");
    } catch (const ck::Error& e) {
        round_trip_failure("the reader refuses what the writer wrote: " + e.message());
    }
    if (again.size() != parsed.size()) round_trip_failure("a different number of keys");
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        const auto& a = parsed.entries()[i];
        const auto& b = again.entries()[i];
        if (a.first != b.first)
            round_trip_failure("key '" + a.first + "' became '" + b.first + "'");
        if (!same_after_round_trip(a.second, b.second))
            round_trip_failure("the value of key '" + a.first + "' changed");
    }
    return 0;
}
