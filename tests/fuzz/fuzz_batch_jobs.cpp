// The jobs file of `ckhost batch`: text (`PIPELINE INPUT OUTPUT` lines split as a shell would)
// or, when the first non-blank character is '[', a JSON array of {pipeline, input, output}.
// Each job's pipeline is then parsed, as the batch does when it plans the job.
#include <cstddef>
#include <cstdint>

#include "batch/batch_jobs.hpp"
#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "pipeline/pipeline_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        for (const auto& job : ckhost::parse_jobs(ckfuzz::as_text(data, size), "jobs.txt")) {
            try {
                ckhost::parse_pipeline(job.pipeline);
            } catch (const ck::Error&) {
                // that job fails; the batch goes on with the others
            }
        }
    } catch (const ck::Error&) {
        // a malformed jobs file: exit 2 before anything runs
    }
    return 0;
}
