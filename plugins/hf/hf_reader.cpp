#include "hf_reader.hpp"

#include <cstring>

#include <boost/algorithm/string/case_conv.hpp>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/support/little_endian.hpp"
#include "hf_config.hpp"
#include "model_keys.hpp"
#include "model_name.hpp"
#include "special_vocab.hpp"
#include "tokenizer.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

using Action = PlannedTensor::Action;

// Multimodal checkpoints are refused as a whole: the converter writes their language model
// and their projector to two files, and a text-only GGUF of one is not what its user asked for.
bool is_multimodal(const std::string& name, const ordered_json& config) {
    return name.ends_with("ForConditionalGeneration") || name.find("VL") != std::string::npos ||
           name.find("Vision") != std::string::npos || name.find("Llava") != std::string::npos ||
           config.contains("vision_config") || config.contains("audio_config");
}

std::uint32_t stored_file_type(const std::vector<ck::TensorInfo>& tensors) {
    ck::ModelHeader h;
    h.tensors = tensors;
    const ck::llama::FileTypeGuess guess = ck::llama::guess_file_type(h);
    return guess.file_type ? static_cast<std::uint32_t>(*guess.file_type) : 0;
}

// The elements gguf-py's get_total_parameter_count reports for the tensors written.
ParameterCount count_parameters(const std::vector<ck::TensorInfo>& tensors) {
    ParameterCount c;
    std::uint64_t expert_sum = 0, expert_tensors = 0;
    for (const ck::TensorInfo& t : tensors) {
        const std::uint64_t n = t.elements();
        c.total += n;
        if (t.name.find("_exps.") != std::string::npos && t.ne.size() >= 3 && t.ne[2] > 0) {
            c.expert += n / static_cast<std::uint64_t>(t.ne[2]);
            expert_sum += static_cast<std::uint64_t>(t.ne[2]);
            ++expert_tensors;
        } else {
            c.shared += n;
        }
    }
    c.expert_count = expert_tensors ? static_cast<std::uint32_t>(expert_sum / expert_tensors) : 0;
    return c;
}

void widen_to_f32(const std::byte* in, std::byte* out, std::size_t n, ck::GgmlType type) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto h = ck::le::load<std::uint16_t>(in + 2 * i);
        ck::le::store(out + 4 * i, type == ck::GgmlType::bf16 ? ck::kernels::bf16_to_f32(h)
                                                              : ck::kernels::f16_to_f32(h));
    }
}

void write_header_metadata(ck::Metadata& md, const Architecture& a, const Hparams& hp,
                           const fs::path& folder, const GeneratedTensors& generated,
                           const std::vector<ck::TensorInfo>& tensors) {
    // The converter's order: the architecture (the writer's first key), what generating
    // tensors wrote (Phi-3's attn_factor), then general.type, the naming keys and the family's.
    md.set("general.architecture", ck::Value::of_string(std::string(a.arch)));
    if (generated.attn_factor)
        md.set(std::string(a.arch) + ".rope.scaling.attn_factor",
               ck::Value::of_f32(*generated.attn_factor));
    md.set("general.type", ck::Value::of_string("model"));
    add_general_naming(hp.json(), folder, count_parameters(tensors), md);
    add_architecture_keys(a, hp, stored_file_type(tensors), md);
    md.set(std::string(ck::llama::quantization_version_key),
           ck::Value::of_u32(ck::llama::quantization_version));
}

}  // namespace

ordered_json read_config(const fs::path& path) {
    std::optional<ordered_json> config = read_json_file(path);
    if (!config)
        throw ck::Error("cannot open: no config.json in the checkpoint folder", path.string());
    if (!config->is_object()) throw ck::Error("config.json is not a JSON object", path.string());
    return std::move(*config);
}

std::string class_of(const Hparams& hp) {
    const ordered_json* list = hp.find({"architectures"});
    if (!list || !list->is_array() || list->empty() || !(*list)[0].is_string())
        throw ck::Error("no \"architectures\" list naming the model class", hp.file(), std::nullopt,
                        "key 'architectures'");
    return (*list)[0].get<std::string>();
}

// The family of class `name` (the config's first "architectures" entry).
const Architecture& architecture_of(const std::string& name, const Hparams& hp,
                                    const fs::path& folder) {
    if (is_multimodal(name, hp.json()))
        throw ck::Error("architecture '" + name +
                            "' is a vision/multimodal model; ckhost converts text-only "
                            "checkpoints and does not take the text part alone",
                        hp.file(), std::nullopt, "key 'architectures'");
    const Architecture* a = find_architecture(name);
    if (!a)
        throw ck::Error(
            "architecture '" + name + "' is not supported (supported: " + supported_classes() + ")",
            hp.file(), std::nullopt, "key 'architectures'");
    std::string hints = folder.filename().string() + " " +
                        hp.json().value("_name_or_path", std::string()) + " " +
                        hp.json().value("model_type", std::string());
    boost::algorithm::to_lower(hints);
    for (std::string_view variant : a->refused_variants)
        if (hints.find(variant) != std::string::npos)
            throw ck::Error("'" + std::string(variant) + "' checkpoints are not supported: " +
                                "llama.cpp's converter gives them a classifier head ckhost does "
                                "not write",
                            hp.file(), std::nullopt, "key 'architectures'");
    return *a;
}

HfReader::HfReader(const ck::Options& options, ck::Context& context)
    : context_(context), adapter_settings_(AdapterSettings::from(options)) {}

ck::ModelHeader HfReader::open(const fs::path& path) {
    if (is_adapter_folder(path)) {
        adapter_ = std::make_unique<AdapterReader>(adapter_settings_, context_);
        return adapter_->open(path);
    }
    if (adapter_settings_.given)
        throw ck::usage_error(
            "hf: base=, outtype= and peft_scale are options of a PEFT adapter "
            "folder (one with adapter_config.json), and '" +
            path.string() + "' is none");
    fs::path folder = path;
    if (!fs::is_directory(path)) {
        if (path.filename() != "config.json")
            throw ck::Error("give the checkpoint folder or its config.json", path.string());
        folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    }
    const fs::path config_path = folder / "config.json";
    const Hparams hp(read_config(config_path), config_path.string());
    const std::string class_name = class_of(hp);
    const Architecture& architecture = architecture_of(class_name, hp, folder);
    check_config(architecture, hp);
    checkpoint_.open(folder, context_);
    generated_ = generate_tensors(architecture, hp);

    // add_tokenizer returns what Gemma 3's converter cuts token_embd to: the tokens written,
    // or for a tokenizer.json its vocabulary plus its added tokens.
    ck::Metadata tokenizer;
    const std::size_t tokens = add_tokenizer(folder, hp.u32({"vocab_size"}), hp.json(),
                                             architecture.tokenizer, context_, tokenizer);
    plan_ = plan_tensors(
        {architecture, hp, checkpoint_, generated_,
         architecture.trim_embedding ? std::optional<std::uint64_t>(tokens) : std::nullopt});

    ck::ModelHeader header;
    header.source = folder.string();
    header.format = "hf";
    for (const PlannedTensor& p : plan_) header.tensors.push_back(p.info);
    write_header_metadata(header.metadata, architecture, hp, folder, generated_, header.tensors);
    for (const auto& [key, value] : tokenizer) header.metadata.set(key, value);
    header.format_facts = {{"architecture", class_name},
                           {"shards", std::to_string(checkpoint_.shard_count())}};
    return header;
}

ck::TensorView HfReader::tensor(std::size_t index) {
    if (adapter_) return adapter_->tensor(index);
    const PlannedTensor& p = plan_.at(index);
    if (p.action == Action::generated) {
        const std::vector<float>& values = generated_.tensors.at(p.generated).values;
        auto out = ck::TensorView::allocate(values.size() * 4);
        ck::le::store_array(out.bytes.data(), values.data(), values.size());
        return out.view;
    }
    // Copied, permuted and stacked tensors are their row blocks' code over every row.
    if (p.action != Action::widen_to_f32 && p.action != Action::shift_norm)
        return tensor_rows(index, {0, p.info.rows()});
    const ck::TensorView stored = checkpoint_.view(p.stored.front());
    const ck::TensorInfo& info = *p.stored.front().info;
    auto out = ck::TensorView::allocate(info.elements() * 4);
    (p.action == Action::shift_norm ? shift_norm : widen_to_f32)(
        stored.data(), out.bytes.data(), info.elements(), static_cast<ck::GgmlType>(info.type));
    stored.release(0, stored.size());  // read once: its pages leave the resident set
    return out.view;
}

std::uint64_t HfReader::row_granule(std::size_t index) const {
    if (adapter_) return 0;  // an adapter's tensors are small: whole
    const PlannedTensor& p = plan_.at(index);
    switch (p.action) {
        case Action::copy:
            return 1;
        case Action::permute_rows:
            return static_cast<std::uint64_t>(p.info.ne[1] / p.heads);
        case Action::stack_experts:
            return p.info.rows() / p.stored.size();
        default:
            return 0;
    }
}

ck::TensorView HfReader::tensor_rows(std::size_t index, ck::RowRange rows) {
    const PlannedTensor& p = plan_.at(index);
    if (rows.count == 0) return ck::TensorView::allocate(0).view;  // an empty tensor, read whole
    const std::uint64_t row_bytes = p.info.row_bytes();
    if (p.action == Action::stack_experts) {
        const std::uint64_t per_expert = row_granule(index);  // not 0: there are rows
        const std::uint64_t first = rows.first / per_expert, count = rows.count / per_expert;
        if (count == 1) return checkpoint_.view(p.stored.at(first));
        auto out = ck::TensorView::allocate(rows.count * row_bytes);
        std::size_t at = 0;
        for (std::uint64_t e = first; e < first + count; ++e) {
            const ck::TensorView expert = checkpoint_.view(p.stored.at(e));
            std::memcpy(out.bytes.data() + at, expert.data(), expert.size());
            expert.release(0, expert.size());
            at += expert.size();
        }
        return out.view;
    }
    const ck::TensorView stored =
        checkpoint_.view(p.stored.front()).slice(rows.first * row_bytes, rows.count * row_bytes);
    if (p.action == Action::copy) return stored;
    auto out = ck::TensorView::allocate(stored.size());
    const auto head_rows = static_cast<std::int64_t>(row_granule(index));
    const auto count = static_cast<std::int64_t>(rows.count);
    permute_rows(stored.data(), out.bytes.data(), count, row_bytes, count / head_rows);
    stored.release(0, stored.size());
    return out.view;
}

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path) {
    // `ckhost inspect` opens files, not folders: a checkpoint is recognised by its config.json
    // beside its weights, an adapter by its adapter_config.json beside its own.
    const fs::path p(path);
    if (size == 0 || head[0] != '{') return false;
    std::error_code ec;
    if (p.filename() == "adapter_config.json")
        return fs::exists(p.parent_path() / "adapter_model.safetensors", ec);
    if (p.filename() != "config.json") return false;
    return fs::exists(p.parent_path() / "model.safetensors", ec) ||
           fs::exists(p.parent_path() / "model.safetensors.index.json", ec);
}

}  // namespace ckplugin::hf
