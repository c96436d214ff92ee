// The <arch>.* keys and general.file_type of a checkpoint, computed from config.json by the
// key rules of its architecture description, in the converter's order.
#pragma once

#include <cstdint>

#include "architectures.hpp"
#include "ck/metadata.hpp"
#include "hf_config.hpp"

namespace ckplugin::hf {

// Throws ck::Error naming the config key when a required one is missing or malformed.
void add_architecture_keys(const Architecture& architecture, const Hparams& hp,
                           std::uint32_t file_type, ck::Metadata& metadata);

// Refuses (ck::Error naming the key) a rope_scaling type the family's converter class does not
// take, and keys the class asserts unset.
void check_config(const Architecture& architecture, const Hparams& hp);

}  // namespace ckplugin::hf
