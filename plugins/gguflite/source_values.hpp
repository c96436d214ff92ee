// The writer's view of one upstream tensor: its values as f32, a range of elements at a time,
// so that no tensor is ever staged whole as f32. Dequantization uses the kernel table the
// plugin selected when it was loaded.
#pragma once

#include <atomic>

#include "ck/model.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

#include "ck/kernels/dequant.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// Values converted (or compared) per step, by the writer and its round-trip check alike: small
// enough to stay in cache, large enough to amortise the calls.
inline constexpr std::uint64_t chunk_elements = 1u << 16;

class SourceValues {
  public:
    // Converts one element at `p` to float, counting it in `inexact` when float cannot hold it.
    using ElementFn = float (*)(const std::byte* p, std::uint64_t& inexact);

    SourceValues(const TensorPlan& plan, std::span<const std::byte> bytes,
                 const kernels::DequantTable& table);

    // Elements per step that keep the source's blocks whole (a multiple of its block size).
    std::uint64_t block_size() const noexcept { return block_size_; }
    // Values [first, first + n); first and n are multiples of block_size() (or n ends the
    // tensor). Safe to call from several threads at once for different ranges.
    void read(std::uint64_t first, std::uint64_t n, float* out);
    // The source bytes that hold elements [first, first + n).
    std::span<const std::byte> bytes_of(std::uint64_t first, std::uint64_t n) const;
    // Integer / F64 values that F32 could not hold exactly (counted by read()).
    std::uint64_t inexact() const noexcept { return inexact_; }

  private:
    std::span<const std::byte> bytes_;
    kernels::DequantFn dequant_ = nullptr;  // float and quantized sources
    ElementFn convert_ = nullptr;           // integer and f64 sources, element by element
    std::uint64_t block_size_ = 1, block_bytes_ = 4;
    std::atomic<std::uint64_t> inexact_ = 0;
};

// Drops the pages of an upstream tensor the writer has finished with, so a multi-GB input
// does not stay resident while one big tensor streams through (through TensorView::release,
// which only touches a reader's read-only file mapping, never a transform's heap buffer).
class ConsumedPages {
  public:
    explicit ConsumedPages(const TensorView& tensor) : tensor_(tensor) {}
    // Releases the whole pages below `end` not released yet.
    void release_before(const std::byte* end) {
        const auto upto = static_cast<std::size_t>(end - tensor_.bytes().data());
        tensor_.release(done_, upto);
        done_ = upto;
    }

  private:
    const TensorView& tensor_;
    std::size_t done_ = 0;
};

}  // namespace ckplugin::gguflite
