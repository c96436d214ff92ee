// llama-quantize's named mixtures ("Q4_K_M", "IQ2_XXS", ...) as a pure function: which ggml type
// every tensor of a model gets, following llama.cpp's src/llama-quant.cpp
// (llama_tensor_get_type and the checks around it in llama_model_quantize_impl), with or without
// an importance matrix, with --tensor-type patterns, and which tensors llama-quantize refuses to
// make without an importance matrix. Nothing here quantizes; the quantize plugin asks it for a
// plan.
//
// Checked tensor for tensor against llama-quantize's own outputs in ../shared/testdata/quant/
// and ../shared/testdata/imatrix/ (tests/transforms/test_quantize_mixture.cpp), and file for file
// on today's architectures (experts, fused attn_qkv, tied embeddings, q/k norms:
// tests/transforms/test_quantize_hf_arch.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/model.hpp"

namespace ckplugin::quantize {

// One of llama-quantize's named file types.
struct MixInfo {
    std::string name;            // llama-quantize's spelling: "Q4_K_M", "IQ4_NL", "F16"
    std::uint32_t default_type;  // ggml type id most tensors get (llama_ftype_get_default_type)
    std::uint32_t file_type;     // llama_ftype, stored as general.file_type
};

// llama-quantize's mixtures, case-insensitive: Q4_0 Q4_1 Q5_0 Q5_1 IQ2_XXS IQ2_XS IQ2_S IQ2_M
// IQ1_S IQ1_M TQ1_0 TQ2_0 Q2_K Q2_K_S IQ3_XXS IQ3_S IQ3_M IQ3_XS Q3_K_S Q3_K_M Q3_K_L IQ4_NL
// IQ4_XS Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K Q8_0 F16 BF16 F32, and llama-quantize's aliases Q3_K
// (= Q3_K_M), Q4_K (= Q4_K_M), Q5_K (= Q5_K_M), which return the full name. Some of them need an
// importance matrix for some tensors (requires_imatrix; llama-quantize refuses IQ1_S, IQ1_M,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS, IQ3_XS and Q2_K_S without one on most models): that is
// the caller's to decide. nullopt for anything else (Q1_0, Q2_0, MXFP4_MOE, COPY: not made here).
std::optional<MixInfo> find_mix(std::string_view name);
// The mixture llama-quantize knows by this file type number ("15": Q4_K_M), as its command line
// takes it; nullopt for any other text.
std::optional<MixInfo> find_mix_by_number(std::string_view number);
// The supported names (no aliases), in llama-quantize's listing order (QUANT_OPTIONS).
std::vector<std::string> mix_names();

// --tensor-type PATTERN=TYPE: the tensors whose name PATTERN finds (std::regex_search, ECMAScript)
// get TYPE instead of the mixture's choice. llama-quantize lowers the pattern's case when it reads
// its command line; it is used here as given.
struct TensorTypeOverride {
    std::string pattern;
    std::uint32_t type;  // ggml type id
};

// llama-quantize's options that change the choice of types.
struct MixSettings {
    MixInfo mix;
    std::optional<std::uint32_t> output_type;  // --output-tensor-type (ggml type id)
    std::optional<std::uint32_t> embd_type;    // --token-embedding-type (ggml type id)
    bool pure = false;                         // --pure: every quantized tensor gets default_type
    bool leave_output = false;                 // --leave-output-tensor: output.weight copied
    // --imatrix was given: IQ3_XXS keeps attn_v and ffn_down at IQ3_XXS, IQ4_NL/IQ4_XS keep
    // ffn_down, Q4_0/Q5_0 give the first eighth's ffn_down Q4_1/Q5_1.
    bool has_imatrix = false;
    // --tensor-type, in the order given: the first pattern that finds the name wins. Only for
    // quantized mixtures, after --output-tensor-type and --token-embedding-type.
    std::vector<TensorTypeOverride> tensor_types;
    // Choose in the input's tensor order, as llama-quantize --keep-split iterates (the attn_v
    // and ffn_down choices count the tensors met so far); otherwise in llama.cpp's loader order.
    bool input_order = false;
};

struct TensorChoice {
    std::uint32_t type;  // ggml type id the tensor gets (its input type when it is not quantized)
    bool quantized;      // false: copied as it is (not quantizable, or already of that type)
    std::string rule;    // why, short and human
    // requires_imatrix(name, type, file type) for a tensor llama-quantize may quantize (also when
    // it already has that type: llama-quantize refuses before it looks); false for the copied.
    bool requires_imatrix = false;
};

struct MixPlan {
    std::vector<TensorChoice> tensors;  // indices match header.tensors
    std::uint32_t file_type;            // general.file_type of the result
};

// llama.cpp's tensor_allows_quantization: why llama-quantize copies this tensor as it is (a 1-D
// tensor, a name not ending in "weight", a norm, an expert router, ...), or nullopt when it may
// be quantized. convert_hf_to_gguf.py keeps the same tensors in F32 for its quantized outputs.
std::optional<std::string> not_quantizable(const ck::TensorInfo& t);

// llama.cpp's tensor_type_fallback: the type a row of `row_length` elements gets instead of
// `type` when `type`'s block does not divide it. A 256-element type becomes its 32-element
// replacement (Q4_K: Q5_0, Q6_K: Q8_0, ...); a 32-element type (Q8_0, Q4_0, IQ4_NL, ...), or a
// replacement that does not divide the row either, becomes F16, which takes any length. `type`
// itself when its block divides the row; nullopt for a type llama.cpp lists no fallback for.
// convert_hf_to_gguf.py writes F16 in the same case (its q8_0 output).
std::optional<std::uint32_t> fallback_type(std::uint32_t type, std::int64_t row_length);
// fallback_type for tensor `t` of the model read from `source`, refused (ck::Error naming the
// tensor) when llama.cpp lists no fallback for `type`.
std::uint32_t fallback_type_or_refuse(const ck::TensorInfo& t, std::uint32_t type,
                                      const std::string& source);
// "row length 80 is not a multiple of 256 (Q4_K) nor of 32 (Q5_0) -> F16": why `to` replaced
// `type` (to = fallback_type(type, row_length)).
std::string fallback_reason(std::uint32_t type, std::int64_t row_length, std::uint32_t to);

// llama.cpp's tensor_requires_imatrix: whether llama-quantize refuses to make tensor
// `tensor_name` of ggml type `type` in a file of type `file_type` (a llama_ftype) without an
// importance matrix: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS everywhere, Q2_K in a
// Q2_K_S file; never token_embd.weight, per_layer_token_embd.weight or output.weight (read by row
// lookup, or not calibrated by llama-imatrix by default).
bool requires_imatrix(std::string_view tensor_name, std::uint32_t type, std::uint32_t file_type);

// The type of every tensor of `header` under `settings`. Model facts come from the metadata:
// general.architecture, <arch>.block_count, <arch>.attention.head_count(_kv), <arch>.expert_count.
// Throws ck::Error naming the key or tensor when it cannot decide (a missing block count, a
// row length no fallback type divides, a bad override type, ...); ck::usage_error naming the
// pattern for a --tensor-type pattern that is no regular expression or whose type llama-quantize
// cannot store.
MixPlan plan_mixture(const ck::ModelHeader& header, const MixSettings& settings);

}  // namespace ckplugin::quantize
