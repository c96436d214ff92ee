// A test-only transform: passes tensors through, and on request fails at tensor N (with a
// ck::Error, a foreign std::exception, or a non-exception object), sleeps per tensor, or
// truncates the pipeline's input file just before handing out tensor N, so the host's failure,
// cleanup, Ctrl-C and changed-input paths can be exercised on real conversions.
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "ck/error.hpp"
#include "ck/plugin.hpp"
#include "ck/stage.hpp"

namespace {

class Testkit final : public ck::Transform {
  public:
    Testkit(const ck::Options& o, ck::Context& context)
        : fail_at_(o.get_u64("fail_at", UINT64_MAX)),
          fail_with_(o.get("fail_with", "std")),
          sleep_ms_(o.get_u64("sleep_ms", 0)),
          fail_in_plan_(o.get_bool("fail_in_plan", false)),
          truncate_at_(o.get_u64("truncate_at", UINT64_MAX)),
          truncate_to_(o.get_u64("truncate_to", 0)),
          report_(o.get("report")),
          context_(context) {}

    ck::ModelHeader plan(const ck::ModelHeader& in) override {
        if (fail_in_plan_) throw std::logic_error("testkit refuses to plan");
        source_ = in.source;
        if (report_ == "garbage") context_.report("testkit", "{not json");
        if (report_ == "valid") {
            context_.report("testkit", R"({"ok": true})");
            context_.note("testkit: planned " + std::to_string(in.tensors.size()) + " tensors");
        }
        return in;
    }

    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override {
        if (sleep_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
        if (index == fail_at_) {
            if (fail_with_ == "ck")
                throw ck::Error("testkit failed on purpose", {}, {},
                                "tensor " + std::to_string(index));
            if (fail_with_ == "int") throw 42;
            throw std::runtime_error("testkit threw a std::runtime_error on purpose");
        }
        if (index == truncate_at_ && ::truncate(source_.c_str(), static_cast<off_t>(truncate_to_)))
            throw ck::Error("testkit could not truncate its input", source_);
        return upstream(index);
    }

  private:
    std::uint64_t fail_at_;
    std::string fail_with_;
    std::uint64_t sleep_ms_;
    bool fail_in_plan_;
    std::uint64_t truncate_at_;
    std::uint64_t truncate_to_;
    std::string source_;
    std::string report_;
    ck::Context& context_;
};

const ck_option_descriptor options[] = {
    {"fail_at", CK_STAGE_TRANSFORM, nullptr, nullptr, "throw while producing tensor N"},
    {"fail_with", CK_STAGE_TRANSFORM, "std", "std|ck|int", "what to throw"},
    {"sleep_ms", CK_STAGE_TRANSFORM, "0", nullptr, "sleep before each tensor"},
    {"fail_in_plan", CK_STAGE_TRANSFORM, "0", nullptr, "throw a std::logic_error from plan()"},
    {"truncate_at", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "truncate the input file before handing out tensor N"},
    {"truncate_to", CK_STAGE_TRANSFORM, "0", nullptr, "the size truncate_at leaves"},
    {"report", CK_STAGE_TRANSFORM, nullptr, "garbage|valid", "report a JSON value from plan()"},
};

const ck_plugin_descriptor descriptor =
    ck::describe_plugin({"testkit", "0.0.1", "test-only pass-through transform"}, options,
                        {.create_transform = ck::transform_factory<Testkit>});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
