// The plugin descriptor: a plain C struct the host reads, and checks, before it touches any C++
// type of the plugin. Every plugin exports exactly one function, `ckhost_plugin_descriptor`,
// returning a pointer to a static descriptor, whose first fields are written by one macro:
//
//   const ck_plugin_descriptor descriptor = {
//       CK_PLUGIN_DESCRIPTOR_HEAD(0),  // abi_version, struct_size, flags, toolchain
//       CK_STAGE_WRITER, "myformat", ...
//   };
//
// Most plugins do not write the struct field by field: ck::describe_plugin (below) fills it from
// the plugin's identity, its options and the entry points it has, and CK_PLUGIN_ENTRY defines the
// exported function:
//
//   const ck_plugin_descriptor descriptor = ck::describe_plugin(
//       {"myformat", "1.0.0", "what it does"}, options,
//       {.create_writer = ck::writer_factory<MyWriter>});
//   CK_PLUGIN_ENTRY(descriptor)
//
// The host checks, in this order, reading nothing else until each check passes:
//   1. abi_version == CK_PLUGIN_ABI_VERSION (the only field every ABI version has);
//   2. struct_size covers every field this host reads (fields are only ever appended, so a
//      plugin built against later headers of the same ABI version is still understood);
//   3. toolchain equals the host's own: same standard library, same dual ABI, same compiler
//      family and major version (the stage interfaces are C++ classes).
// A plugin failing any of them is listed by `ckhost plugins` as skipped, with the reason, and
// never called.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ck/export.hpp"

// Bump whenever anything a plugin sees changes layout or meaning: this struct, the stage
// interfaces, ModelHeader, Metadata, TensorView, Options, Context, OutputSet, Error.
// tests/unit/test_abi_layout.cpp pins those layouts; libcksdk's SOVERSION follows this number.
#define CK_PLUGIN_ABI_VERSION 6u
#define CK_PLUGIN_DESCRIPTOR_SYMBOL "ckhost_plugin_descriptor"

// The toolchain fingerprint's values, as the including translation unit is compiled. Clang
// defines __GNUC__ too, so it is tested first. (<cstdint> above defined the library macros.)
#define CK_TOOLCHAIN_STDLIB_OTHER 0u
#define CK_TOOLCHAIN_STDLIB_LIBSTDCXX 1u
#define CK_TOOLCHAIN_STDLIB_LIBCXX 2u
#define CK_TOOLCHAIN_COMPILER_OTHER 0u
#define CK_TOOLCHAIN_COMPILER_GCC 1u
#define CK_TOOLCHAIN_COMPILER_CLANG 2u

#if defined(_LIBCPP_VERSION)
#define CK_TOOLCHAIN_STDLIB CK_TOOLCHAIN_STDLIB_LIBCXX
#define CK_TOOLCHAIN_STDLIB_ABI _LIBCPP_ABI_VERSION
#elif defined(__GLIBCXX__)
#define CK_TOOLCHAIN_STDLIB CK_TOOLCHAIN_STDLIB_LIBSTDCXX
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define CK_TOOLCHAIN_STDLIB_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define CK_TOOLCHAIN_STDLIB_ABI 0
#endif
#else
#define CK_TOOLCHAIN_STDLIB CK_TOOLCHAIN_STDLIB_OTHER
#define CK_TOOLCHAIN_STDLIB_ABI 0
#endif

#if defined(__clang__)
#define CK_TOOLCHAIN_COMPILER CK_TOOLCHAIN_COMPILER_CLANG
#define CK_TOOLCHAIN_COMPILER_MAJOR __clang_major__
#elif defined(__GNUC__)
#define CK_TOOLCHAIN_COMPILER CK_TOOLCHAIN_COMPILER_GCC
#define CK_TOOLCHAIN_COMPILER_MAJOR __GNUC__
#else
#define CK_TOOLCHAIN_COMPILER CK_TOOLCHAIN_COMPILER_OTHER
#define CK_TOOLCHAIN_COMPILER_MAJOR 0
#endif

// clang-format off
// The fingerprint of the toolchain compiling this translation unit (a ck_plugin_toolchain).
#define CK_PLUGIN_TOOLCHAIN                                                                  \
    { CK_TOOLCHAIN_STDLIB, static_cast<std::uint32_t>(CK_TOOLCHAIN_STDLIB_ABI),              \
      CK_TOOLCHAIN_COMPILER, static_cast<std::uint32_t>(CK_TOOLCHAIN_COMPILER_MAJOR) }

// The first four fields of a descriptor: abi_version, struct_size, flags (ck_plugin_flag bits,
// 0 for none) and the toolchain fingerprint.
#define CK_PLUGIN_DESCRIPTOR_HEAD(flags)                                                     \
    CK_PLUGIN_ABI_VERSION, static_cast<std::uint32_t>(sizeof(ck_plugin_descriptor)),         \
    static_cast<std::uint64_t>(flags), CK_PLUGIN_TOOLCHAIN
// clang-format on

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

// Bits of ck_plugin_descriptor::flags. The host ignores bits it does not know.
enum ck_plugin_flag : std::uint64_t {
    // Reader::tensor, Transform::apply and Transform::apply_group of one stage object may run
    // on several threads at once, for different tensors or the same one; so may calls on
    // different objects of the plugin. The host then computes tensors ahead on the pool while
    // the writer writes (writers are always called from one thread, in order). Leave it unset
    // unless that is true: without it the host makes every call from one thread, in turn.
    CK_PLUGIN_FLAG_CONCURRENT = 1u,
    // The writer writes one file front to back: it only appends (never OutputFile::write_at,
    // never reads back what it wrote), so that file can go to a pipe as it is written
    // (`-o -`). The host then hands prepare() the destination "-", requires outputs() to be
    // exactly {"-"} (a writer that makes several files for some options, like gguf's split
    // sets, is refused for those) and refuses write_at. Without the flag `-o -` is refused
    // before anything is read. A bit a host does not know is ignored, so declaring it needs no
    // new ABI version.
    CK_PLUGIN_FLAG_STREAMS = 2u,
};

// What the plugin was compiled with; filled in by CK_PLUGIN_TOOLCHAIN, never by hand.
struct ck_plugin_toolchain {
    std::uint32_t stdlib;          // CK_TOOLCHAIN_STDLIB_* (libstdc++, libc++, other)
    std::uint32_t stdlib_abi;      // libstdc++: _GLIBCXX_USE_CXX11_ABI; libc++: _LIBCPP_ABI_VERSION
    std::uint32_t compiler;        // CK_TOOLCHAIN_COMPILER_* (GCC, Clang, other)
    std::uint32_t compiler_major;  // __GNUC__ or __clang_major__
};

// Fields are only ever appended (struct_size tells the host which exist); changing or removing
// one means a new CK_PLUGIN_ABI_VERSION.
struct ck_plugin_descriptor {
    std::uint32_t abi_version;  // first field, read before anything else: CK_PLUGIN_ABI_VERSION
    std::uint32_t struct_size;  // sizeof(ck_plugin_descriptor) as the plugin was compiled
    std::uint64_t flags;        // ck_plugin_flag bits
    ck_plugin_toolchain toolchain;
    std::uint32_t stages;  // ck_stage_kind bits
    const char* name;      // the stage name in pipelines; equals the library's base name
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
    // `ckhost help STAGE`'s examples, one conversion a line as "PIPELINE INPUT OUTPUT" (the
    // pipeline may hold spaces, the file names may not), e.g. "gguf:quantize[mix=q4_k_m]:gguf
    // model-f16.gguf model-q4_k_m.gguf"; nullptr when the plugin gives none. The last field:
    // the host reads it only when struct_size covers it.
    const char* examples = nullptr;
};

typedef const ck_plugin_descriptor* (*ck_plugin_descriptor_fn)(void);

}  // extern "C"

// The plugin's one exported function, returning `descriptor`.
#define CK_PLUGIN_ENTRY(descriptor)                                           \
    CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() { \
        return &(descriptor);                                                 \
    }

// The same for a plugin with work to do when it is loaded (choosing its kernel variants, which
// follow --isa): `on_load` is called, then `descriptor` returned. `on_load` is anything callable
// with no arguments, its result ignored, so a plugin that only needs a kernel table chosen names
// the table's getter (ck::kernels::plugin_dequant_table) rather than wrapping it. No plugin
// writes the exported function by hand.
#define CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, on_load)                        \
    CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() { \
        on_load();                                                            \
        return &(descriptor);                                                 \
    }

namespace ck {

// Constructs a stage from whichever of (options, context), (context), (options) or () its
// constructor takes: the factories below need no lambda per plugin.
template <class Stage>
Stage* construct_stage(const Options& options, Context& context) {
    if constexpr (std::is_constructible_v<Stage, const Options&, Context&>)
        return new Stage(options, context);
    else if constexpr (std::is_constructible_v<Stage, Context&>)
        return new Stage(context);
    else if constexpr (std::is_constructible_v<Stage, const Options&>)
        return new Stage(options);
    else
        return new Stage();
}

// Values for the descriptor's create_* fields: `ck::reader_factory<MyReader>`.
template <class Stage>
Reader* reader_factory(const Options& options, Context& context) {
    return construct_stage<Stage>(options, context);
}
template <class Stage>
Transform* transform_factory(const Options& options, Context& context) {
    return construct_stage<Stage>(options, context);
}
template <class Stage>
Writer* writer_factory(const Options& options, Context& context) {
    return construct_stage<Stage>(options, context);
}

// Rows of a plugin's option table for the two kinds most options are, so that a table says
// what each option takes instead of spelling out the nullptr fields: {value_option("map",
// CK_STAGE_WRITER, "where to write it"), switch_option("strict", CK_STAGE_WRITER, "refuse
// ..."), {"to", CK_STAGE_TRANSFORM, "f32", "f32|f16", "target type"}}. An option with a default
// or a list of choices is written out as a whole row.

// A free value (a path, a pattern, a number, KEY=VALUE) with no default shown in help.
constexpr ck_option_descriptor value_option(const char* name, std::uint32_t stages,
                                            const char* help) {
    return {name, stages, nullptr, nullptr, help};
}

// An on/off switch, off unless given; read with Options::get_bool(name, false).
constexpr ck_option_descriptor switch_option(const char* name, std::uint32_t stages,
                                             const char* help) {
    return {name, stages, "0", nullptr, help};
}

// Who the plugin is: its stage name (equal to the library's base name), version and summary,
// and the examples `ckhost help NAME` shows (ck_plugin_descriptor::examples).
struct PluginIdentity {
    const char* name;
    const char* version;
    const char* summary;
    const char* examples = nullptr;
};

// What the plugin implements; every field may stay null. The descriptor's stage kinds are
// derived from the create_* fields, so they cannot disagree.
struct PluginEntryPoints {
    bool (*probe)(const unsigned char* head, std::size_t size, const char* path) = nullptr;
    Reader* (*create_reader)(const Options& options, Context& context) = nullptr;
    Transform* (*create_transform)(const Options& options, Context& context) = nullptr;
    Writer* (*create_writer)(const Options& options, Context& context) = nullptr;
    const char* (*kernel_variant)(void) = nullptr;
    std::uint64_t flags = 0;  // ck_plugin_flag bits; 0: not declared safe for concurrent calls
};

// A complete descriptor, its head (ABI version, size, toolchain) filled as this translation
// unit is compiled.
constexpr ck_plugin_descriptor describe_plugin(const PluginIdentity& who,
                                               const PluginEntryPoints& entry,
                                               const ck_option_descriptor* options = nullptr,
                                               std::size_t option_count = 0) {
    const std::uint32_t stages = (entry.create_reader ? CK_STAGE_READER : 0u) |
                                 (entry.create_transform ? CK_STAGE_TRANSFORM : 0u) |
                                 (entry.create_writer ? CK_STAGE_WRITER : 0u);
    return {CK_PLUGIN_DESCRIPTOR_HEAD(entry.flags),
            stages,
            who.name,
            who.version,
            who.summary,
            options,
            option_count,
            entry.probe,
            entry.create_reader,
            entry.create_transform,
            entry.create_writer,
            entry.kernel_variant,
            who.examples};
}

// The same, with the plugin's option table.
template <std::size_t N>
constexpr ck_plugin_descriptor describe_plugin(const PluginIdentity& who,
                                               const ck_option_descriptor (&options)[N],
                                               const PluginEntryPoints& entry) {
    return describe_plugin(who, entry, options, N);
}

}  // namespace ck
