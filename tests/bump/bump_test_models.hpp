// Models for the bump and headpack tests, built in the test and written with the project's own
// GGUF writer: either a copy of an existing GGUF with one thing changed, or a synthetic
// llama-family model with F32 weights. Plus reading a bump file's slots back in process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ck/model.hpp"

namespace cktest {

struct LlamaShape {
    std::string arch = "llama";  // general.architecture; keys go under "<arch>."
    std::uint32_t layers = 2;
    std::uint32_t embed = 256;
    std::uint32_t heads = 4;
    std::uint32_t kv_heads = 2;
    std::uint32_t ffn = 512;
    std::uint32_t vocab = 64;
    std::uint32_t context = 128;
    bool qkv_biases = false;  // qwen2 has them
    bool output_weight = true;
    std::uint32_t seed = 1;
};

class ModelBuilder {
  public:
    // Every key and tensor of an existing GGUF file, bytes copied.
    static ModelBuilder from_gguf(const std::filesystem::path& path);
    // A llama-family model with F32 weights (random, deterministic per seed) and F32 norms.
    static ModelBuilder llama_f32(const LlamaShape& shape);

    ck::Metadata& metadata() { return header_.metadata; }
    const ck::ModelHeader& header() const { return header_; }

    bool has(const std::string& name) const;
    const ck::TensorInfo& info(const std::string& name) const;
    const std::vector<std::byte>& bytes(const std::string& name) const;

    // Replaces (in place) or appends a tensor; nbytes is computed from type and shape.
    void set_tensor(const std::string& name, std::uint32_t type, std::vector<std::int64_t> ne,
                    std::vector<std::byte> bytes);
    // Same, with all-zero bytes of the right size.
    void set_zeros(const std::string& name, std::uint32_t type, std::vector<std::int64_t> ne);
    void remove_tensor(const std::string& name);

    void write(const std::filesystem::path& path) const;

  private:
    std::size_t index_of(const std::string& name) const;
    ck::ModelHeader header_;
    std::vector<std::vector<std::byte>> data_;
};

// Random F32 values (bytes), deterministic per seed.
std::vector<std::byte> random_f32(std::uint64_t count, std::uint32_t seed);

// A bump file read back in process: slot name -> bytes, and the raw header fields.
struct BumpContents {
    ck::ModelHeader header;  // as the bump reader presents it
    std::vector<unsigned char> file;
    std::vector<std::byte> slot(const std::string& name) const;
    std::uint64_t u64_at(std::size_t offset) const;
    std::uint32_t u32_at(std::size_t offset) const;
};
BumpContents read_bump(const std::filesystem::path& path);

std::string read_text(const std::filesystem::path& path);

}  // namespace cktest
