// How llama.cpp looks at a model's tensor directory: ggml's count of dimensions and the order
// in which llama.cpp's loader (and llama-quantize) visits tensors.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ck/model.hpp"

namespace ck::llama {

// ggml_n_dims: trailing dimensions of size 1 do not count (a [256, 1] tensor is 1-D).
int n_dims(const TensorInfo& tensor);

// sscanf(name, "blk.%d.", &layer): the number after "blk.", if there is one.
std::optional<int> layer_of(std::string_view name);

// llama_model_loader's weight_name_comparer: tensors outside the layers first, then layer by
// layer, by name within each. llama-quantize visits (and writes) tensors in this order, and
// the loader's guess of the file type breaks ties by it.
bool loader_order_less(std::string_view a, std::string_view b);
// The indices of `header`'s tensors in that order (a stable sort: equal names keep theirs).
std::vector<std::size_t> loader_order(const ModelHeader& header);

// Whether, and why, llama.cpp's convert_hf_to_gguf.py writes a tensor as F32 whatever its
// outtype (prepare_tensors): every 1-D tensor (norms, biases), and by name the norms and the
// expert routers (`ffn_gate_inp`, `ffn_gate_inp_shexp`: the router's logits pick the experts).
// The hf reader and dequant follow it (quantize has llama-quantize's own, longer list).
enum class ConverterF32 { no, one_dimensional, by_name };
// `name` is the tensor's GGUF name, `dimensions` its count of ne entries.
ConverterF32 converter_keeps_f32(std::string_view name, std::size_t dimensions);

}  // namespace ck::llama
