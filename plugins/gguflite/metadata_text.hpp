// GGUF-lite's metadata section: one `key=<type>:<json>` line per GGUF key-value, so every
// GGUF value type (arrays too) survives GGUF -> GGUF-lite -> GGUF; a line without a type
// prefix (`key=value`) is a plain string, so hand-written files work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ck/metadata.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// The section's text for `metadata`, each line ending in '\n'. Throws ck::Error naming the key
// for what GGUF-lite cannot hold (an empty key, a key with '=' or a newline, text that is not
// UTF-8). `notes` receives the values that read back changed: NaNs other than the canonical
// one (written "nan"), bool array bytes other than 0/1.
std::string encode_metadata(const Metadata& metadata, std::vector<std::string>& notes);

// Parses a metadata section whose first byte is at file offset `base`. Every problem is a
// ck::Error naming the file, the byte offset and the line.
Metadata parse_metadata(std::string_view text, std::uint64_t base, const std::string& file);

// True when `b` is what reading back the encoding of `a` gives: same type and value, with the
// encoding's two normalisations (canonical NaN, bool bytes 0/1).
bool same_after_round_trip(const Value& a, const Value& b);

}  // namespace ckplugin::gguflite
