// What llama.cpp's --check-tensors checks in tensor data (ggml_validate_row_data): every
// element of the float types and the scale fields of every block of the quantized ones, for
// NaN and infinities. `ckhost verify --data` runs it on every tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ck::kernels {

// How a block stores a scale.
enum class ScaleEncoding : std::uint8_t {
    f16,      // an IEEE half
    f32,      // an IEEE single (Q8_K)
    e8m0,     // an exponent byte, 0xff meaning NaN (MXFP4)
    iq1m_f16  // IQ1_M: an f16 made of the top nibbles of four little-endian u16 at `offset`
};

struct ScaleField {
    std::uint16_t offset;  // bytes from the block's start
    ScaleEncoding encoding;
    std::string_view name;  // as a message says it: "scale d", "min m", "scale dmin"
};

// The scale fields checked in every block of ggml type `type`: ggml's choice, plus Q8_1's d
// and s (ggml refuses Q8_1 as an invalid type instead). Empty for the float types (their
// elements are checked), the integer types and NVFP4 (every byte value is valid).
std::span<const ScaleField> scale_fields(std::uint32_t type) noexcept;

struct DataProblem {
    std::uint64_t index = 0;            // the element (float types) or the block
    const ScaleField* field = nullptr;  // the block's field; nullptr for an element
    bool nan = false;                   // NaN (for E8M0, the 0xff code) rather than infinite
    std::uint64_t count = 0;            // bad elements or fields in the bytes checked, >= 1
    // "element 1234 is NaN", "block 17 scale d is Inf".
    std::string message() const;
};

// Checks `bytes`, whole elements or blocks of ggml type `type`, and returns the first bad
// value and how many there are, or nullopt when every value is finite (or the type has
// nothing to check, or is unknown). Plain loops over the bytes, spread over the pool in
// fixed pieces: the answer does not depend on the thread count.
std::optional<DataProblem> check_data(std::uint32_t type, std::span<const std::byte> bytes);

}  // namespace ck::kernels
