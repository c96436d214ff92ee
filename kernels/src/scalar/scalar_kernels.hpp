// The scalar reference kernels, one per ggml type (docs/formats/quantization.md has the block
// layouts). Internal to kernels/: plugins reach them through the tables in ck/kernels/dequant.hpp.
#pragma once

#include <cstddef>

namespace ck::kernels::scalar {

#define CK_DEQUANT(name) void dequant_##name(const std::byte* blocks, float* out, std::size_t n)

// Plain floats (dequant_basic.cpp)
CK_DEQUANT(f32);
CK_DEQUANT(f16);
CK_DEQUANT(bf16);
// 32-element blocks (dequant_basic.cpp)
CK_DEQUANT(q4_0);
CK_DEQUANT(q4_1);
CK_DEQUANT(q5_0);
CK_DEQUANT(q5_1);
CK_DEQUANT(q8_0);
CK_DEQUANT(iq4_nl);
CK_DEQUANT(mxfp4);
// Newer small-block types (dequant_basic.cpp)
CK_DEQUANT(nvfp4);
CK_DEQUANT(q1_0);
CK_DEQUANT(q2_0);
// 256-element super-blocks (dequant_kquants.cpp)
CK_DEQUANT(q2_k);
CK_DEQUANT(q3_k);
CK_DEQUANT(q4_k);
CK_DEQUANT(q5_k);
CK_DEQUANT(q6_k);
CK_DEQUANT(iq4_xs);
CK_DEQUANT(tq1_0);
CK_DEQUANT(tq2_0);
// Grid-based i-quants (dequant_iq.cpp, tables in iq_grids.cpp)
CK_DEQUANT(iq2_xxs);
CK_DEQUANT(iq2_xs);
CK_DEQUANT(iq2_s);
CK_DEQUANT(iq3_xxs);
CK_DEQUANT(iq3_s);
CK_DEQUANT(iq1_s);
CK_DEQUANT(iq1_m);

#undef CK_DEQUANT

}  // namespace ck::kernels::scalar
