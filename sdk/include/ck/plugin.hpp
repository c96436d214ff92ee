// The plugin descriptor: a plain C struct the host reads, and checks the ABI version of,
// before it touches any C++ type of the plugin. Every plugin exports exactly one function,
// `ckhost_plugin_descriptor`, returning a pointer to a static descriptor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/export.hpp"

// Bump whenever anything a plugin sees changes layout or meaning: this struct, the stage
// interfaces, ModelHeader, Metadata, TensorView, Options, Context, OutputSet, Error.
#define CK_PLUGIN_ABI_VERSION 1u
#define CK_PLUGIN_DESCRIPTOR_SYMBOL "ckhost_plugin_descriptor"

namespace ck {
class Reader;
class Transform;
class Writer;
class Options;
class Context;
}  // namespace ck

extern "C" {

enum ck_stage_kind : std::uint32_t {
    CK_STAGE_READER = 1u,
    CK_STAGE_TRANSFORM = 2u,
    CK_STAGE_WRITER = 4u,
};

struct ck_option_descriptor {
    const char* name;
    std::uint32_t stages;       // which of the plugin's stage kinds take it (ck_stage_kind bits)
    const char* default_value;  // shown in help; nullptr when there is none
    const char* choices;        // "f32|f16|bf16" when the value is one of a list; else nullptr
    const char* help;
};

struct ck_plugin_descriptor {
    std::uint32_t abi_version;  // first field, read before anything else: CK_PLUGIN_ABI_VERSION
    std::uint32_t stages;       // ck_stage_kind bits
    const char* name;           // the stage name in pipelines; equals the library's base name
    const char* version;
    const char* summary;
    const ck_option_descriptor* options;
    std::size_t option_count;
    // Readers: does the file start like ours? (`inspect`/`verify` pick a reader by this.)
    bool (*probe)(const unsigned char* head, std::size_t size, const char* path);
    ck::Reader* (*create_reader)(const ck::Options& options, ck::Context& context);
    ck::Transform* (*create_transform)(const ck::Options& options, ck::Context& context);
    ck::Writer* (*create_writer)(const ck::Options& options, ck::Context& context);
    // The kernel variant the plugin selected on this CPU ("avx2"); nullptr if it has no kernels.
    const char* (*kernel_variant)(void);
};

typedef const ck_plugin_descriptor* (*ck_plugin_descriptor_fn)(void);

}  // extern "C"
