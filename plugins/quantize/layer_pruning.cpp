// --prune-layers as llama_model_quantize_impl applies it: the weights are visited in the
// loader's order (ck::llama::loader_order_less), and each layer number met for the first time
// is given its new number then.
#include "layer_pruning.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>

#include "ck/error.hpp"
#include "ck/llama/tensors.hpp"

namespace ckplugin::quantize {
namespace {

// The N of a name containing "blk.N.", and where its digits are.
struct LayerNumber {
    int layer;
    std::size_t at, length;
};

std::optional<LayerNumber> layer_number(const std::string& name) {
    for (std::size_t at = name.find("blk."); at != std::string::npos;
         at = name.find("blk.", at + 1)) {
        const std::size_t digits = at + 4;
        std::size_t end = digits;
        while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
        if (end == digits || end >= name.size() || name[end] != '.') continue;
        int layer = 0;
        if (std::from_chars(name.data() + digits, name.data() + end, layer).ec != std::errc())
            continue;
        return LayerNumber{layer, digits, end - digits};
    }
    return std::nullopt;
}

}  // namespace

std::vector<int> parse_prune_list(const std::string& text) {
    std::vector<std::string> items;
    boost::algorithm::split(items, text, boost::algorithm::is_any_of(", "),
                            boost::algorithm::token_compress_on);
    std::vector<int> layers;
    for (const std::string& item : items) {
        if (item.empty()) continue;
        int layer = -1;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), layer);
        if (ec != std::errc() || end != item.data() + item.size() || layer < 0)
            throw ck::usage_error("quantize: prune_layers: '" + item +
                                  "' is not a layer number (0, 1, 2, ...)");
        layers.push_back(layer);
    }
    if (layers.empty()) throw ck::usage_error("quantize: prune_layers: no layer numbers given");
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    return layers;
}

PrunedModel prune_layers(const ck::ModelHeader& in, const std::vector<int>& prune) {
    const std::vector<std::size_t> order = ck::llama::loader_order(in);
    std::map<int, std::optional<int>> renumbered;  // nullopt: pruned
    int next = 0;
    std::vector<std::optional<std::string>> new_name(in.tensors.size());
    for (const std::size_t i : order) {
        const std::string& name = in.tensors[i].name;
        const std::optional<LayerNumber> n = layer_number(name);
        if (!n) {
            new_name[i] = name;
            continue;
        }
        if (!renumbered.contains(n->layer)) {
            if (std::binary_search(prune.begin(), prune.end(), n->layer))
                renumbered[n->layer] = std::nullopt;
            else if (n->layer < prune.front())
                renumbered[n->layer] = n->layer, next = n->layer + 1;
            else
                renumbered[n->layer] = next++;
        }
        if (const std::optional<int> to = renumbered[n->layer])
            new_name[i] = std::string(name).replace(n->at, n->length, std::to_string(*to));
    }
    PrunedModel out{in, {}, {}, static_cast<std::uint32_t>(next)};
    out.header.tensors.clear();
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        if (!new_name[i]) continue;
        out.header.tensors.push_back(in.tensors[i]);
        out.header.tensors.back().name = *new_name[i];
        out.kept.push_back(i);
        out.old_name.push_back(in.tensors[i].name);
    }
    return out;
}

}  // namespace ckplugin::quantize
