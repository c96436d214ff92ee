#include "dtype_codes.hpp"

#include <array>

#include "ck/ggml_types.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

// C-Kernel-Engine's dtype codes (the array index): the name bump.md gives each, the ggml type
// with the same bytes (none for INT8/INT4, the runtime's own layouts), and whether the runtime
// accepts the code for a weight.
struct DtypeRow {
    std::string_view name;
    std::optional<GgmlType> ggml;
    bool weight;
};
constexpr std::array<DtypeRow, 10> dtypes = {{{"FP32", GgmlType::f32, true},
                                              {"BF16", GgmlType::bf16, false},
                                              {"FP16", GgmlType::f16, false},
                                              {"INT8", std::nullopt, false},
                                              {"INT4", std::nullopt, false},
                                              {"Q4_0", GgmlType::q4_0, false},
                                              {"Q4_K", GgmlType::q4_k, true},
                                              {"Q6_K", GgmlType::q6_k, true},
                                              {"Q8_0", GgmlType::q8_0, false},
                                              {"Q8_K", GgmlType::q8_k, false}}};

}  // namespace

std::string_view dtype_name(std::uint8_t code) noexcept {
    return code < dtypes.size() ? dtypes[code].name : std::string_view("unknown");
}

std::optional<std::uint32_t> ggml_type_of(std::uint8_t code) noexcept {
    if (code >= dtypes.size() || !dtypes[code].ggml) return std::nullopt;
    return static_cast<std::uint32_t>(*dtypes[code].ggml);
}

std::optional<std::uint8_t> weight_dtype_of(std::uint32_t ggml_type) noexcept {
    for (std::size_t code = 0; code < dtypes.size(); ++code)
        if (dtypes[code].weight && dtypes[code].ggml &&
            static_cast<std::uint32_t>(*dtypes[code].ggml) == ggml_type)
            return static_cast<std::uint8_t>(code);
    return std::nullopt;
}

}  // namespace ckplugin::bump
