// Importance matrices as llama-imatrix writes them and llama-quantize reads them
// (docs/formats/imatrix.md): the GGUF file (`general.type = imatrix`, `<name>.in_sum2` and
// `<name>.counts` per weight) and the legacy `.dat`. Loaded and normalized exactly as
// llama-quantize does, into one weight per column (per expert for a 3-D tensor), which the
// quantizers multiply into their error (and `ckhost compare --imatrix` into its weighted error).
// Shared code (sdk/imatrix, the object library imatrix_format): it keeps the namespace it had as
// part of the quantize plugin, as sdk/gguf kept ckplugin::gguf.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ckplugin::quantize {

class ImportanceMatrix {
  public:
    // One weight per column of the tensor, expert after expert for a 3-D one (expert j's at
    // j * ne0): llama-quantize takes an entry whose size is ne0 * experts.
    using Entry = std::vector<float>;

    // Reads `path` as GGUF when it starts with the GGUF magic, else as `.dat`. Throws ck::Error
    // naming the file (and the entry or key) for every reason llama-quantize refuses one:
    // no entries, missing `imatrix.*` metadata, an in_sum2 without counts, a non-F32 entry,
    // a truncated `.dat`, a non-finite weight.
    static ImportanceMatrix load(const std::filesystem::path& path);
    // Parses a `.dat` already in memory (`file` names it in errors): the fuzz target's way in.
    static ImportanceMatrix parse_dat(std::span<const std::byte> bytes, const std::string& file);

    // llama-quantize's --exclude-weights then --include-weights: entries whose name contains
    // any `exclude` text are dropped, then (when `include` is not empty) only those containing
    // an `include` text are kept.
    void filter(const std::vector<std::string>& include, const std::vector<std::string>& exclude);

    // The entry for a tensor name, or nullptr.
    const Entry* find(std::string_view name) const;
    std::size_t size() const noexcept { return entries_.size(); }
    const std::map<std::string, Entry, std::less<>>& entries() const noexcept { return entries_; }

    // What llama-quantize records in the output (`quantize.imatrix.*`).
    const std::string& dataset() const noexcept { return dataset_; }  // first dataset, or empty
    // imatrix.chunk_count, or the `.dat` trailer's count (which may be 0 or negative: then
    // llama-quantize writes no quantize.imatrix.chunks_count).
    std::int64_t chunk_count() const noexcept { return chunk_count_; }
    bool legacy() const noexcept { return legacy_; }

  private:
    static ImportanceMatrix load_gguf(const std::filesystem::path& path);
    void refuse_non_finite(const std::string& file) const;

    std::map<std::string, Entry, std::less<>> entries_;
    std::string dataset_;
    std::int64_t chunk_count_ = 0;
    bool legacy_ = false;
};

}  // namespace ckplugin::quantize
