// Entry points for test-only plugins the host must skip after reading their descriptor's
// header: every one of them aborts the process, so a test sees a crash if the host calls any.
#pragma once

#include <cstddef>
#include <cstdlib>

#include "ck/plugin.hpp"

namespace never_called {

inline bool probe(const unsigned char*, std::size_t, const char*) {
    std::abort();
}
inline ck::Reader* create_reader(const ck::Options&, ck::Context&) {
    std::abort();
}
inline ck::Transform* create_transform(const ck::Options&, ck::Context&) {
    std::abort();
}
inline ck::Writer* create_writer(const ck::Options&, ck::Context&) {
    std::abort();
}
inline const char* kernel_variant() {
    std::abort();
}

}  // namespace never_called

// The descriptor's fields after the summary: no options, the five entry points above, and no
// examples.
#define NEVER_CALLED_OPTIONS_AND_ENTRY_POINTS                                                     \
    nullptr, 0, never_called::probe, never_called::create_reader, never_called::create_transform, \
        never_called::create_writer, never_called::kernel_variant, nullptr
