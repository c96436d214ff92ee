// Stage options as ckhost checks them: the input is a --pipeline argument, resolved against the
// real plugins of this build (loaded once, from CKHOST_FUZZ_PLUGIN_DIR). Pipeline's constructor
// checks each stage's kind and options against the plugin's option descriptors (unknown names,
// values outside the declared choices) and then creates every stage, so each plugin's own
// option parsing runs: ck::Options' typed getters, quantize's mixtures and types, gguf's split
// sizes, headpack's alignment, bump's context, GGUF-lite's schemes, the tensor filters' globs,
// meta's typed values, key names and regular expressions. Nothing is opened or written:
// Pipeline::plan is never called.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "pipeline/pipeline.hpp"
#include "registry/plugin_registry.hpp"

namespace {

ckhost::PluginRegistry& registry() {
    // Only this build's plugins: CKHOST_PLUGIN_PATH would add others.
    static ckhost::PluginRegistry* plugins = [] {
        ::unsetenv("CKHOST_PLUGIN_PATH");
        // Never destroyed: ckhost never unloads a plugin either.
        auto* r = new ckhost::PluginRegistry({CKHOST_FUZZ_PLUGIN_DIR});
        r->load_all();  // before fuzzing starts, so the fuzzer sees every plugin's coverage
        return r;
    }();
    return *plugins;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    registry();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        ckhost::Pipeline pipeline(registry(), std::string(ckfuzz::as_text(data, size)));
    } catch (const ck::Error&) {
        // usage errors (exit 2), as ckhost reports them
    }
    return 0;
}
