// The three stage interfaces a plugin implements, and their life cycle (docs/plugin-guide.md):
//
//   Reader::open            -> ModelHeader (metadata + tensor directory, no tensor bytes)
//   Transform::plan         -> the header it will produce (pure, descriptors only)
//   Writer::prepare         -> every check, order and layout fixed; nothing written
//   Writer::begin           -> output files created through the host's OutputSink
//   for each tensor in Writer::order():  Reader::tensor -> Transform::apply... -> Writer::write
//     (plugins declaring CK_PLUGIN_FLAG_CONCURRENT get several tensors computed at once, on
//     the pool; Writer::write still receives them one at a time, strictly in order)
//     or, for a large tensor every stage can take in row blocks (row_granule, writes_rows):
//     for each block of rows, in order: tensor_rows -> apply_rows... -> Writer::write_rows
//   Writer::finish          -> headers and checksums patched; the host commits the outputs
//
// Only ck::Error may leave any of these calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <numeric>
#include <vector>

#include "ck/context.hpp"
#include "ck/export.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/output.hpp"

namespace ck {

// Rows [first, first + count) of a tensor. A tensor's rows are its elements in runs of ne[0]
// (the row length): a 2-D weight's rows, a stacked expert tensor's rows of every expert in turn.
// A row holds whole quantization blocks, so a run of rows is a run of bytes in every type.
struct RowRange {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
};

// Large tensors travel in row blocks (docs/design.md, "Row blocks") when every stage of the
// pipeline can take tensor `index` that way: each stage says how many rows a block must be a
// multiple of (its granule), 0 when it needs the tensor whole, which is every stage's default.
// A transform's answer includes its upstream's (`combine_granules`), as apply() includes its
// upstream's bytes.
using UpstreamGranule = std::function<std::uint64_t(std::size_t index)>;

// The smallest row count both granules divide; 0 when either stage needs the tensor whole.
inline std::uint64_t combine_granules(std::uint64_t a, std::uint64_t b) {
    return a == 0 || b == 0 ? 0 : std::lcm(a, b);
}

class CK_SDK_API Reader {
  public:
    virtual ~Reader() = default;
    virtual ModelHeader open(const std::filesystem::path& path) = 0;
    // Bytes of tensor `index` of the header open() returned.
    virtual TensorView tensor(std::size_t index) = 0;
    // Rows a block of tensor `index` must be a multiple of (the last block may be shorter), or
    // 0 when tensor_rows is not offered for it (the default).
    virtual std::uint64_t row_granule(std::size_t /*index*/) const { return 0; }
    // Rows `rows` of tensor `index`, asked only when row_granule(index) is not 0, with
    // rows.first a multiple of it.
    virtual TensorView tensor_rows(std::size_t index, RowRange rows);
    // Integrity checks beyond open() for `ckhost verify` (checksums, ...), called after the
    // host has fetched every tensor once; throws on the first problem.
    virtual void verify() {}
    // After open() threw: what the reader got through before the problem (facts, the metadata
    // keys and tensor infos it read), which `inspect` shows before the error, as gguf-dump
    // does; an empty header when it has nothing to show.
    virtual ModelHeader read_before_failure() const { return {}; }
};

// Fetches tensor `index` of the previous stage's header.
using Upstream = std::function<TensorView(std::size_t index)>;

// Fetches rows of tensor `index` of the previous stage's header.
using UpstreamRows = std::function<TensorView(std::size_t index, RowRange rows)>;

// Indices of tensors of a planned header that one computation produces together.
using TensorGroup = std::vector<std::size_t>;

class CK_SDK_API Transform {
  public:
    virtual ~Transform() = default;
    virtual ModelHeader plan(const ModelHeader& in) = 0;
    // Produces tensor `index` of the planned header, pulling what it needs from upstream.
    virtual TensorView apply(std::size_t index, const Upstream& upstream) = 0;
    // The tensors of plan()'s header that one computation produces together (a repacked
    // weight's codes and its scales), declared instead of keeping one result aside between
    // apply() calls. Asked once, after plan(); a tensor belongs to one group at most. The host
    // then asks for a group's tensors only through apply_group, once per group.
    virtual std::vector<TensorGroup> groups() const { return {}; }
    // Produces every tensor of one of groups()'s groups, in the group's order.
    virtual std::vector<TensorView> apply_group(const TensorGroup& members,
                                                const Upstream& upstream) {
        std::vector<TensorView> views;
        views.reserve(members.size());
        for (std::size_t index : members) views.push_back(apply(index, upstream));
        return views;
    }
    // Rows a block of tensor `index` of plan()'s header must be a multiple of, `upstream`'s
    // granule included (combine_granules), or 0 (the default) when apply_rows is not offered
    // for it. Never asked for a tensor of a group.
    virtual std::uint64_t row_granule(std::size_t /*index*/,
                                      const UpstreamGranule& /*upstream*/) const {
        return 0;
    }
    // Rows `rows` of tensor `index`, asked only when row_granule(index) is not 0; the result
    // must be what the same rows of apply(index) would be.
    virtual TensorView apply_rows(std::size_t index, RowRange rows, const UpstreamRows& upstream);
};

class CK_SDK_API Writer {
  public:
    virtual ~Writer() = default;
    // Checks that `header` can be stored at `destination` (what the user gave as -o) and fixes
    // the layout. Every error of the conversion must surface here or earlier.
    virtual void prepare(const ModelHeader& header, const std::filesystem::path& destination) = 0;
    // Output files this writer will create (for --dry-run and the existence check).
    virtual std::vector<std::filesystem::path> outputs() const = 0;
    // Tensor indices in the order write() wants them; default: header order.
    virtual std::vector<std::size_t> order() const { return {}; }
    // The `ckhost.*` metadata keys (or prefixes ending in '.') whose meaning this writer
    // stores faithfully (ck/conventions/ckhost_keys.hpp). The host refuses, before prepare(),
    // a header holding any other ckhost.* key: writing it without understanding it would give
    // a file that looks valid and is wrong (padded heads read as wider heads, u8 codes as i8).
    virtual std::vector<std::string> understood_keys() const { return {}; }
    virtual void begin(OutputSink& out) = 0;
    virtual void write(std::size_t index, const TensorView& tensor) = 0;
    // Whether write_rows may be called (default: no, every tensor comes whole to write()).
    virtual bool writes_rows() const { return false; }
    // Rows `rows` of tensor `index`. A tensor comes either whole to write() or in row blocks
    // here: its blocks in order, from row 0 to its last row, before the next tensor.
    virtual void write_rows(std::size_t index, RowRange rows, const TensorView& block);
    virtual void finish() = 0;
};

}  // namespace ck
