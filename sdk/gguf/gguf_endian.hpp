// Big-endian GGUF: what changes when a GGUF file is stored in the other byte order, for the
// reader (big-endian files in, little-endian bytes out to every other stage) and the writer
// (`gguf[endian=big]`). The rules are those of gguf-py's gguf_convert_endian.py, the tool that
// makes such files: every multi-byte header, metadata and tensor-info field is reversed, and
// tensor data only for the types that script converts, field by field
// (docs/formats/gguf-endian.md). Reversing is its own inverse, so each rule serves both ways.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ck/metadata.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/output.hpp"
#include "ck/support/byte_cursor.hpp"

namespace ckplugin::gguf {
using namespace ck;
using support::ByteOrder;

// "little-endian" or "big-endian", as `ckhost inspect` shows a file's "byte order".
std::string_view byte_order_name(ByteOrder order) noexcept;

// The writer's `endian=big|little` option (little when absent; the host checked the choices).
ByteOrder byte_order_option(const Options& options);

// How one tensor type's bytes change with the byte order: in each block (ggml_types'
// block_bytes; one element for the float types) `count` fields of `width` bytes, starting at
// `offsets`, are reversed, and every other byte is single-byte data that stays as it is.
struct SwapRule {
    std::uint32_t type;
    std::uint8_t width;  // 2 or 4; unused when count is 0
    std::uint8_t count;  // 0 for the types whose blocks hold only bytes (MXFP4, NVFP4)
    std::array<std::uint16_t, 2> offsets;
};

// The rule for ggml type `type`, or nullptr when gguf_convert_endian.py does not convert it.
const SwapRule* find_swap_rule(std::uint32_t type) noexcept;
// Why a tensor of `type` cannot change byte order, listing the types that can.
std::string swap_refusal(std::uint32_t type);

// Reverses, in place, the fields `rule` names in `blocks` (a whole number of its blocks).
void swap_blocks(const SwapRule& rule, std::span<std::byte> blocks);

// A tensor of ggml type `type` (which must have a rule) in the other byte order, in a new
// buffer. The source's pages are released as they are converted, so a file-backed tensor
// costs its copy only.
TensorView swapped_copy(std::uint32_t type, const TensorView& from);

// Appends `tensor` (ggml type `type`, which must have a rule) to `file` in the other byte
// order, through a 4 MiB buffer, releasing the source's pages as it goes.
void write_swapped(OutputFile& file, std::uint32_t type, const TensorView& tensor);

// A metadata array read from a big-endian file (`from_file` views the file's bytes) in GGUF's
// little-endian encoding, which is how the rest of the product keeps arrays: a converted copy
// when its elements (or, for strings, their lengths) have more than one byte; otherwise the
// same view.
ArrayValue little_endian_array(const ArrayValue& from_file);

// Reverses, in place, every multi-byte field of the well-formed GGUF header at the start of
// `header`, written in byte order `from` (version, counts, keys' and strings' lengths, value
// types, values and array elements, tensor names' lengths, dimensions, types and offsets).
// The magic, strings, single-byte values and whatever follows the tensor infos are left alone.
void swap_header(std::span<std::byte> header, ByteOrder from);

}  // namespace ckplugin::gguf
