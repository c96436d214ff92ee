// A plugin built for another ABI version. The host must skip it after reading abi_version and
// never call anything else: every entry point here aborts the process.
#include <cstdlib>

#include "ck/plugin.hpp"

namespace {

const ck_plugin_descriptor descriptor = {
    999u,
    CK_STAGE_READER | CK_STAGE_TRANSFORM | CK_STAGE_WRITER,
    "bad_abi",
    "9.9.9",
    "wrong ABI on purpose",
    nullptr,
    0,
    [](const unsigned char*, std::size_t, const char*) -> bool { std::abort(); },
    [](const ck::Options&, ck::Context&) -> ck::Reader* { std::abort(); },
    [](const ck::Options&, ck::Context&) -> ck::Transform* { std::abort(); },
    [](const ck::Options&, ck::Context&) -> ck::Writer* { std::abort(); },
    []() -> const char* { std::abort(); },
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
