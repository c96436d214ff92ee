// The quantize plugin's importance matrix loader (GGUF imatrix or legacy .dat, whichever the
// bytes look like), normalization and non-finite check included. ck::Error is the expected
// outcome for a bad file; any other exception escapes to the fuzzer as a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "importance_matrix.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file = ckfuzz::scratch_dir() / "input.imatrix";
    const auto bytes = std::as_bytes(std::span(data, size));
    ckfuzz::write_file(file, {bytes.begin(), bytes.end()});
    try {
        ckplugin::quantize::ImportanceMatrix m = ckplugin::quantize::ImportanceMatrix::load(file);
        m.filter({"blk.0"}, {});
    } catch (const ck::Error&) {
    }
    return 0;
}
