// A plugin whose toolchain fingerprint names the next major version of the compiler building
// it, as if built by another compiler release. The host must skip it after comparing the
// fingerprint and never call anything else: every entry point here aborts the process.
#include "ck/plugin.hpp"
#include "never_called.hpp"

namespace {

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_ABI_VERSION,
    sizeof(ck_plugin_descriptor),
    0,
    // CK_PLUGIN_TOOLCHAIN, written out, with the compiler's major version one higher.
    {CK_TOOLCHAIN_STDLIB, CK_TOOLCHAIN_STDLIB_ABI, CK_TOOLCHAIN_COMPILER,
     CK_TOOLCHAIN_COMPILER_MAJOR + 1},
    CK_STAGE_READER | CK_STAGE_TRANSFORM | CK_STAGE_WRITER,
    "other_compiler",
    "1.0.0",
    "fingerprint of another compiler major version on purpose",
    NEVER_CALLED_OPTIONS_AND_ENTRY_POINTS,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
