// A plugin built for another ABI version. The host must skip it after reading abi_version and
// never call anything else: every entry point here aborts the process.
#include "ck/plugin.hpp"
#include "never_called.hpp"

namespace {

const ck_plugin_descriptor descriptor = {
    999u,
    sizeof(ck_plugin_descriptor),
    0,
    CK_PLUGIN_TOOLCHAIN,
    CK_STAGE_READER | CK_STAGE_TRANSFORM | CK_STAGE_WRITER,
    "bad_abi",
    "9.9.9",
    "wrong ABI on purpose",
    NEVER_CALLED_OPTIONS_AND_ENTRY_POINTS,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
