// A plugin of the right ABI version whose descriptor claims to end after struct_size (8 bytes),
// as if built against headers that had fewer fields. The host must skip it after reading
// struct_size, before it reads the flags, the fingerprint or anything else: every entry point
// here aborts the process.
#include <cstddef>

#include "ck/plugin.hpp"
#include "never_called.hpp"

namespace {

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_ABI_VERSION,
    offsetof(ck_plugin_descriptor, flags),
    0,
    CK_PLUGIN_TOOLCHAIN,
    CK_STAGE_READER | CK_STAGE_TRANSFORM | CK_STAGE_WRITER,
    "small_descriptor",
    "1.0.0",
    "struct_size too small on purpose",
    NEVER_CALLED_OPTIONS_AND_ENTRY_POINTS,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
