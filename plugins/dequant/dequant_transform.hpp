// The dequant transform (`dequant[to=f32|f16|bf16,only=GLOB,skip=GLOB]`), outside the plugin's
// descriptor so that tests drive it in process. plugin.cpp declares its options and exports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"

namespace ckplugin::dequant {

class Dequant final : public ck::Transform {
  public:
    Dequant(const ck::Options& options, ck::Context& context);
    ck::ModelHeader plan(const ck::ModelHeader& in) override;
    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override;
    // Elements convert independently: any run of rows.
    std::uint64_t row_granule(std::size_t index,
                              const ck::UpstreamGranule& upstream) const override {
        return upstream(index);
    }
    ck::TensorView apply_rows(std::size_t index, ck::RowRange rows,
                              const ck::UpstreamRows& upstream) override;

  private:
    struct Conversion {
        std::uint32_t from;
        std::uint32_t to;
        std::uint64_t elements;
        std::uint64_t row_length;
        std::string name;
    };

    // `elements` elements of `in` (the whole tensor, or a row block of it) as `c` says.
    ck::TensorView convert(const Conversion& c, const ck::TensorView& in,
                           std::uint64_t elements) const;

    ck::TensorFilter filter_;
    ck::Context& context_;
    std::uint32_t target_;
    std::vector<std::optional<Conversion>> conversions_;
};

}  // namespace ckplugin::dequant
