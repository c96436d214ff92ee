// A plugin compiled with -D_GLIBCXX_USE_CXX11_ABI=0 (tests/plugins/CMakeLists.txt): libstdc++'s
// old std::string and std::list, which the host's cannot be mixed with. The descriptor is the
// ordinary one; CK_PLUGIN_DESCRIPTOR_HEAD must notice the setting by itself, and the host must
// skip the plugin and never call anything else: every entry point here aborts the process.
#include "ck/plugin.hpp"
#include "never_called.hpp"

namespace {

#if defined(__GLIBCXX__)
static_assert(CK_TOOLCHAIN_STDLIB_ABI == 0, "built without -D_GLIBCXX_USE_CXX11_ABI=0");
#else
#error "this test plugin needs libstdc++ (its dual ABI is what it tests)"
#endif

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),
    CK_STAGE_READER | CK_STAGE_TRANSFORM | CK_STAGE_WRITER,
    "old_string_abi",
    "1.0.0",
    "built with libstdc++'s old string ABI on purpose",
    NEVER_CALLED_OPTIONS_AND_ENTRY_POINTS,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
