#include "lora_adapters.hpp"

#include <charconv>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/option_list.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::lora {
namespace {

std::string text_key(const ck::ModelHeader& h, const char* key) {
    const ck::Value* v = h.metadata.find(key);
    return v && v->type() == ck::ValueType::string ? v->str() : std::string();
}

}  // namespace

LoraAdapter::LoraAdapter(std::string path, float user_scale, const std::string& architecture,
                         ck::Context& context)
    : path_(std::move(path)),
      user_scale_(user_scale),
      reader_(std::make_unique<ckplugin::gguf::GgufReader>(context)),
      header_(reader_->open(path_)) {
    // llama-export-lora's check_metadata_lora, in its order.
    const auto require = [this](const char* key, const std::string& is, const std::string& want,
                                const std::string& why) {
        if (is != want)
            throw ck::key_error("is '" + is + "', not '" + want + "': " + why, key, path_);
    };
    require("general.type", text_key(header_, "general.type"), "adapter",
            "the file is no adapter (a model is merged into with -m, or as the pipeline's input)");
    require("adapter.type", text_key(header_, "adapter.type"), "lora",
            "only LoRA adapters are merged");
    require("general.architecture", text_key(header_, "general.architecture"), architecture,
            "the adapter was made for another architecture than the base model's");
    if (const ck::Value* alpha = header_.metadata.find("adapter.lora.alpha")) {
        const std::optional<float> value = alpha->as_f32();
        if (!value) throw ck::key_error("is not an f32", "adapter.lora.alpha", path_);
        alpha_ = *value;
    }
    pair_factors();
}

void LoraAdapter::pair_factors() {
    for (std::size_t i = 0; i < header_.tensors.size(); ++i) {
        const std::string& name = header_.tensors[i].name;
        const bool a = name.ends_with(".lora_a"), b = name.ends_with(".lora_b");
        // llama.cpp refuses such an adapter when it loads it ("unexpected suffix"): mergekit's
        // norms, which convert_lora_to_gguf.py passes through, are among them.
        if (!a && !b)
            throw ck::tensor_error(
                "is no LoRA factor (.lora_a or .lora_b): llama.cpp cannot "
                "load an adapter holding it",
                name, path_);
        const ck::TypeInfo* type = ck::find_type(header_.tensors[i].type);
        if (!type || type->quantized)
            throw ck::tensor_error(
                "is " + std::string(ck::type_name(header_.tensors[i].type)) +
                    ": quantized LoRA adapters are not merged (as in llama-export-lora); "
                    "convert the adapter with --outtype f32 or f16",
                name, path_);
        Pair& pair = pairs_[name.substr(0, name.size() - 7)];
        (a ? pair.a : pair.b) = i + 1;  // 0: not seen yet
    }
    for (auto& [base, pair] : pairs_) {
        if (pair.a == 0 || pair.b == 0)
            throw ck::tensor_error(std::string("has no ") + (pair.a == 0 ? "lora_a" : "lora_b") +
                                       " partner: a LoRA pair needs both factors",
                                   base + (pair.a == 0 ? ".lora_b" : ".lora_a"), path_);
        --pair.a;
        --pair.b;
    }
}

float LoraAdapter::scale(std::int64_t rank) const {
    // In float32 and in this order, as llama-export-lora writes it.
    return alpha_ != 0 ? user_scale_ * alpha_ / static_cast<float>(rank) : user_scale_;
}

std::vector<float> scales_for(const std::string& value, std::size_t adapters) {
    if (value.empty()) return std::vector<float>(adapters, 1.0f);
    std::vector<float> scales;
    for (const std::string& item : ck::support::option_list(value)) {
        float s = 0;
        const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), s);
        if (error != std::errc() || end != item.data() + item.size() || item.empty())
            throw ck::usage_error("lora: scale '" + item + "' is not a number");
        scales.push_back(s);
    }
    if (scales.size() != adapters)
        throw ck::usage_error("lora: " + std::to_string(scales.size()) + " scale(s) for " +
                              std::to_string(adapters) +
                              " adapter(s): give one each, as {1,0.5} for adapter={A,B}");
    return scales;
}

}  // namespace ckplugin::lora
