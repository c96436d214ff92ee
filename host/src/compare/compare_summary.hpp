// What `ckhost compare` found, per pair of files: the tensors' results added up per type, per
// layer, per tensor kind and for the whole model, and the problems counted. The text table, the
// JSON document and the HTML report all read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/compare_engine.hpp"
#include "compare/compare_metrics.hpp"

namespace ckhost::compare {

// Tensors added up: their sums (so a group's SNR is its energy over its error, as one long
// tensor's would be) and their sizes on both sides (bits per weight as stored).
struct Group {
    std::string name;
    std::uint64_t tensors = 0;
    std::uint64_t weighted_tensors = 0;
    std::uint64_t elements = 0;
    std::uint64_t stored_bytes_a = 0;
    std::uint64_t stored_bytes_b = 0;
    ErrorSums sums;

    void add(const TensorResult& r);
    double bits_per_weight_a() const;
    double bits_per_weight_b() const;
};

struct Summary {
    std::vector<Group> by_type;   // B's type, by name
    std::vector<Group> by_layer;  // blk.0, blk.1, ... in number order
    std::vector<Group> by_kind;   // a layer's tensor kind ("attn_q.weight"), or a tensor outside
                                  // the layers by its name, in A's order
    Group model;
    std::map<Status, std::uint64_t> counts;  // every status, zero or not
    std::uint64_t identical = 0;             // compared tensors whose values are equal
};
Summary summarize(const PairResult& pair);

// The layer of "blk.N.REST" (N), and its kind (REST); a tensor outside the layers has no layer
// and is its own kind.
std::optional<std::uint64_t> layer_of(std::string_view name);
std::string kind_of(std::string_view name);

// Everything one run compared: A against each B, in the order given.
struct Report {
    std::string file_a;
    std::string format_a;
    std::string imatrix;  // --imatrix FILE, or empty
    std::vector<PairResult> pairs;
    std::vector<Summary> summaries;     // one per pair
    std::vector<std::string> warnings;  // the readers' (stderr, and --json's "warnings")
};

// A's tensors that `pair` (or, without one, any B) compared or found non-finite values in, as
// indices in PairResult::tensors (the first entries of every pair are A's tensors, in A's
// order), worst first: by SNR, the lowest first (tensors with NaN or infinite values before
// every other, identical ones last), with several B files by the worst of them; ties by name.
std::vector<std::size_t> worst_first(const Report& report, std::optional<std::size_t> pair);

}  // namespace ckhost::compare
