// The parts of a Pipeline that its source files share (pipeline.cpp builds the stages,
// planner.cpp plans them, runner.cpp streams, plan_report.cpp describes the plan, convert.cpp
// runs a whole conversion); not for use outside pipeline/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ck/parallel.hpp"
#include "ck/stage.hpp"
#include "pipeline/pipeline.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost {

struct Pipeline::Stage {
    const PluginEntry* plugin = nullptr;
    StageSpec spec;
    std::uint32_t kind = 0;
    std::unique_ptr<ck::Reader> reader;
    std::unique_ptr<ck::Transform> transform;
    std::unique_ptr<ck::Writer> writer;
    // What a transform declared it computes together (Transform::groups), and for each tensor
    // of its header the group it belongs to (-1: none).
    std::vector<ck::TensorGroup> groups;
    std::vector<std::ptrdiff_t> group_of;
};

// A unit of the writer's work: one tensor, a row block of one, or a group the last transform
// computes at once.
struct Pipeline::Item {
    std::vector<std::size_t> members;   // final-header indices, in the group's order
    std::optional<ck::RowRange> rows;   // set: rows of members[0] (its only member)
    std::vector<ck::TensorView> views;  // members' bytes once computed; each dropped once written
    std::uint64_t cost = 0;             // planned bytes held while the item is in flight
    std::size_t written = 0;
    bool started = false;
    std::unique_ptr<ck::Task> task;  // computing ahead on the pool
};

// One writer call: tensor `index`, the `slot`th view of item `item`.
struct Pipeline::Step {
    std::size_t item;
    std::size_t index;
    std::size_t slot;
};

// "reader", "transform" or "writer".
inline const char* kind_word(std::uint32_t kind) {
    return kind == CK_STAGE_READER ? "reader" : kind == CK_STAGE_WRITER ? "writer" : "transform";
}

}  // namespace ckhost
