#include "hf_reader.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/support/tensor_io.hpp"
#include "model_name.hpp"
#include "tokenizer.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

using Action = HfReader::Source::Action;

// The architectures converted, each with the llama.cpp architecture it becomes. Mistral's
// checkpoints are llama's (llama.cpp's converter registers both with its LlamaModel); qwen2
// has biases on q/k/v, no rotary permutation and its own rope scaling keys.
enum class Family { llama, qwen2 };
struct Architecture {
    std::string_view hf_name;
    std::string_view arch;
    Family family;
};
constexpr Architecture architectures[] = {
    {"LlamaForCausalLM", "llama", Family::llama},
    {"MistralForCausalLM", "llama", Family::llama},
    {"Qwen2ForCausalLM", "qwen2", Family::qwen2},
};

std::string supported_list() {
    std::string s;
    for (const Architecture& a : architectures)
        s += (s.empty() ? "" : ", ") + std::string(a.hf_name);
    return s;
}

// Hugging Face's names -> llama.cpp's (gguf-py's tensor_mapping.py, for these architectures).
struct NameRule {
    std::string_view hf;
    std::string_view llama;
};
constexpr NameRule model_names[] = {
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
};
constexpr NameRule layer_names[] = {
    {"input_layernorm", "attn_norm"},    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},      {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"}, {"post_attention_layernorm", "ffn_norm"},
    {"mlp.gate_proj", "ffn_gate"},       {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
};

// llama.cpp's name for `name`, or nullopt when it has none.
std::optional<std::string> llama_name(const std::string& name, std::uint32_t block_count) {
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string stem = name.substr(0, dot), suffix = name.substr(dot);
    if (suffix != ".weight" && suffix != ".bias") return std::nullopt;
    for (const NameRule& r : model_names)
        if (stem == r.hf) return std::string(r.llama) + suffix;
    static const std::regex layer(R"(model\.layers\.(\d+)\.(.+))");
    std::smatch m;
    if (!std::regex_match(stem, m, layer)) return std::nullopt;
    const std::string index = m[1].str();
    if (index.size() > 9 || std::stoul(index) >= block_count ||
        (index.size() > 1 && index[0] == '0'))
        return std::nullopt;
    for (const NameRule& r : layer_names)
        if (m[2].str() == r.hf) return "blk." + index + "." + std::string(r.llama) + suffix;
    return std::nullopt;
}

ordered_json read_config(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw ck::Error("cannot open: no config.json in the checkpoint folder", path.string());
    try {
        ordered_json config = ordered_json::parse(in);
        if (!config.is_object()) throw ck::Error("config.json is not a JSON object", path.string());
        return config;
    } catch (const ordered_json::exception& e) {
        throw ck::Error(std::string("not valid JSON: ") + e.what(), path.string());
    }
}

// config.json read as the converter's find_hparam reads it: the first key present.
class Hparams {
  public:
    Hparams(const ordered_json& config, std::string file)
        : config_(config), file_(std::move(file)) {}

    const ordered_json* find(std::initializer_list<const char*> keys) const {
        for (const char* k : keys)
            if (const auto it = config_.find(k); it != config_.end() && !it->is_null()) return &*it;
        return nullptr;
    }
    std::optional<std::uint32_t> u32(std::initializer_list<const char*> keys) const {
        const ordered_json* v = find(keys);
        if (!v) return std::nullopt;
        if (!v->is_number_unsigned() || v->get<std::uint64_t>() > UINT32_MAX)
            fail(*keys.begin(), "is " + v->dump() + ", not a count");
        return v->get<std::uint32_t>();
    }
    std::uint32_t required_u32(std::initializer_list<const char*> keys) const {
        const auto v = u32(keys);
        if (!v) fail(*keys.begin(), "is missing");
        return *v;
    }
    std::optional<float> number(std::initializer_list<const char*> keys) const {
        const ordered_json* v = find(keys);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(*keys.begin(), "is " + v->dump() + ", not a number");
        return static_cast<float>(v->get<double>());
    }
    [[noreturn]] void fail(const char* key, const std::string& what) const {
        throw ck::Error(std::string("\"") + key + "\" " + what, file_, std::nullopt,
                        std::string("key '") + key + "'");
    }
    const ordered_json& json() const { return config_; }

  private:
    const ordered_json& config_;
    std::string file_;
};

const Architecture& architecture_of(const ordered_json& config, const std::string& file) {
    const auto list = config.find("architectures");
    if (list == config.end() || !list->is_array() || list->empty() || !(*list)[0].is_string())
        throw ck::Error("no \"architectures\" list naming the model class", file, std::nullopt,
                        "key 'architectures'");
    const std::string name = (*list)[0].get<std::string>();
    for (const Architecture& a : architectures)
        if (a.hf_name == name) return a;
    throw ck::Error(
        "architecture '" + name + "' is not supported (supported: " + supported_list() + ")", file,
        std::nullopt, "key 'architectures'");
}

// LlamaModel.set_gguf_parameters' own keys.
void add_llama_keys(ck::Metadata& md, const Hparams& hp, const std::string& a,
                    ck::Context& context) {
    md.set(a + ".vocab_size", ck::Value::of_u32(hp.required_u32({"vocab_size"})));
    const std::uint32_t heads = hp.required_u32({"num_attention_heads"});
    if (heads == 0) hp.fail("num_attention_heads", "is 0");
    const auto head_dim = hp.u32({"head_dim"});
    md.set(a + ".rope.dimension_count",
           ck::Value::of_u32(head_dim ? *head_dim : hp.required_u32({"hidden_size"}) / heads));
    const ordered_json* scaling = hp.find({"rope_scaling"});
    if (!scaling || !scaling->is_object()) return;
    const std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
    if (type == "linear" && scaling->contains("factor")) {
        md.set(a + ".rope.scaling.type", ck::Value::of_string("linear"));
        md.set(a + ".rope.scaling.factor",
               ck::Value::of_f32(static_cast<float>((*scaling)["factor"].get<double>())));
    } else if (type == "llama3") {
        hp.fail("rope_scaling", "is llama3's: its rope_freqs tensor is not generated yet");
    } else {
        context.warn("config.json: rope_scaling of type '" + type +
                     "' is not written, as llama.cpp's converter does not write it for llama");
    }
}

// Qwen2Model.set_gguf_parameters' own keys: yarn rope scaling only.
void add_qwen2_keys(ck::Metadata& md, const Hparams& hp, const std::string& a) {
    const ordered_json* scaling = hp.find({"rope_scaling"});
    if (!scaling || !scaling->is_object()) return;
    const std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
    if (type != "yarn" || !scaling->contains("factor")) return;
    md.set(a + ".rope.scaling.type", ck::Value::of_string("yarn"));
    md.set(a + ".rope.scaling.factor",
           ck::Value::of_f32(static_cast<float>((*scaling)["factor"].get<double>())));
    if (!scaling->contains("original_max_position_embeddings"))
        hp.fail("rope_scaling", "of type yarn needs original_max_position_embeddings");
    md.set(a + ".rope.scaling.original_context_length",
           ck::Value::of_u32((*scaling)["original_max_position_embeddings"].get<std::uint32_t>()));
}

// general.* and llama.* keys in the converter's order (TextModel and LlamaModel's
// set_gguf_parameters); general.file_type is set by the caller once the tensors are known.
void add_model_keys(ck::Metadata& md, const Hparams& hp, const Architecture& architecture,
                    const std::string& folder_name, std::uint64_t parameters,
                    std::uint32_t file_type, ck::Context& context) {
    const std::string a(architecture.arch);
    auto u32 = [&md, &a](const char* key, std::optional<std::uint32_t> v) {
        if (v) md.set(a + "." + key, ck::Value::of_u32(*v));
    };
    auto f32 = [&md, &a](const char* key, std::optional<float> v) {
        if (v) md.set(a + "." + key, ck::Value::of_f32(*v));
    };
    md.set("general.architecture", ck::Value::of_string(a));
    md.set("general.type", ck::Value::of_string("model"));
    md.set("general.name", ck::Value::of_string(title_from_folder(folder_name)));
    md.set("general.size_label", ck::Value::of_string(size_label(parameters)));
    u32("block_count", hp.required_u32({"num_hidden_layers", "n_layer", "num_layers"}));
    u32("context_length",
        hp.u32({"max_position_embeddings", "n_ctx", "n_positions", "max_length"}));
    u32("embedding_length", hp.u32({"hidden_size", "n_embd", "dim"}));
    u32("feed_forward_length", hp.u32({"intermediate_size", "n_inner", "hidden_dim"}));
    u32("attention.head_count", hp.u32({"num_attention_heads", "n_head", "n_heads"}));
    u32("attention.head_count_kv", hp.u32({"num_key_value_heads", "n_kv_heads"}));
    f32("rope.freq_base", hp.number({"rope_theta"}));
    f32("attention.layer_norm_rms_epsilon", hp.number({"rms_norm_eps", "norm_eps"}));
    f32("attention.layer_norm_epsilon",
        hp.number({"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}));
    if (hp.find({"num_local_experts"}))
        hp.fail("num_local_experts", "is set: mixture-of-experts checkpoints are not supported");
    const auto head_dim = hp.u32({"head_dim"});
    u32("attention.key_length", head_dim);
    u32("attention.value_length", head_dim);
    md.set(std::string(ck::llama::file_type_key), ck::Value::of_u32(file_type));
    if (architecture.family == Family::llama)
        add_llama_keys(md, hp, a, context);
    else
        add_qwen2_keys(md, hp, a);
    md.set(std::string(ck::llama::quantization_version_key),
           ck::Value::of_u32(ck::llama::quantization_version));
}

// What general.name is made from, as gguf-py's metadata heuristics choose it without a model
// card: config.json's _name_or_path when it is a Hugging Face model id ("org/name", at most
// one '/'; the part after it), else the folder's name.
std::string model_id_name(const ordered_json& config, const fs::path& folder) {
    const auto id = config.find("_name_or_path");
    if (id != config.end() && id->is_string()) {
        const std::string text = id->get<std::string>();
        const auto slash = text.find('/');
        if (std::count(text.begin(), text.end(), '/') <= 1) {
            if (text.find(' ') != std::string::npos) return text;  // a sentence, not an id
            const std::string full = slash == std::string::npos ? text : text.substr(slash + 1);
            if (!full.empty()) return full;
        }
    }
    const fs::path normal = fs::absolute(folder).lexically_normal();
    const std::string name = normal.filename().string();
    return name.empty() ? normal.parent_path().filename().string() : name;
}

std::uint32_t stored_file_type(const std::vector<ck::TensorInfo>& tensors) {
    ck::ModelHeader h;
    h.tensors = tensors;
    const ck::llama::FileTypeGuess guess = ck::llama::guess_file_type(h);
    return guess.file_type ? static_cast<std::uint32_t>(*guess.file_type) : 0;
}

// A row of HF's rotary layout (per head: the first halves of all pairs, then the second
// halves) -> llama.cpp's (the halves interleaved): LlamaModel.permute in the converter.
void permute_rows(const std::byte* in, std::byte* out, std::int64_t rows, std::size_t row_bytes,
                  std::int64_t heads) {
    const std::int64_t head_rows = rows / heads, half = head_rows / 2;
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < half; ++i)
            for (std::int64_t j = 0; j < 2; ++j) {
                const std::int64_t from = h * head_rows + j * half + i;
                const std::int64_t to = h * head_rows + i * 2 + j;
                std::memcpy(out + to * row_bytes, in + from * row_bytes, row_bytes);
            }
}

}  // namespace

ck::ModelHeader HfReader::open(const fs::path& path) {
    fs::path folder = path;
    if (!fs::is_directory(path)) {
        if (path.filename() != "config.json")
            throw ck::Error("give the checkpoint folder or its config.json", path.string());
        folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    }
    const fs::path config_path = folder / "config.json";
    const ordered_json config = read_config(config_path);
    const Hparams hp(config, config_path.string());
    const Architecture& architecture = architecture_of(config, config_path.string());
    const std::uint32_t block_count =
        hp.required_u32({"num_hidden_layers", "n_layer", "num_layers"});
    const std::uint32_t heads = hp.required_u32({"num_attention_heads", "n_head", "n_heads"});
    const std::uint32_t kv_heads = hp.u32({"num_key_value_heads", "n_kv_heads"}).value_or(heads);

    checkpoint_.open(folder, context_);
    ck::ModelHeader header;
    header.source = folder.string();
    header.format = "hf";
    std::uint64_t parameters = 0;
    for (const StoredTensor& stored : checkpoint_.tensors()) {
        const ck::TensorInfo& in = *stored.info;
        if (in.name.ends_with(".rotary_emb.inv_freq")) continue;  // recomputed by llama.cpp
        const auto name = llama_name(in.name, block_count);
        if (!name)
            throw ck::Error("tensor '" + in.name + "' has no llama.cpp name for this architecture",
                            checkpoint_.file_of(stored.shard), in.source_offset,
                            ck::support::tensor_subject(in.name));
        const auto type = static_cast<ck::GgmlType>(in.type);
        if (type != ck::GgmlType::f32 && type != ck::GgmlType::f16 && type != ck::GgmlType::bf16)
            throw ck::Error("tensor '" + in.name + "' is " + std::string(ck::type_name(in.type)) +
                                "; a checkpoint's weights must be F32, F16 or BF16",
                            checkpoint_.file_of(stored.shard), in.source_offset,
                            ck::support::tensor_subject(in.name));
        Source source{stored};
        ck::TensorInfo out = in;
        out.name = *name;
        if (in.ne.size() == 1 && type != ck::GgmlType::f32) {
            // The converter keeps every 1-D tensor (norms, biases) in F32 whatever the outtype.
            source.action = Action::widen_to_f32;
            out.type = static_cast<std::uint32_t>(ck::GgmlType::f32);
            out.nbytes = in.elements() * 4;
        }
        const bool is_q = name->ends_with(".attn_q.weight"),
                   is_k = name->ends_with(".attn_k.weight");
        if ((is_q || is_k) && architecture.family == Family::llama) {
            source.action = Action::permute_rows;
            source.heads = is_q ? heads : kv_heads;
            if (in.ne.size() != 2 || source.heads == 0 || in.ne[1] % (2 * source.heads) != 0)
                throw ck::Error("tensor '" + in.name + "' of shape " + in.shape_string() +
                                    " cannot be split into " + std::to_string(source.heads) +
                                    " heads of rotary pairs",
                                checkpoint_.file_of(stored.shard), in.source_offset,
                                ck::support::tensor_subject(in.name));
        }
        parameters += in.elements();
        header.tensors.push_back(std::move(out));
        sources_.push_back(source);
    }
    for (std::size_t i = 0; i < header.tensors.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (header.tensors[i].name == header.tensors[j].name)
                throw ck::Error("two tensors become '" + header.tensors[i].name + "'",
                                checkpoint_.file_of(sources_[i].stored.shard), std::nullopt,
                                ck::support::tensor_subject(header.tensors[i].name));

    add_model_keys(header.metadata, hp, architecture, model_id_name(config, folder), parameters,
                   stored_file_type(header.tensors), context_);
    add_tokenizer(folder, hp.u32({"vocab_size"}), config, context_, header.metadata);
    header.format_facts = {{"architecture", config["architectures"][0].get<std::string>()},
                           {"shards", std::to_string(checkpoint_.shard_count())}};
    return header;
}

ck::TensorView HfReader::tensor(std::size_t index) {
    const Source& source = sources_.at(index);
    const ck::TensorView stored = checkpoint_.view(source.stored);
    const ck::TensorInfo& info = *source.stored.info;
    switch (source.action) {
        case Action::copy:
            return stored;
        case Action::permute_rows: {
            auto out = ck::TensorView::allocate(stored.size());
            const auto rows = info.ne[1];
            permute_rows(stored.data(), out.bytes.data(), rows, stored.size() / rows, source.heads);
            return out.view;
        }
        case Action::widen_to_f32: {
            const std::size_t n = info.elements();
            auto out = ck::TensorView::allocate(n * 4);
            const bool bf16 = info.type == static_cast<std::uint32_t>(ck::GgmlType::bf16);
            for (std::size_t i = 0; i < n; ++i) {
                std::uint16_t h;
                std::memcpy(&h, stored.data() + 2 * i, 2);
                const float f = bf16 ? ck::kernels::bf16_to_f32(h) : ck::kernels::f16_to_f32(h);
                std::memcpy(out.bytes.data() + 4 * i, &f, 4);
            }
            return out.view;
        }
    }
    return stored;
}

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path) {
    // `ckhost inspect` opens files, not folders: a checkpoint is recognised by its config.json
    // beside its weights.
    const fs::path p(path);
    if (p.filename() != "config.json" || size == 0 || head[0] != '{') return false;
    std::error_code ec;
    return fs::exists(p.parent_path() / "model.safetensors", ec) ||
           fs::exists(p.parent_path() / "model.safetensors.index.json", ec);
}

}  // namespace ckplugin::hf
