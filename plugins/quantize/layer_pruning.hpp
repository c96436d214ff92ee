// llama-quantize's --prune-layers: whole layers left out of the output, the layers after them
// renumbered so the numbers stay consecutive (llama.cpp's remap_layer / remap_imatrix).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ck/model.hpp"

namespace ckplugin::quantize {

struct PrunedModel {
    ck::ModelHeader header;             // the kept tensors, renamed; the input's metadata
    std::vector<std::size_t> kept;      // input index of each tensor of `header`
    std::vector<std::string> old_name;  // each kept tensor's input name (its imatrix entry)
    std::uint32_t block_count = 0;      // layers left, for <arch>.block_count
};

// Parses "0,3" or "0 3" (any order, repeats allowed): the sorted distinct layer numbers, or a
// usage error naming the bad item.
std::vector<int> parse_prune_list(const std::string& text);

// Removes the layers in `prune` (sorted, distinct) from `in`: tensors named blk.N.* with N in
// the list are dropped; the other layers are renumbered in llama.cpp's loader order, a layer
// below the first pruned one keeping its number. Tensors without a layer are kept as they are.
PrunedModel prune_layers(const ck::ModelHeader& in, const std::vector<int>& prune);

}  // namespace ckplugin::quantize
