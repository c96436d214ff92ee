#include "ck/llama/tensors.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace ck::llama {

int n_dims(const TensorInfo& tensor) {
    for (std::size_t i = tensor.ne.size(); i-- > 1;) {
        if (tensor.ne[i] > 1) return static_cast<int>(i) + 1;
    }
    return 1;
}

std::optional<int> layer_of(std::string_view name) {
    constexpr std::string_view prefix = "blk.";
    if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
    std::size_t p = prefix.size();
    // %d skips white space and takes a sign, as sscanf does.
    while (p < name.size() && std::isspace(static_cast<unsigned char>(name[p]))) ++p;
    bool negative = false;
    if (p < name.size() && (name[p] == '-' || name[p] == '+')) negative = name[p++] == '-';
    if (p >= name.size() || !std::isdigit(static_cast<unsigned char>(name[p]))) return std::nullopt;
    long long value = 0;
    for (; p < name.size() && std::isdigit(static_cast<unsigned char>(name[p])); ++p) {
        value = std::min<long long>(value * 10 + (name[p] - '0'), 1LL << 40);
    }
    if (negative) value = -value;
    return static_cast<int>(std::clamp<long long>(value, -(1LL << 30), 1LL << 30));
}

bool loader_order_less(std::string_view a, std::string_view b) {
    const int la = layer_of(a).value_or(-1), lb = layer_of(b).value_or(-1);
    if (la != lb) return la < lb;
    return a < b;
}

std::vector<std::size_t> loader_order(const ModelHeader& header) {
    std::vector<std::size_t> order(header.tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return loader_order_less(header.tensors[a].name, header.tensors[b].name);
    });
    return order;
}

ConverterF32 converter_keeps_f32(std::string_view name, std::size_t dimensions) {
    if (dimensions <= 1) return ConverterF32::one_dimensional;
    for (std::string_view suffix :
         {"_norm.weight", ".ffn_gate_inp.weight", ".ffn_gate_inp_shexp.weight"})
        if (name.ends_with(suffix)) return ConverterF32::by_name;
    return ConverterF32::no;
}

}  // namespace ck::llama
