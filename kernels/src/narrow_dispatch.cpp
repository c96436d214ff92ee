// The scalar narrowing reference and the choice of a narrowing table by ISA. Compiled for the
// baseline ISA: the SIMD tables are only built (and their code reached) after the CPU check.
#include <algorithm>

#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/support/little_endian.hpp"
#include "narrow_simd.hpp"
#include "table_choice.hpp"

namespace ck::kernels {
namespace {

template <std::uint16_t (*Round)(float)>
void narrow_each(const float* in, std::uint16_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) ck::le::store(out + i, Round(in[i]));
}

}  // namespace

void scalar_narrow_to_f16(const float* in, std::uint16_t* out, std::size_t n) {
    narrow_each<f32_to_f16_numpy>(in, out, n);
}

void scalar_narrow_to_bf16(const float* in, std::uint16_t* out, std::size_t n) {
    narrow_each<f32_to_bf16>(in, out, n);
}

const NarrowTable& scalar_narrow_table() {
    static const NarrowTable table{Isa::scalar, scalar_narrow_to_f16, scalar_narrow_to_bf16};
    return table;
}

const NarrowTable& narrow_table(Isa isa) {
#ifdef CKHOST_ARM_NEON
    return table_for_isa<NarrowTable, nullptr, nullptr, scalar_narrow_table,
                         own_narrow_kernels<Isa::neon>>(isa);
#else
    return table_for_isa<NarrowTable, own_narrow_kernels<Isa::avx512>,
                         own_narrow_kernels<Isa::avx2>, scalar_narrow_table>(isa);
#endif
}

const NarrowTable& select_narrow_table(Isa limit) {
    return best_table(narrow_table, limit);
}

const NarrowTable& plugin_narrow_table() {
    return plugin_table<NarrowTable, narrow_table>();
}

void dequantize_and_narrow(DequantFn dequant, NarrowFn narrow, const TypeInfo& type,
                           const std::byte* blocks, std::uint16_t* out, std::size_t n) {
    static_assert(narrow_scratch_elements % 256 == 0, "whole blocks of every ggml type");
    alignas(64) float scratch[narrow_scratch_elements];
    for (std::size_t done = 0; done < n; done += narrow_scratch_elements) {
        const std::size_t m = std::min(narrow_scratch_elements, n - done);
        dequant(blocks + done / type.block_size * type.block_bytes, scratch, m);
        narrow(scratch, out + done, m);
    }
}

}  // namespace ck::kernels
