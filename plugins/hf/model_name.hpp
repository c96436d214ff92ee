// general.name and general.size_label as llama.cpp's converter (gguf-py's metadata.py) makes
// them when the checkpoint has no model card: the folder name in title case, and the parameter
// count in rounded notation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ckplugin::hf {

// "llama-bf16" -> "Llama Bf16": '-' becomes a space; an all-lowercase word is title-cased
// (Python's str.title, ASCII letters) unless it is a version ("v1.0") or starts with a digit.
std::string title_from_folder(std::string_view folder);

// 2086144 -> "2.1M", 1100048384 -> "1.1B": gguf-py's model_weight_count_rounded_notation with
// two significant digits at least.
std::string size_label(std::uint64_t parameters);

}  // namespace ckplugin::hf
