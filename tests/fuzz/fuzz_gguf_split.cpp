// The GGUF reader on a llama-gguf-split set: the input is one shard of a small three-shard set
// (tests/fuzz/split-set, a real set written by the gguf writer), written beside the two other,
// valid shards, and the set is then read as `ckhost verify` reads it: opening any shard opens
// its siblings by name and checks them against each other.
//
// Input: one control byte, then the shard's bytes. Bits 0-1 of the control byte say which shard
// the bytes replace, bits 2-3 which shard is opened (3 counts as 0), so the fuzzer reaches both
// "the given file is bad" and "a sibling is bad".
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "fuzz_support.hpp"
#include "gguf_reader.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::size_t shards = 3;

struct SplitSet {
    std::array<fs::path, shards> paths;                    // in the scratch directory
    std::array<std::vector<std::byte>, shards> originals;  // the valid shards' bytes
};

const SplitSet& split_set() {
    static const SplitSet set = [] {
        SplitSet s;
        for (std::size_t i = 0; i < shards; ++i) {
            const std::string name = "tiny-0000" + std::to_string(i + 1) + "-of-00003.gguf";
            std::ifstream in(fs::path(CKHOST_FUZZ_SPLIT_SET) / name, std::ios::binary);
            for (auto it = std::istreambuf_iterator<char>(in);
                 it != std::istreambuf_iterator<char>(); ++it)
                s.originals[i].push_back(static_cast<std::byte>(*it));
            s.paths[i] = ckfuzz::scratch_dir() / name;
            ckfuzz::write_file(s.paths[i], s.originals[i]);
        }
        return s;
    }();
    return set;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    split_set();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const SplitSet& set = split_set();
    const std::size_t replaced = (data[0] & 3u) % shards;
    const std::size_t opened = ((data[0] >> 2) & 3u) % shards;
    ckfuzz::write_file(set.paths[replaced], std::as_bytes(std::span(data + 1, size - 1)));
    {
        ck::RecordingContext context;
        ckplugin::gguf::GgufReader reader(context);
        ckfuzz::read_like_verify(reader, set.paths[opened]);
    }
    ckfuzz::write_file(set.paths[replaced], set.originals[replaced]);  // valid again
    return 0;
}
