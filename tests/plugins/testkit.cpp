// A test-only transform: passes tensors through, and on request fails at tensor N (with a
// ck::Error, a foreign std::exception, or a non-exception object), sleeps per tensor, or
// truncates, removes, replaces or rewrites in place the pipeline's input file just before
// handing out tensor N, so the host's failure, cleanup, Ctrl-C and changed-input paths can be
// exercised on real conversions. `retype` changes tensor types as a third-party transform
// would, without touching general.file_type, which the host must then keep true.
//
// Built twice: `testkit` does not declare CK_PLUGIN_FLAG_CONCURRENT and fails loudly if the
// host ever calls it from two threads at once; `testkit_concurrent` (TESTKIT_CONCURRENT)
// declares the flag, so the same paths run with tensors computed ahead on the pool.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
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
          remove_at_(o.get_u64("remove_input_at", UINT64_MAX)),
          replace_at_(o.get_u64("replace_input_at", UINT64_MAX)),
          rewrite_at_(o.get_u64("rewrite_input_at", UINT64_MAX)),
          report_(o.get("report")),
          groups_(o.get("groups")),
          retype_(o.get("retype")),
          context_(context) {}

    ck::ModelHeader plan(const ck::ModelHeader& in) override {
        if (fail_in_plan_) throw std::logic_error("testkit refuses to plan");
        source_ = in.source;
        tensor_count_ = in.tensors.size();
        if (report_ == "garbage") context_.report("testkit", "{not json");
        if (report_ == "valid") {
            context_.report("testkit", R"({"ok": true})");
            context_.note("testkit: planned " + std::to_string(in.tensors.size()) + " tensors");
        }
        if (retype_.empty()) return in;
        // bf16_to_f32: BF16 tensors widened exactly; q8_0_to_i8: Q8_0 tensors become their
        // int8 codes (the scales dropped: a type llama.cpp has no file type for).
        const auto [from, to] = retype_ == "bf16_to_f32"
                                    ? std::pair(ck::GgmlType::bf16, ck::GgmlType::f32)
                                    : std::pair(ck::GgmlType::q8_0, ck::GgmlType::i8);
        ck::ModelHeader out = in;
        retyped_.assign(in.tensors.size(), false);
        for (std::size_t i = 0; i < out.tensors.size(); ++i) {
            ck::TensorInfo& t = out.tensors[i];
            if (t.type != static_cast<std::uint32_t>(from)) continue;
            t.type = static_cast<std::uint32_t>(to);
            t.nbytes = *ck::tensor_bytes(t.type, t.ne);
            retyped_[i] = true;
        }
        return out;
    }

    // groups=pairs: tensors 0+1, 2+3, ... are computed together (through the default
    // apply_group); groups=overlap and groups=outside declare groups the host must refuse.
    std::vector<ck::TensorGroup> groups() const override {
        std::vector<ck::TensorGroup> groups;
        if (groups_ == "pairs")
            for (std::size_t i = 0; i + 1 < tensor_count_; i += 2) groups.push_back({i, i + 1});
        if (groups_ == "overlap") groups = {{0, 1}, {1, 2}};
        if (groups_ == "outside") groups = {{0, tensor_count_}};
        return groups;
    }

    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override {
#ifndef TESTKIT_CONCURRENT
        struct Entered {
            std::atomic<int>& count;
            explicit Entered(std::atomic<int>& c) : count(c) {
                if (++count != 1) {
                    --count;
                    throw ck::Error(
                        "testkit was called from two threads at once, but it does "
                        "not declare itself concurrent (a host bug)");
                }
            }
            ~Entered() { --count; }
        } entered(calls_in_progress_);
#endif
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
        if (index == remove_at_ && ::unlink(source_.c_str()) != 0)
            throw ck::Error("testkit could not remove its input", source_);
        if (index == replace_at_) {
            // A copy renamed over it: same bytes, another file (a re-download).
            std::error_code ec;
            std::filesystem::copy_file(source_, source_ + ".new", ec);
            if (ec || ::rename((source_ + ".new").c_str(), source_.c_str()) != 0)
                throw ck::Error("testkit could not replace its input", source_);
        }
        if (index == rewrite_at_) {
            // Its first byte written again, unchanged: same size, new modification time.
            const int fd = ::open(source_.c_str(), O_RDWR);
            char byte = 0;
            const bool done = fd >= 0 && ::pread(fd, &byte, 1, 0) == 1 && ::usleep(20000) == 0 &&
                              ::pwrite(fd, &byte, 1, 0) == 1;
            if (fd >= 0) ::close(fd);
            if (!done) throw ck::Error("testkit could not rewrite its input", source_);
        }
        if (retype_.empty() || !retyped_[index]) return upstream(index);
        const ck::TensorView in = upstream(index);
        const bool widen = retype_ == "bf16_to_f32";
        const std::size_t n = widen ? in.size() / 2 : in.size() / 34 * 32;
        ck::TensorAllocation out = ck::TensorView::allocate(widen ? n * 4 : n);
        for (std::size_t i = 0; i < n; ++i) {
            if (widen) {
                // A BF16 is an F32's high half: in tensor bytes (little-endian on every host),
                // two zero bytes, then the BF16's two.
                out.bytes[4 * i] = out.bytes[4 * i + 1] = std::byte{0};
                std::memcpy(out.bytes.data() + 4 * i + 2, in.data() + 2 * i, 2);
            } else {
                out.bytes[i] = in.bytes()[i / 32 * 34 + 2 + i % 32];
            }
        }
        return std::move(out.view);
    }

  private:
    std::uint64_t fail_at_;
    std::string fail_with_;
    std::uint64_t sleep_ms_;
    bool fail_in_plan_;
    std::uint64_t truncate_at_;
    std::uint64_t truncate_to_;
    std::uint64_t remove_at_;
    std::uint64_t replace_at_;
    std::uint64_t rewrite_at_;
    std::string source_;
    std::string report_;
    std::string groups_;
    std::string retype_;
    std::vector<bool> retyped_;
    std::size_t tensor_count_ = 0;
    ck::Context& context_;
    std::atomic<int> calls_in_progress_{0};
};

const ck_option_descriptor options[] = {
    {"fail_at", CK_STAGE_TRANSFORM, nullptr, nullptr, "throw while producing tensor N"},
    {"fail_with", CK_STAGE_TRANSFORM, "std", "std|ck|int", "what to throw"},
    {"sleep_ms", CK_STAGE_TRANSFORM, "0", nullptr, "sleep before each tensor"},
    {"fail_in_plan", CK_STAGE_TRANSFORM, "0", nullptr, "throw a std::logic_error from plan()"},
    {"truncate_at", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "truncate the input file before handing out tensor N"},
    {"truncate_to", CK_STAGE_TRANSFORM, "0", nullptr, "the size truncate_at leaves"},
    {"remove_input_at", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "remove the input file before handing out tensor N"},
    {"replace_input_at", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "rename a copy of the input over it before handing out tensor N"},
    {"rewrite_input_at", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "write the input's first byte again (same size, new mtime) before tensor N"},
    {"report", CK_STAGE_TRANSFORM, nullptr, "garbage|valid", "report a JSON value from plan()"},
    {"groups", CK_STAGE_TRANSFORM, nullptr, "pairs|overlap|outside",
     "declare tensor groups: 0+1, 2+3, ... (pairs) or invalid ones"},
    {"retype", CK_STAGE_TRANSFORM, nullptr, "bf16_to_f32|q8_0_to_i8",
     "change tensor types, leaving general.file_type as it was"},
};

#ifdef TESTKIT_CONCURRENT
const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"testkit_concurrent", "0.0.1", "test-only pass-through transform, declared concurrent"},
    options,
    {.create_transform = ck::transform_factory<Testkit>, .flags = CK_PLUGIN_FLAG_CONCURRENT});
#else
const ck_plugin_descriptor descriptor =
    ck::describe_plugin({"testkit", "0.0.1", "test-only pass-through transform"}, options,
                        {.create_transform = ck::transform_factory<Testkit>});
#endif

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
