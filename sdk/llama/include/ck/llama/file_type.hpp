// llama.cpp's file types (`llama_ftype`, stored as general.file_type): their names, the ggml
// type each one is "mostly", how llama.cpp's loader names a file from its tensors' types, and
// the rule ckhost applies after every transform so that the key stays true.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ck/ggml_types.hpp"
#include "ck/model.hpp"

namespace ck::llama {

inline constexpr std::string_view file_type_key = "general.file_type";
inline constexpr std::string_view quantization_version_key = "general.quantization_version";
// GGML_QNT_VERSION: the version of the quantized block layouts. llama-quantize and
// convert_hf_to_gguf.py write it with every file, quantized or not.
inline constexpr std::uint32_t quantization_version = 2;

// llama.h's enum llama_ftype (ids 4-6 and 33-35 were removed from llama.cpp).
enum class FileType : std::uint32_t {
    all_f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    q8_0 = 7,
    q5_0 = 8,
    q5_1 = 9,
    q2_k = 10,
    q3_k_s = 11,
    q3_k_m = 12,
    q3_k_l = 13,
    q4_k_s = 14,
    q4_k_m = 15,
    q5_k_s = 16,
    q5_k_m = 17,
    q6_k = 18,
    iq2_xxs = 19,
    iq2_xs = 20,
    q2_k_s = 21,
    iq3_xs = 22,
    iq3_xxs = 23,
    iq1_s = 24,
    iq4_nl = 25,
    iq3_s = 26,
    iq3_m = 27,
    iq2_s = 28,
    iq2_m = 29,
    iq4_xs = 30,
    iq1_m = 31,
    bf16 = 32,
    tq1_0 = 36,
    tq2_0 = 37,
    mxfp4_moe = 38,
    nvfp4 = 39,
    q1_0 = 40,
    q2_0 = 41,
};

// The ggml type id that stands for "no type" in the table below.
inline constexpr std::uint32_t no_ggml_type = ggml_type_count;

struct FileTypeInfo {
    FileType id;
    std::string_view name;  // the enumerator without LLAMA_FTYPE_: "MOSTLY_Q4_K_M", "ALL_F32"
    // llama_ftype_get_default_type: the ggml type most tensors get (Q4_K for Q4_K_S and
    // Q4_K_M); no_ggml_type for NVFP4, which llama-quantize does not make.
    std::uint32_t default_type;
};

// Every file type llama.cpp knows today, by id.
std::span<const FileTypeInfo> file_types() noexcept;
const FileTypeInfo* find_file_type(std::uint32_t id) noexcept;
// "15 (MOSTLY_Q4_K_M)"; "4 (no llama.cpp name)" for an id llama.cpp does not know.
std::string file_type_label(std::uint32_t id);
// The file type llama.cpp's loader names a file mostly of ggml type `type` (the switch in
// llama_model_loader's constructor: Q4_K -> MOSTLY_Q4_K_M, Q3_K -> MOSTLY_Q3_K_M, ...); nullopt
// for the types it has no name for (Q8_1, Q8_K, MXFP4, the integer types, F64).
std::optional<FileType> loader_file_type(std::uint32_t type) noexcept;

// What a header's tensor types say its file type is.
struct FileTypeGuess {
    std::uint32_t most_common_type = 0;  // ggml type id of the most tensors (F32 when none)
    std::size_t count = 0;               // how many tensors have it
    std::size_t counted = 0;             // how many tensors were counted
    std::optional<FileType> file_type;   // loader_file_type(most_common_type)
};

// llama.cpp's loader guess, for a file without general.file_type: count tensors (not elements)
// per type, the type of the most tensors wins, ties going to the type that reached the count
// first in the loader's order (loader_order_less). One difference, on purpose: tensors of one
// dimension (norms, biases: F32 in every file llama.cpp writes) are counted only when the
// header has no tensor of two or more. llama.cpp counts them too, so it calls a model with
// many biases (phi-2 has six 1-D tensors per layer and four matrices) ALL_F32 even when
// llama-quantize made it Q4_K_M; its own enum documents every file type "except 1d tensors".
// Both rules agree on every llama-family file.
FileTypeGuess guess_file_type(const ModelHeader& header);

// Whether `stored` is a fair name for what `guess` saw: its default type is the most common
// type (Q4_K_S and Q4_K_M both fit a file mostly of Q4_K, which the types alone cannot tell
// apart), or it is the loader's own name for that type.
bool file_type_fits(std::uint32_t stored, const FileTypeGuess& guess);

// Whether `stored`, a file type llama.cpp knows, says something the tensors contradict, which
// `verify` fails: it does not fit (file_type_fits), unless it names a quantized mixture and the
// tensors are mostly another quantized type, as llama-quantize's own files are when rows fit no
// K block or --tensor-type overrides the mixture (inspect still says so). An id llama.cpp does
// not know cannot be checked: false.
bool file_type_contradicts(std::uint32_t stored, const FileTypeGuess& guess);

// general.file_type as an unsigned integer; nullopt when absent or not a non-negative integer.
std::optional<std::uint32_t> stored_file_type(const Metadata& metadata);

// What keep_file_type_true did to a header, for the host's notes.
struct FileTypeUpdate {
    bool changed = false;  // the metadata was changed
    std::string note;      // what and why, when changed
};

// The rule ckhost applies after every transform's plan(), `before` being its input header and
// `after` its output. Nothing happens unless the tensors' types changed (a tensor's type, or
// tensors added or removed). Then:
// - general.file_type: a stage that changed the key itself is trusted (quantize knows it made
//   Q4_K_S, which the types cannot tell from Q4_K_M). Otherwise a stored value that still
//   fits the tensors (file_type_fits) is kept; one that does not is replaced by llama.cpp's
//   name for the new mix (guess_file_type), or removed when llama.cpp has no name for it (a
//   number it would misread is worse than none). An absent key is added when llama.cpp has
//   a name, as llama.cpp's converters and llama-quantize always write one.
// - general.quantization_version: set to 2 when absent and a tensor is quantized; otherwise
//   left alone (llama.cpp's tools write 2 in unquantized files too).
FileTypeUpdate keep_file_type_true(const ModelHeader& before, ModelHeader& after);

// The same rule for a reader's header whose tensors the reader converts on read (a tensor
// with a TensorInfo::stored_type: GGUF-lite's Q8/Q4, read as F32): the file's key named what
// the file stores, a conversion hands out other types, so the key is made to fit those (kept,
// replaced or removed as above). Nothing happens for a header without the key (nothing is
// claimed, and a reader's header gains no keys) or whose tensors are handed out as stored.
// The host applies it right after Reader::open.
FileTypeUpdate name_file_type_as_read(ModelHeader& header);

}  // namespace ck::llama
