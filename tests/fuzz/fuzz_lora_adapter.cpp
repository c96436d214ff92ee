// The hf reader's adapter mode (a PEFT LoRA folder, as convert_lora_to_gguf.py converts it): the
// input is the folder's adapter_config.json, or, when it starts with "ST", its
// adapter_model.safetensors (the bytes after "ST") beside a fixed valid config. The base model's
// config.json is fixed (a one-layer Llama). Every tensor is converted (outtype q8_0 takes every
// path: Q8_0, the F16 fallback, the rotary permutation) and read like `ckhost verify`. ck::Error
// is the expected outcome for a bad folder; anything else escapes to the fuzzer as a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ck/options.hpp"
#include "fuzz_support.hpp"
#include "hf_reader.hpp"

namespace {

namespace fs = std::filesystem;

const char* const base_config =
    R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":32,)"
    R"("num_attention_heads":2,"num_key_value_heads":1,"num_hidden_layers":1,)"
    R"("intermediate_size":64,"vocab_size":10,"max_position_embeddings":64,)"
    R"("rms_norm_eps":1e-05,"rope_theta":10000.0,"torch_dtype":"float32"})";

const char* const adapter_config =
    R"({"peft_type":"LORA","r":2,"lora_alpha":4,"use_rslora":false,"use_dora":false,)"
    R"("target_modules":["q_proj","k_proj"],"base_model_name_or_path":"base"})";

// A valid adapter: lora_A [2, 32] and lora_B [rows, 2] of q_proj (32 rows) and k_proj (16), F32.
std::vector<std::byte> valid_safetensors() {
    std::string header = "{";
    std::size_t offset = 0;
    const auto add = [&](const std::string& name, std::size_t rows, std::size_t columns) {
        const std::size_t bytes = rows * columns * 4;
        header += (offset ? "," : "") + std::string("\"base_model.model.model.layers.0.") + name +
                  "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(rows) + "," +
                  std::to_string(columns) + "],\"data_offsets\":[" + std::to_string(offset) + "," +
                  std::to_string(offset + bytes) + "]}";
        offset += bytes;
    };
    add("self_attn.k_proj.lora_A.weight", 2, 32);
    add("self_attn.k_proj.lora_B.weight", 16, 2);
    add("self_attn.q_proj.lora_A.weight", 2, 32);
    add("self_attn.q_proj.lora_B.weight", 32, 2);
    header += "}";
    while (header.size() % 8) header += ' ';
    std::vector<std::byte> file(8 + header.size() + offset);
    const std::uint64_t length = header.size();
    for (int i = 0; i < 8; ++i) file[i] = std::byte((length >> (8 * i)) & 0xff);
    std::memcpy(file.data() + 8, header.data(), header.size());
    for (std::size_t i = 8 + header.size(); i < file.size(); i += 4)
        file[i + 3] = std::byte(0x3c);  // 2^-7 and friends: small, finite values
    return file;
}

std::span<const std::byte> bytes_of(const char* text) {
    return std::as_bytes(std::span(text, std::strlen(text)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fs::path folder = [] {
        const fs::path base = ckfuzz::scratch_dir() / "base";
        fs::create_directories(base);
        ckfuzz::write_file(base / "config.json", bytes_of(base_config));
        const fs::path adapter = ckfuzz::scratch_dir() / "adapter";
        fs::create_directories(adapter);
        return adapter;
    }();
    static const std::vector<std::byte> valid = valid_safetensors();
    const auto input = std::as_bytes(std::span(data, size));
    const bool weights = size >= 2 && data[0] == 'S' && data[1] == 'T';
    ckfuzz::write_file(folder / "adapter_config.json", weights ? bytes_of(adapter_config) : input);
    ckfuzz::write_file(folder / "adapter_model.safetensors",
                       weights ? input.subspan(2) : std::span<const std::byte>(valid));
    ck::RecordingContext context;
    const ck::Options options(
        {{"base", (ckfuzz::scratch_dir() / "base").string()}, {"outtype", "q8_0"}});
    ckplugin::hf::HfReader reader(options, context);
    ckfuzz::read_like_verify(reader, folder);
    return 0;
}
