// The pipeline grammar (`reader[:transform...]:writer`, options in brackets with `\,` `\]` `\\`
// escapes): the input is the --pipeline argument. A parse must either throw ck::Error or give
// stages whose names are non-empty and whose text, written back, is part of the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "pipeline/pipeline_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(ckfuzz::as_text(data, size));
    try {
        for (const auto& stage : ckhost::parse_pipeline(text)) {
            if (stage.name.empty() || text.find(stage.text) == std::string::npos ||
                !stage.text.starts_with(stage.name)) {
                std::fprintf(stderr, "parse_pipeline gave a stage '%s' not in the input\n",
                             stage.text.c_str());
                std::abort();
            }
        }
    } catch (const ck::Error&) {
        // a usage error: exit 2 in ckhost
    }
    return 0;
}
