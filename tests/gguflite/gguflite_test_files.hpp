// Helpers of the GGUF-lite suites: a builder for hand-made (and deliberately broken) GGUF-lite
// files that knows where each field lands, an independent implementation of the spec's
// quantizers, and conversions through the real binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace gltest {

inline constexpr std::uint32_t magic = 0x474C4654;

// The file offsets of one descriptor's fields.
struct DescriptorFields {
    std::uint64_t start = 0, n_dims = 0, dims = 0, dtype = 0, offset = 0;
};

// Assembles header, metadata text, descriptors and data exactly as given: nothing is checked,
// so every rule of the spec can be broken on purpose.
struct FileBuilder {
    struct Tensor {
        std::string name;
        std::vector<std::uint32_t> dims;
        std::uint8_t dtype = 0;
        std::uint64_t offset = 0;
    };
    std::uint32_t magic_value = magic;
    std::uint32_t version = 1;
    std::optional<std::uint32_t> n_tensors;     // default: tensors.size()
    std::optional<std::uint32_t> metadata_len;  // default: metadata.size()
    std::string metadata;
    std::vector<Tensor> tensors;
    std::vector<unsigned char> data;

    // Adds an F32 tensor of the given dims whose values follow the previous tensor's.
    void add_f32(const std::string& name, std::vector<std::uint32_t> dims);

    std::vector<unsigned char> bytes() const;
    std::uint64_t metadata_start() const { return 16; }
    std::uint64_t descriptors_start() const { return 16 + metadata.size(); }
    DescriptorFields fields(std::size_t index) const;
    std::uint64_t data_start() const;
};

// The spec's formulas, written independently of the plugin: f16 rounding by the compiler's
// _Float16 (or the CPU's F16C instructions), std::nearbyint for round-half-even. Stored bytes of a
// rows x cols tensor.
std::vector<unsigned char> reference_q8(const std::vector<float>& w, std::uint64_t rows,
                                        std::uint64_t cols);
std::vector<unsigned char> reference_q4(const std::vector<float>& w, std::uint64_t rows,
                                        std::uint64_t cols);
float f16_to_float(std::uint16_t bits);

// Runs `ckhost --pipeline P -i IN -o OUT [extra...]`.
cktest::RunResult convert(const std::string& pipeline, const std::filesystem::path& in,
                          const std::filesystem::path& out,
                          const std::vector<std::string>& extra = {});

std::filesystem::path sample();  // examples/micro-llama-q4_k_m.gguf

}  // namespace gltest
