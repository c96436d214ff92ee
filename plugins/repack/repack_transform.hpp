// RepackTransform: `repack[to=int8|nf4,only=GLOB,skip=GLOB]`. Every qualifying 2-D weight X
// becomes X (codes) followed by X.minmax or X.absmax (repacked_tensors.hpp); everything else
// passes through untouched, and the report says which tensors were repacked, how accurately,
// and which were not and why.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ck/kernels/repack.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"
#include "repack_report.hpp"

namespace ckplugin::repack {
using namespace ck;

class RepackTransform final : public Transform {
  public:
    // Repacks with the plugin's kernel table (the best this CPU runs, or what --isa allows).
    RepackTransform(const Options& options, Context& context);
    ModelHeader plan(const ModelHeader& in) override;
    TensorView apply(std::size_t index, const Upstream& upstream) override;
    // Each repacked weight's codes and scales: one computation gives both.
    std::vector<TensorGroup> groups() const override;
    std::vector<TensorView> apply_group(const TensorGroup& members,
                                        const Upstream& upstream) override;

  private:
    enum class Role { pass, codes, scales };
    struct Output {
        std::size_t source;  // index in the input header
        Role role;
        std::size_t job;  // index into jobs_ for codes/scales
    };
    struct Job {
        std::string name;
        std::uint32_t from;
        std::uint64_t elements;
        std::uint64_t source_bytes;
        kernels::RepackFn kernel;
        bool measured = false;  // accuracy recorded (a recomputation must not count twice)
    };
    struct Result {
        TensorView codes, scales;
    };

    // Why tensor `t` is not repacked, or nullopt when it is.
    std::optional<SkipReason> reason_to_skip(const TensorInfo& t, const ModelHeader& in) const;
    Result repack(std::size_t job_index, const TensorView& source);

    kernels::RepackTarget target_;
    TensorFilter filter_;
    const kernels::RepackTable& kernels_;
    std::string source_file_;
    std::vector<Output> outputs_;
    std::vector<Job> jobs_;
    // Tensors are repacked on several threads at once: the report and the jobs' `measured`
    // flags are shared.
    std::mutex report_mutex_;
    RepackReport report_;
};

}  // namespace ckplugin::repack
