// The human-readable form of `ckhost inspect`: aligned tables of metadata and tensors, element
// and parameter counts, long values cut (in full with --kv), shapes as the file states them and
// repacked tensors named as what they hold. Kept apart from inspect.cpp, whose JSON is a
// contract of its own.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "ck/model.hpp"

namespace ckhost {

// What a tensor holds when the metadata says it is repacked (ck/conventions/repacked.hpp):
// codes of an Int8 or NF4 weight, or their scales.
struct RepackRole {
    std::string format;     // "int8" or "nf4"; empty when the tensor is not part of a pair
    bool is_codes = false;  // the u8 codes (stored as i8); otherwise the f16 scales
    std::string partner;    // the other tensor of the pair
};

// One role per tensor of `h`, in order.
std::vector<RepackRole> repack_roles(const ck::ModelHeader& h);

// The weights a model has: every tensor's elements, except that a repacked pair counts as the
// weight it encodes (NF4 codes hold two values a byte; the scales are no weights).
std::uint64_t parameter_count(const ck::ModelHeader& h);

// Whether the reader converts a tensor on read (TensorInfo::stored_type: GGUF-lite's Q8/Q4,
// handed out as F32), and the bytes the file holds for the tensors, stored types counted as
// stored.
bool converts_on_read(const ck::ModelHeader& h);
std::uint64_t stored_tensor_bytes(const ck::ModelHeader& h);

// "19,529,728".
std::string with_thousands(std::uint64_t n);

// True when the reader's format states shapes outermost first (PyTorch order: safetensors,
// GGUF-lite), so inspect shows them as the file has them rather than in ggml's ne order.
bool shapes_outermost_first(std::string_view format);

struct TextInspectOptions {
    std::string file;    // as the user gave it, for the --kv hint
    std::string format;  // the reader plugin's name
    bool tensors = false;
    std::string file_type_label;    // "15 (MOSTLY_Q4_K_M)", or empty
    std::string file_type_problem;  // a line under general.file_type, or empty
    std::string file_type_missing;  // "general.file_type is not stored; ...", or empty
    // What a reader got through before it failed (Reader::read_before_failure): said on the
    // first line and in the counts, and a tensor not yet placed has no offset.
    bool partial = false;
};

void print_inspect_text(const ck::ModelHeader& h, const TextInspectOptions& options,
                        std::ostream& out);

// `--kv KEY` in text: a string as it is (a chat template reads as a template), other scalars as
// inspect shows them, arrays one element per line.
void print_full_value(const ck::Value& v, std::ostream& out);

}  // namespace ckhost
