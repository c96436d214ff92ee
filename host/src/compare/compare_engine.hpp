// The comparison itself: the inputs opened by whatever reader recognises each, tensors matched
// by name, both sides dequantized exactly to F32 in row blocks and added up (compare_metrics.hpp)
// on the SDK's thread pool.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_metrics.hpp"
#include "inspect/inspect.hpp"
#include "registry/plugin_registry.hpp"

namespace ckplugin::quantize {
class ImportanceMatrix;
}

namespace ckhost::compare {

// An input opened for reading, and whether its reader may be called from several threads.
struct Input {
    std::filesystem::path path;
    OpenedFile opened;
    bool concurrent = false;
    std::mutex calls;  // held around each call into a reader that is not concurrent
};
std::unique_ptr<Input> open_input(PluginRegistry& registry, const std::filesystem::path& path,
                                  ck::Context& context);

// What one side holds of a tensor.
struct Side {
    std::uint32_t type = 0;        // as the reader hands it out
    std::string type_name;         // as the file stores it (GGUF-lite: "Q4_per_group_64")
    std::vector<std::int64_t> ne;  // ggml's order, innermost first
    std::uint64_t elements = 0;
    std::uint64_t stored_bytes = 0;  // what the file holds for it

    double bits_per_weight() const;
};

enum class Status { compared, non_finite, only_in_a, only_in_b, shape_mismatch, not_comparable };
const char* status_name(Status status);

struct TensorResult {
    std::string name;
    Status status = Status::compared;
    std::optional<Side> a;
    std::optional<Side> b;
    ErrorSums sums;
    NonFinite non_finite;
    bool weighted = false;  // --imatrix weighted its error
    std::string note;       // why it was not compared, or not weighted
};

// A against one B: A's tensors in A's order, then those only B has, in B's order.
struct PairResult {
    std::string file;    // B as given
    std::string format;  // B's reader
    std::vector<TensorResult> tensors;
};

// What the work may use: the threads' blocks are about `block_elements` values a side.
struct EngineSettings {
    const ckplugin::quantize::ImportanceMatrix* imatrix = nullptr;
    std::uint64_t block_elements = std::uint64_t{1} << 20;
};

PairResult compare_inputs(Input& a, Input& b, const EngineSettings& settings);

}  // namespace ckhost::compare
