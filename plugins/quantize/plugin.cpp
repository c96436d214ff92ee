// The quantize plugin: transform `quantize[to=TYPE | mix=NAME, ...]` (quantize_transform.hpp),
// its options and its descriptor.
#include "ck/plugin.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"
#include "quantize_transform.hpp"

namespace {

using ck::GgmlType;
using ckplugin::quantize::Quantize;
using ckplugin::quantize::target_choices;

const ck_option_descriptor options[] = {
    {"to", CK_STAGE_TRANSFORM, "q8_0", target_choices,
     "one type for every selected weight (llama-quantize --pure: rows its block does not divide "
     "get llama.cpp's fallback type, F16 for q8_0)"},
    ck::value_option(
        "mix", CK_STAGE_TRANSFORM,
        "llama-quantize's per-tensor choice for a named file type: q4_0 q4_1 q5_0 q5_1 q8_0 q2_k "
        "q2_k_s q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k iq1_s iq1_m iq2_xxs iq2_xs "
        "iq2_s iq2_m iq3_xxs iq3_xs iq3_s iq3_m iq4_nl iq4_xs tq1_0 tq2_0 f16 bf16 f32"),
    ck::value_option("output_type", CK_STAGE_TRANSFORM,
                     "with mix: output.weight's type (--output-tensor-type)"),
    ck::value_option("embd_type", CK_STAGE_TRANSFORM,
                     "with mix: token_embd.weight's type (--token-embedding-type)"),
    ck::switch_option("pure", CK_STAGE_TRANSFORM,
                      "with mix: the mixture's default type for every weight (--pure)"),
    ck::switch_option("leave_output", CK_STAGE_TRANSFORM,
                      "with mix: copy output.weight as it is (--leave-output-tensor)"),
    ck::switch_option(
        "requantize", CK_STAGE_TRANSFORM,
        "dequantize already quantized tensors exactly, then quantize them (--allow-requantize)"),
    ck::switch_option("keep_quantized", CK_STAGE_TRANSFORM,
                      "copy already quantized tensors as they are"),
    {"order", CK_STAGE_TRANSFORM, nullptr, "llama|input|keep_split",
     "tensor order: llama (llama-quantize's: tensors without a layer first, then by layer, by "
     "name within a layer; file type keys last; the default with mix), input (the default "
     "with to) or keep_split (the input's, file type keys last: llama-quantize --keep-split's)"},
    ck::value_option(
        "imatrix", CK_STAGE_TRANSFORM,
        "importance matrix from llama-imatrix (GGUF or legacy .dat): every quantizer "
        "that takes weights uses it, and the IQ1/IQ2/IQ3 mixtures need it (--imatrix)"),
    ck::value_option("include_weights", CK_STAGE_TRANSFORM,
                     "with imatrix: use only entries whose name contains one of these "
                     "space-separated texts (--include-weights)"),
    ck::value_option("exclude_weights", CK_STAGE_TRANSFORM,
                     "with imatrix: drop entries whose name contains one of these space-separated "
                     "texts (--exclude-weights)"),
    ck::value_option("tensor_type", CK_STAGE_TRANSFORM,
                     "with mix: space-separated PATTERN=TYPE overrides, the first regex that "
                     "matches a tensor's name wins (--tensor-type)"),
    ck::value_option("prune_layers", CK_STAGE_TRANSFORM,
                     "leave these layers out (numbers separated by spaces), renumbering the rest "
                     "(--prune-layers)"),
    ck::TensorFilter::only_option(CK_STAGE_TRANSFORM),
    ck::TensorFilter::skip_option(CK_STAGE_TRANSFORM),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"quantize", "2.1.0",
     "quantize to any type llama-quantize makes, with or without an importance matrix, one type "
     "or its named mixtures (Q4_K_M, IQ2_XXS, ...), byte for byte as llama-quantize",
     // `ckhost help quantize`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:quantize[mix=q4_k_m]:gguf model-f16.gguf model-q4_k_m.gguf\n"
     "gguf:quantize[to=q8_0,only=blk.*]:gguf model-f16.gguf model-q8_0.gguf"},
    options,
    {.create_transform = ck::transform_factory<Quantize>,
     .kernel_variant = ck::kernels::best_quantizer_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

// Choose the widening and quantizing kernels when loaded (both follow --isa).
void load() {
    ck::kernels::plugin_dequant_table();
    ck::kernels::best_quantizer(static_cast<std::uint32_t>(GgmlType::q4_k));
}

}  // namespace

CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, load)
