// What the GGUF-lite writer reports: the size table (bytes by dtype, header + descriptors +
// metadata overhead, total, ratio against the F32 size of the same tensors), the fallbacks,
// and the round-trip check, as JSON for the --json report and as text tables.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "round_trip_check.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::gguflite {
using namespace ck;

struct SizeTable {
    std::uint64_t tensors[dtype_count] = {};
    std::uint64_t bytes[dtype_count] = {};
    std::uint64_t header = header_bytes;
    std::uint64_t metadata = 0;
    std::uint64_t descriptors = 0;
    std::uint64_t f32_bytes = 0;  // the same tensors stored as F32

    std::uint64_t overhead() const { return header + metadata + descriptors; }
    std::uint64_t total() const;
    double ratio() const;  // f32_bytes / total()
};

SizeTable size_table(const std::vector<TensorPlan>& plans, std::uint64_t metadata_bytes,
                     std::uint64_t descriptor_bytes);

std::string sizes_json(const SizeTable& sizes);
std::string fallbacks_json(const std::vector<TensorPlan>& plans);
std::string round_trip_json(const RoundTripCheck& check);

// The human form: per-tensor round trip, then the size table.
void print_report(std::ostream& out, const std::string& file, const std::vector<TensorPlan>& plans,
                  const SizeTable& sizes, const RoundTripCheck& check);

}  // namespace ckplugin::gguflite
