// The way back to Hugging Face, tensor side: which Hugging Face tensors each GGUF tensor
// becomes and what is done to its bytes on the way. The inverse of tensor_plan.cpp, read from
// the same Architecture tables (names, permute_qk, norm_plus_one, the expert layout), and the
// float conversions it needs (the kernels' dequantization and rounding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "architectures.hpp"
#include "ck/model.hpp"
#include "export_config.hpp"

namespace ckplugin::hf {

// One Hugging Face tensor written from a GGUF tensor: a run of its rows.
struct ExportedTensor {
    std::string name;                 // Hugging Face's
    std::vector<std::int64_t> shape;  // torch order (GGUF ne reversed)
    std::uint64_t first_row = 0;      // of the GGUF tensor
    std::uint64_t rows = 0;
};

// What the writer does with one GGUF tensor.
struct TensorExport {
    enum class Action {
        convert,         // to the dtype, rows as they are (fused tensors kept fused)
        unpermute_rows,  // q/k rows back into Hugging Face's rotary layout, then converted
        unshift_norm,    // Gemma's norm: x - 1 in F32, then to the dtype
        split_experts,   // one tensor per expert: expert e is the e-th run of rows
        generated,       // a config.json value the converter turned into a tensor: read only
    };
    std::size_t source = 0;  // index in the GGUF header
    Action action = Action::convert;
    std::uint64_t head_rows = 0;        // unpermute_rows: the rows of one head
    std::vector<ExportedTensor> parts;  // in write order; empty for generated
};

// Every GGUF tensor of `header`, in header order. Throws ck::tensor_error naming the first tensor
// the target cannot represent (no Hugging Face name, a type with no float value, a shape the
// data change cannot take), ck::key_error for a hyperparameter it needs and cannot read.
std::vector<TensorExport> plan_export(const ck::ModelHeader& header,
                                      const Architecture& architecture);

// Where the values of generated tensor `gguf_name` go in `values`; nullptr for another name.
std::vector<float>* generated_values_of(GeneratedValues& values, std::string_view gguf_name);

// `count` values of ggml type `type` at `in` (whole blocks) as `dtype` (F32, F16 or BF16) at
// `out`, with the kernels' dequantization and rounding (round to nearest even, as torch);
// `unshift` subtracts 1 in F32 before rounding (Gemma's norms).
void convert_values(const std::byte* in, std::uint32_t type, std::size_t count, std::byte* out,
                    std::uint32_t dtype, bool unshift);

// Rows [0, rows) of `block` (whole rows of `info`) converted to `dtype` into `out`, spread over
// the thread pool; the block's input pages are released as they are read.
void convert_rows(const ck::TensorView& block, const ck::TensorInfo& info, std::uint64_t rows,
                  std::uint32_t dtype, bool unshift, std::span<std::byte> out);

// The Hugging Face row order of whole heads: row h*d + j*(d/2) + i of the output is row
// h*d + 2*i + j of the GGUF (the reader's permutation, inverted). Calls put(row) for each
// output row of `rows` rows of `row_bytes` bytes, `head_rows` rows a head.
template <class Put>
void for_each_unpermuted_row(std::span<const std::byte> rows_in, std::uint64_t rows,
                             std::uint64_t row_bytes, std::uint64_t head_rows, Put&& put) {
    const std::uint64_t half = head_rows / 2;
    for (std::uint64_t head = 0; head < rows; head += head_rows)
        for (std::uint64_t j = 0; j < 2; ++j)
            for (std::uint64_t i = 0; i < half; ++i)
                put(rows_in.subspan((head + 2 * i + j) * row_bytes, row_bytes));
}

}  // namespace ckplugin::hf
