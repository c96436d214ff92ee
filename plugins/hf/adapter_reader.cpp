#include "adapter_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/support/little_endian.hpp"
#include "hf_reader.hpp"
#include "model_name.hpp"
#include "special_vocab.hpp"
#include "tensor_plan.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

constexpr const char* adapter_config_file = "adapter_config.json";
constexpr const char* adapter_weights_file = "adapter_model.safetensors";

fs::path folder_of(const fs::path& path) {
    if (fs::is_directory(path)) return path;
    return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

// The base model's config.json: base= (a folder or its config.json), else the adapter's
// base_model_name_or_path when it names a local folder, as transformers' AutoConfig takes it.
fs::path base_config_path(const std::string& given, const ordered_json& adapter,
                          const std::string& adapter_file) {
    if (!given.empty())
        return fs::is_directory(given) ? fs::path(given) / "config.json" : fs::path(given);
    const auto named = adapter.find("base_model_name_or_path");
    std::string why;
    if (named != adapter.end() && named->is_string()) {
        const fs::path folder(named->get<std::string>());
        std::error_code ec;
        if (!folder.empty() && fs::is_regular_file(folder / "config.json", ec))
            return folder / "config.json";
        why = "; base_model_name_or_path '" + folder.string() +
              "' is no local folder with a config.json (the converter would fetch it from the "
              "Hugging Face hub)";
    }
    throw ck::Error(
        "an adapter is converted with its base model's config.json: give base=FOLDER "
        "(convert-lora --base FOLDER)" +
            why,
        adapter_file, std::nullopt, "key 'base_model_name_or_path'");
}

// Whether the base shares token_embd as its output (tie_word_embeddings; transformers' default
// is true for Gemma's configs, false for the others here).
bool ties_output(const Architecture& a, const Hparams& hp) {
    const ordered_json* tie = hp.find({"tie_word_embeddings"});
    if (tie && tie->is_boolean()) return tie->get<bool>();
    return a.arch.starts_with("gemma");
}

std::string decimal(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", x);
    return text;
}

// adapter.lora.alpha: lora_alpha, as the converter writes it; with peft_scale and use_rslora,
// lora_alpha * sqrt(r), so that llama.cpp's alpha / r is PEFT's lora_alpha / sqrt(r). Warns
// where llama.cpp will not scale the adapter as PEFT does.
float written_alpha(const LoraConfig& lora, const std::vector<AdapterTensor>& plan,
                    const AdapterSettings& settings, const std::string& file,
                    ck::Context& context) {
    std::int64_t rank = 0;
    for (const AdapterTensor& t : plan)
        if (t.info.name.ends_with(".lora_b")) {
            if (rank != 0 && rank != t.info.ne[0] && lora.rslora && settings.peft_scale)
                throw ck::Error(
                    "peft_scale with use_rslora needs one rank for every module, "
                    "but they differ (rank_pattern): one adapter.lora.alpha cannot "
                    "give each its scale",
                    file, std::nullopt, "key 'use_rslora'");
            rank = t.info.ne[0];
        }
    if (!lora.alpha_pattern.empty())
        context.warn(file + ": alpha_pattern gives " + std::to_string(lora.alpha_pattern.size()) +
                     " module pattern(s) their own lora_alpha (the first: '" +
                     lora.alpha_pattern.front() +
                     "'), which a GGUF adapter cannot hold: every module is scaled by "
                     "lora_alpha / r, as the converter writes it");
    if (!lora.rslora || rank == 0) return static_cast<float>(lora.alpha);
    const double r = static_cast<double>(rank), peft = lora.alpha / std::sqrt(r);
    if (settings.peft_scale) return static_cast<float>(lora.alpha * std::sqrt(r));
    context.warn(file +
                 ": use_rslora is true: PEFT scales this adapter by lora_alpha / sqrt(r) = " +
                 decimal(peft) +
                 ", but the converter ignores the flag and llama.cpp scales by "
                 "lora_alpha / r = " +
                 decimal(lora.alpha / r) +
                 "; with peft_scale (convert-lora --peft-scale) adapter.lora.alpha is "
                 "lora_alpha * sqrt(r) = " +
                 decimal(lora.alpha * std::sqrt(r)) + ", which llama.cpp scales as PEFT does");
    return static_cast<float>(lora.alpha);
}

void write_adapter_metadata(ck::Metadata& md, const Architecture& a, const fs::path& folder,
                            const std::vector<AdapterTensor>& plan, float alpha,
                            const LoraConfig& lora) {
    // set_type, then the naming keys from the adapter's folder (gguf-py reads its README.md and,
    // if there is one, its config.json), then the adapter's parameters.
    md.set("general.architecture", ck::Value::of_string(std::string(a.arch)));
    md.set("general.type", ck::Value::of_string("adapter"));
    md.set("adapter.type", ck::Value::of_string("lora"));
    ParameterCount count;
    count.total = count.shared = adapter_parameter_count(plan);
    count.adapter = true;
    const ordered_json config =
        read_json_file(folder / "config.json").value_or(ordered_json::object());
    add_general_naming(config.is_object() ? config : ordered_json::object(), folder, count, md);
    md.set("adapter.lora.alpha", ck::Value::of_f32(alpha));
    if (!lora.invocation_tokens.empty())
        md.set("adapter.alora.invocation_tokens",
               ck::Value::of_array(ck::ArrayValue::of<std::uint32_t>(
                   ck::ValueType::u32, std::span<const std::uint32_t>(lora.invocation_tokens))));
    md.set(std::string(ck::llama::quantization_version_key),
           ck::Value::of_u32(ck::llama::quantization_version));
}

// `values` (F32) in the written type.
ck::TensorView encode(const std::vector<float>& values, const ck::TensorInfo& info) {
    ck::TensorAllocation out = ck::TensorView::allocate(info.nbytes);
    const auto type = static_cast<ck::GgmlType>(info.type);
    const ck::kernels::NarrowTable& narrow = ck::kernels::plugin_narrow_table();
    auto* halves = reinterpret_cast<std::uint16_t*>(out.bytes.data());
    if (type == ck::GgmlType::f16)
        narrow.to_f16(values.data(), halves, values.size());
    else if (type == ck::GgmlType::bf16)
        narrow.to_bf16(values.data(), halves, values.size());
    else if (type == ck::GgmlType::q8_0) {
        // Q8_0 has no code for NaN or infinity (a block's scale would be NaN, its rounding
        // undefined): gguf-py writes garbage for such a factor; refused here.
        const auto bad =
            std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
        if (bad != values.end())
            throw ck::tensor_error("holds " +
                                       std::string(std::isnan(*bad) ? "NaN" : "an infinity") +
                                       " at element " + std::to_string(bad - values.begin()) +
                                       ": Q8_0 cannot encode it (convert with --outtype f32, "
                                       "f16 or bf16, or fix the adapter)",
                                   info.name);
        ck::kernels::quantize_row_q8_0(values.data(), out.bytes.data(), values.size());
    } else
        ck::le::store_array(out.bytes.data(), values.data(), values.size());
    return std::move(out.view);
}

}  // namespace

AdapterSettings AdapterSettings::from(const ck::Options& options) {
    AdapterSettings s;
    s.base = options.get("base");
    s.outtype = options.get("outtype", "f32");
    s.peft_scale = options.get_bool("peft_scale", false);
    s.given = options.has("base") || options.has("outtype") || options.has("peft_scale");
    return s;
}

bool is_adapter_folder(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return fs::exists(path / adapter_config_file, ec);
    return path.filename() == adapter_config_file;
}

ck::ModelHeader AdapterReader::open(const fs::path& path) {
    const fs::path folder = folder_of(path);
    const std::string config_file = (folder / adapter_config_file).string();
    const std::optional<ordered_json> config = read_json_file(config_file);
    if (!config || !config->is_object())
        throw ck::Error(config ? "is not a JSON object" : "cannot open", config_file);
    const LoraConfig lora = read_lora_config(*config, config_file);
    const fs::path base_config = base_config_path(settings_.base, *config, config_file);
    const Hparams hp(read_config(base_config), base_config.string());
    const std::string class_name = class_of(hp);
    const Architecture& architecture = architecture_of(class_name, hp, base_config.parent_path());
    if (!fs::exists(folder / adapter_weights_file))
        throw ck::Error(fs::exists(folder / "adapter_model.bin")
                            ? "adapter_model.bin (a PyTorch pickle) is not read: save the "
                              "adapter with safe_serialization=True"
                            : std::string("no ") + adapter_weights_file + " in the adapter folder",
                        folder.string());
    weights_.open_file(folder / adapter_weights_file, context_);
    plan_ = plan_adapter(
        {architecture, hp, weights_, settings_.outtype, ties_output(architecture, hp), context_});

    ck::ModelHeader header;
    header.source = folder.string();
    header.format = "hf";
    for (const AdapterTensor& t : plan_) header.tensors.push_back(t.info);
    const float alpha = written_alpha(lora, plan_, settings_, config_file, context_);
    write_adapter_metadata(header.metadata, architecture, folder, plan_, alpha, lora);
    header.format_facts = {{"adapter", "PEFT LoRA"},
                           {"base", base_config.parent_path().string()},
                           {"architecture", class_name}};
    return header;
}

ck::TensorView AdapterReader::tensor(std::size_t index) const {
    const AdapterTensor& t = plan_.at(index);
    std::vector<float> values(t.info.elements());
    std::size_t at = 0;
    for (const StoredTensor& s : t.stored) {
        const ck::TensorView stored = weights_.view(s);
        const std::size_t n = s.info->elements();
        const auto type = static_cast<ck::GgmlType>(s.info->type);
        if (t.shift_norm) {
            shift_norm(stored.data(), reinterpret_cast<std::byte*>(values.data() + at), n, type);
            ck::le::in_place(values.data() + at, n);  // tensor bytes to host floats
        } else
            ck::kernels::plugin_dequant_table().fn[s.info->type](stored.data(), values.data() + at,
                                                                 n);
        at += n;
    }
    const auto row_length = static_cast<std::size_t>(t.info.ne[0]);
    if (t.heads != 0) {
        std::vector<float> permuted(values.size());
        permute_rows(reinterpret_cast<const std::byte*>(values.data()),
                     reinterpret_cast<std::byte*>(permuted.data()), t.info.ne[1], row_length * 4,
                     t.heads);
        values.swap(permuted);
    }
    if (t.transpose) {
        // Stored [r][vocab] (rows of the vocabulary's length), written [vocab][r].
        std::vector<float> transposed(values.size());
        const std::size_t columns = values.size() / row_length;
        for (std::size_t i = 0; i < columns; ++i)
            for (std::size_t j = 0; j < row_length; ++j)
                transposed[i * row_length + j] = values[j * columns + i];
        values.swap(transposed);
    }
    return encode(values, t.info);
}

}  // namespace ckplugin::hf
