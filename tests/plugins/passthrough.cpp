// A test-only transform that declares CK_PLUGIN_FLAG_CONCURRENT: it keeps no state at all (plan
// returns its input, apply returns the upstream view), so calls from several threads on
// different tensors are safe. Shows that `ckhost plugins` reports the flag.
#include "ck/plugin.hpp"
#include "ck/stage.hpp"

namespace {

class Passthrough final : public ck::Transform {
  public:
    ck::ModelHeader plan(const ck::ModelHeader& in) override { return in; }
    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override {
        return upstream(index);
    }
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"passthrough", "0.0.1", "test-only stateless pass-through transform, declared concurrent"},
    {.create_transform = ck::transform_factory<Passthrough>, .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
