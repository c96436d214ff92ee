// Every `ckhost.*` metadata key: what it means, which stage sets it, which writers can store
// what it describes. A stage that changes what tensor bytes mean (padded heads, u8 codes in an
// i8 tensor) records it under `ckhost.`; a writer that does not understand such a key would
// write a file that looks valid and is wrong, so the host refuses the conversion before
// anything is written unless the writer declares the key (Writer::understood_keys).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ck::conventions {

inline constexpr std::string_view ckhost_prefix = "ckhost.";

// headpack: the padded head size (u32, elements) of the attn_q/k/v rows it produced; set only
// when it padded. Absent: the rows are unpadded.
inline constexpr std::string_view aligned_head_dim_key = "ckhost.headpack.aligned_head_dim";

// repack: `ckhost.repack.X` = "int8-minmax-128" | "nf4-absmax-64" says that tensor X holds
// u8 codes (stored as i8) with a scales tensor beside it (ck/conventions/repacked.hpp).
inline constexpr std::string_view repack_prefix = "ckhost.repack.";

struct CkhostKey {
    std::string_view key;  // a full key, or a prefix ending in '.'
    std::string_view set_by;
    std::string_view meaning;
    std::string_view writers;  // the built-in writers that store it faithfully
};

inline constexpr CkhostKey ckhost_keys[] = {
    {aligned_head_dim_key, "headpack", "attention heads are padded with zero rows", "bump"},
    {repack_prefix, "repack", "the tensor holds web-rwkv u8 codes stored as i8, with scales",
     "safetensors"},
};

// True when `key` is `pattern`, or starts with it when `pattern` ends in '.'.
inline bool key_matches(std::string_view key, std::string_view pattern) {
    return pattern.ends_with('.') ? key.starts_with(pattern) : key == pattern;
}

// The table entry of a ckhost key, or nullptr for a key no stage of ckhost sets.
inline const CkhostKey* find_ckhost_key(std::string_view key) {
    for (const CkhostKey& k : ckhost_keys)
        if (key_matches(key, k.key)) return &k;
    return nullptr;
}

}  // namespace ck::conventions
